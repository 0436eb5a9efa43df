// @ts-check
/**
 * The conversion's writes, each keyed (the session_recovery row by execution id, the continuation by its
 * id derived from Session and execution) or fenced by the claim (the settling Step.Interrupted, the
 * claim's removal), so a retry after a lost acknowledgement finds its own work and changes nothing.
 */
import { completed, openToolCalls } from "./claims.js";
import { assistantStep, continuationId } from "./ids.js";

/** The recovery worker converting (its Session, execution, database and publisher).
 * @typedef {import('./recovery.js').RecoveryWorker} Worker */

/** A session_recovery row of another Session already names the execution (forged or corrupt: ids are unique
 * everywhere). This Session's own row is an earlier attempt's keyed writes (a retry replayed them after its
 * lease expired): the conversion completes them, its inserts meeting their keys. @param {Worker} w */
export async function conflicts(w) {
  const scoped = w.cfg.has("cross-session-recovery-collision"); // the check scoped to this Session
  const any = w.cfg.has("conversion-conflicts-on-own-row"); // any Session's row, this one's too
  const where = scoped ? "AND session_id = ?" : any ? "" : "AND session_id <> ?";
  return (await w.db.get(`SELECT 1 AS x FROM session_recovery WHERE execution_id = ? ${where}`,
    any ? [w.execution] : [w.execution, w.session])) !== undefined;
}

/** The continuation id one attempt derives (minted per attempt under conversion-retry-mints-new-ids).
 * @param {Worker} w @param {number} attempt */
function generation(w, attempt) {
  return w.cfg.has("conversion-retry-mints-new-ids") ? attempt : 0;
}

/** Inside one transaction: finish cancellation-owned work, or convert recovering work.
 * @param {Worker} w @param {import('./types.js').ClaimRow} claim @param {boolean} cancellation */
export async function convertInTransaction(w, claim, cancellation) {
  if (!cancellation) return commit(w, generation(w, 0));
  const a = claim.assistant_id;
  const base = { session: w.session, writer: w.id };
  if (a !== null) {
    for (const call of await openToolCalls(w.db, a, w.cfg)) {
      await w.publisher.append({ ...base, kind: "ToolFailed", assistant: a, call });
    }
  }
  if (a !== null && !(await completed(w.db, a))) await w.publisher.append({ ...base, kind: "Interrupted", assistant: a });
  await w.db.run("DELETE FROM execution_claims WHERE session_id = ? AND execution_id = ? AND owner_id = ?",
    [w.session, w.execution, w.id]);
  await w.db.run("INSERT INTO cancelled_executions (execution_id, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
    [w.execution, w.session]);
}

/** The retry with the same ids: its own committed work found, nothing changes; else the keyed writes again.
 * @param {Worker} w */
export async function reconvertInTransaction(w) {
  const gen = generation(w, 1);
  const row = await w.db.get("SELECT 1 AS x FROM session_recovery WHERE execution_id = ? AND session_id = ?", [w.execution, w.session]);
  const cont = await w.inputs.get(continuationId(w.session, w.execution, gen));
  if (!(row && cont)) await commit(w, gen, true);
}

/** The conversion's keyed and fenced writes, with continuation generation `gen`; `replay`: the retry's, when
 * its first attempt did not commit. @param {Worker} w @param {number} gen @param {boolean} [replay] */
async function commit(w, gen, replay = false) {
  const c = await w.claims.get(w.session);
  const fenced = await w.claims.fenced(w.session, w.execution, w.id);
  const a = fenced && c ? c.assistant_id : null; // fenced: the claim row is there
  const base = { session: w.session, writer: w.id };
  // every open local tool call of the Step, each by its call index: recorded as failed, never re-run
  if (a !== null) {
    for (const call of await openToolCalls(w.db, a, w.cfg)) {
      if (w.cfg.has("recovery-reruns-unknown-tool")) {
        w.provider.runTool({ session: w.session, execution: w.execution, owner: w.id, node: w.id, step: assistantStep(a)[1], call });
        await w.publisher.append({ ...base, kind: "ToolSucceeded", assistant: a, call });
      } else {
        await w.publisher.append({ ...base, kind: "ToolFailed", assistant: a, call });
      }
    }
  }
  const settles = !w.cfg.has("conversion-leaves-assistant-open") && !(replay && w.cfg.has("reconvert-replay-leaves-assistant-open"));
  if (a !== null && !(await completed(w.db, a)) && settles) {
    await w.publisher.append({ ...base, kind: "Interrupted", assistant: a });
  }
  await w.db.run(`INSERT INTO session_recovery (execution_id, session_id, continuation_id) VALUES (?, ?, ?)
    ON CONFLICT DO NOTHING`, [w.execution, w.session, continuationId(w.session, w.execution, gen)]);
  await w.inputs.insertContinuation(w.session, w.execution, gen);
  if (fenced) {
    await w.db.run("DELETE FROM execution_claims WHERE session_id = ? AND execution_id = ? AND owner_id = ?",
      [w.session, w.execution, w.id]);
  }
}

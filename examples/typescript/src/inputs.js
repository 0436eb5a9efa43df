// @ts-check
/**
 * Inputs: prompts (admitted held or pending) and recovery's continuations; ordinary selection, the exact
 * retry with its deterministic PromptExecutionRequested, explicit resume, and steer selection.
 */
import { contentDigest, continuationId, forgedContinuationId, promptId, recoveryPromptDigest, requestId } from "./ids.js";

/** @typedef {import('./types.js').InputRecord} InputRecord @typedef {import('./types.js').InputRow} InputRow
 *  @typedef {import('./types.js').InputState} InputState */

/** @typedef {import('./types.js').ContinuationFlaw} ContinuationFlaw */
/** The defect that omits each check of the promotion's validation. @type {Record<ContinuationFlaw, import('./types.js').Defect>} */
const FLAW_DEFECT = {
  id: "promotion-ignores-id", session: "promotion-ignores-session", delivery: "promotion-ignores-delivery",
  prompt: "promotion-ignores-prompt", assistant: "promotion-ignores-assistant", newest: "promotion-ignores-newest",
  synthetic: "promotion-ignores-synthetic",
};

/** The checks of the promotion's validation (the reviewed input.ts 321-397) a continuation row fails, in the
 * order it asks them (spec/names.py CONTINUATION_FLAWS): its id derived from Session and execution, its own
 * Session's execution, queue delivery, the exact recovery prompt, its assistant the recovered execution's and
 * that execution's newest started one, synthetic. @param {InputRow} row @param {string | undefined} newest
 * @returns {ContinuationFlaw[]} */
export function continuationFlaws(row, newest) {
  /** @type {Record<ContinuationFlaw, boolean>} */
  const failed = {
    id: row.input_id !== continuationId(row.session_id, row.src, row.gen),
    session: row.origin_session !== row.session_id,
    delivery: row.delivery !== "queue",
    prompt: row.content_digest !== recoveryPromptDigest(row.session_id, row.src),
    assistant: row.assistant_execution !== row.src,
    newest: (row.assistant_id ?? undefined) !== newest,
    synthetic: Number(row.synthetic) !== 1,
  };
  return /** @type {ContinuationFlaw[]} */ (Object.keys(failed)).filter((f) => failed[/** @type {ContinuationFlaw} */ (f)]);
}

export class Inputs {
  /** @param {import('./types.js').Database} db @param {import('./config.js').Settings} cfg
   *  @param {import('./publisher.js').Publisher} publisher */
  constructor(db, cfg, publisher) {
    this.db = db;
    this.cfg = cfg;
    this.publisher = publisher;
  }

  /** The id of an input record as the caller names it. */
  idOf(/** @type {InputRecord} */ i) {
    if (i.kind === "cont" && i.flaw === "id") return forgedContinuationId(i.sess, i.src); // not derived
    return i.kind === "prompt" ? promptId(i.sess, i.src) : continuationId(i.sess, i.src, i.gen ?? 0);
  }

  /** @param {string} id @returns {Promise<InputRow | undefined>} */
  async get(id) {
    return this.db.get("SELECT * FROM inputs WHERE input_id = ?", [id]);
  }

  /** @param {string} id @param {InputState} state */
  async setState(id, state) {
    await this.db.run("UPDATE inputs SET state = ? WHERE input_id = ?", [state, id]);
  }

  /** Admit prompt k of a Session: held (its execution not yet requested) or pending.
   * @param {string} session @param {number} k @param {"held" | "pending"} state */
  async insertPrompt(session, k, state) {
    const delivery = this.cfg.steerPrompts.has(k) ? "steer" : "queue"; // the caller's choice
    await this.db.run("INSERT INTO inputs (input_id, session_id, kind, src, gen, delivery, state) VALUES (?, ?, 'prompt', ?, 0, ?, ?)",
      [promptId(session, k), session, k, delivery, state]);
  }

  /** Recovery's continuation, queue delivery, with its envelope: its Session, the exact recovery prompt's digest, the
   * execution's newest started assistant (or none) and that assistant's execution, synthetic.
   * @param {string} session @param {number} execution @param {number} gen */
  async insertContinuation(session, execution, gen) {
    await this.db.run(`INSERT INTO inputs (input_id, session_id, kind, src, gen, state, origin_session, content_digest,
      assistant_id, assistant_execution, synthetic) VALUES (?, ?, 'cont', ?, ?, 'pending', ?, ?, ?, ?, 1)
      ON CONFLICT DO NOTHING`, [continuationId(session, execution, gen), session, execution, gen, session,
      recoveryPromptDigest(session, execution), (await this.newestAssistant(session, execution)) ?? null, execution]);
  }

  /** The newest assistant the execution started (its latest Step.Started), or undefined.
   * @param {string} session @param {number} execution @returns {Promise<string | undefined>} */
  async newestAssistant(session, execution) {
    /** @type {{assistant_id: string} | undefined} */
    const row = await this.db.get(`SELECT e.assistant_id AS assistant_id FROM events e JOIN assistants a
      ON a.assistant_id = e.assistant_id WHERE e.session_id = ? AND e.kind = 'Started' AND a.execution_id = ?
      ORDER BY e.seq DESC LIMIT 1`, [session, execution]);
    return row?.assistant_id;
  }

  /** The promotion's validation of a continuation row (decision 28): the first check it fails whose defect
   * switch (promotion-ignores-<flaw>) is off, or undefined. @param {InputRow} row */
  async refusedFlaw(row) {
    const flaws = continuationFlaws(row, await this.newestAssistant(row.session_id, row.src));
    return flaws.find((f) => !this.cfg.has(FLAW_DEFECT[f]));
  }

  /** @param {string} session @returns {Promise<InputRow[]>} */
  async prompts(session) {
    return this.db.all("SELECT * FROM inputs WHERE session_id = ? AND kind = 'prompt' ORDER BY src", [session]);
  }

  /** A session_recovery row of this Session and execution owns the continuation.
   * @param {string} session @param {number} execution */
  async recoveryOwned(session, execution) {
    return (await this.db.get("SELECT 1 AS x FROM session_recovery WHERE execution_id = ? AND session_id = ?",
      [execution, session])) !== undefined;
  }

  /** The input the caller names, as it is now, if it is in the state the caller names. */
  async named(/** @type {InputRecord} */ i) {
    const row = await this.get(this.idOf(i));
    return row && row.state === i.state && row.session_id === i.sess ? row : undefined;
  }

  /** Ordinary (steer and queue) selection: pending, and never a recovery-owned continuation.
   * @param {InputRow} row */
  async selectable(row) {
    if (row.state !== "pending") return false;
    if (row.kind === "prompt") return true;
    return this.cfg.has("recovery-input-in-ordinary-queue") || !(await this.recoveryOwned(row.session_id, row.src));
  }

  /** With delivery kinds, the input of the Session ordinary selection takes before `row` (a steer input
   * before a queue input; within a kind the older prompt), if one waits. @param {InputRow} row */
  async waitingAhead(row) {
    if (!this.cfg.deliveryKinds) return undefined;
    /** @type {InputRow[]} */
    const rows = await this.db.all("SELECT * FROM inputs WHERE session_id = ? AND state = 'pending'", [row.session_id]);
    for (const j of rows) {
      if (j.input_id === row.input_id || !(await this.selectable(j))) continue;
      const kind = j.delivery === "steer" && row.delivery === "queue" && !this.cfg.has("queue-before-steer");
      const age = j.delivery === row.delivery && j.kind === "prompt" && row.kind === "prompt" && j.src < row.src
        && !this.cfg.has("selection-ignores-age");
      if (kind || age) return j;
    }
    return undefined;
  }

  /** Caller: admit the Session's next prompt, held. @param {string} session */
  async admit(session) {
    if (!this.cfg.admission) return false;
    const k = (await this.prompts(session)).length + 1;
    if (k > this.cfg.prompts) return false;
    await this.db.tx(() => this.insertPrompt(session, k, "held"));
    return true;
  }

  /** Caller: retry prompt i's admission exactly; one deterministic PromptExecutionRequested at most. */
  /** The exact retry by a caller naming `session`, of the input id it sends, with a content digest: the
   * identity check (an admitted input of that id, the Session's, a prompt, never a continuation, not taken
   * by recovery, the admitted content's digest), then its one PromptExecutionRequested. A refusal answers
   * its reason (names.RETRY_REFUSALS) as a string; an acceptance true.
   * @param {string} session @param {string} id @param {string} digest @returns {Promise<boolean | string>} */
  async exactRetry(session, id, digest) {
    if (!this.cfg.admission) return false;
    const row = await this.get(id);
    if (!row) return "unknown-input";
    if (row.session_id !== session) return "other-session";
    if (row.kind !== "prompt" && !this.cfg.has("exact-retry-arms-continuation")) return "continuation";
    if (row.state === "recovery") return "recovery-owned";
    const same = digest === contentDigest(id);
    if (!same && !this.cfg.has("exact-retry-ignores-content")) return "content-mismatch";
    const request = requestId(row.input_id);
    const twice = this.cfg.has("exact-retry-appends-twice");
    if (twice ? row.state === "pending" : await this.db.get("SELECT 1 AS x FROM events WHERE request_id = ?", [request])) {
      return false; // idempotent: the request is there already
    }
    await this.db.tx(async () => {
      await this.publisher.append({ session: row.session_id, kind: "PromptExecutionRequested", input: row.input_id,
        request, writer: same ? "" : digest });
      if (twice || row.state === "held") await this.setState(row.input_id, "pending");
    });
    return true;
  }

  /** Resume: durably request the Session's held prompts (the drain that follows is an Acquire).
   * @param {string} session */
  async requestHeld(session) {
    const held = (await this.prompts(session)).filter((r) => r.state === "held");
    if (!this.cfg.admission || held.length === 0) return false;
    await this.db.tx(async () => {
      for (const r of held) await this.setState(r.input_id, "pending");
    });
    return true;
  }

  /** @param {string} session */
  async oldestHeld(session) {
    return (await this.prompts(session)).find((r) => r.state === "held");
  }
}

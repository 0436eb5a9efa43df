// @ts-check
/**
 * Execution claims: insert-only acquisition, renewal and every fenced change (exact Session, execution,
 * owner and an unexpired lease), each one SQL statement whose row count is checked.
 */
import { FenceLost } from "./db.js";

/** @typedef {import('./types.js').ClaimRow} ClaimRow @typedef {import('./types.js').Database} Database
 *  @typedef {import('./types.js').Phase} Phase */

export class Claims {
  /** @param {Database} db @param {import('./clock.js').ManualClock} clock
   *  @param {import('./config.js').Settings} cfg */
  constructor(db, clock, cfg) {
    this.db = db;
    this.clock = clock;
    this.cfg = cfg;
  }

  /** @param {string} session @returns {Promise<ClaimRow | undefined>} */
  async get(session) {
    return this.db.get("SELECT * FROM execution_claims WHERE session_id = ?", [session]);
  }

  /** Ticks left on a claim's lease (0 or less: expired), floored where the grace ends. @param {ClaimRow} claim */
  ttl(claim) {
    return Math.max(-this.cfg.grace, claim.lease_expires_at - this.clock.now());
  }

  /** The claim is this exact one (execution, owner) under a live lease.
   * @param {string} session @param {number} execution @param {string} owner */
  async fenced(session, execution, owner) {
    const c = await this.get(session);
    return Boolean(c && c.execution_id === execution && c.owner_id === owner && this.ttl(c) > 0);
  }

  /** Supervision's check: the actor's claim is still its exact, live claim.
   * @param {string} session @param {number} execution @param {string} owner */
  async holds(session, execution, owner) {
    return this.fenced(session, execution, owner);
  }

  /** fenced, and still `running` (an ordinary runner update never moves a phase back).
   * @param {string} session @param {number} execution @param {string} owner */
  async runningFenced(session, execution, owner) {
    return (await this.fenced(session, execution, owner)) && (await this.get(session))?.phase === "running";
  }

  /** The execution ids issued so far. @returns {Promise<number>} */
  async issued() {
    /** @type {import('./types.js').SequenceRow | undefined} */
    const row = await this.db.get("SELECT value FROM id_sequence WHERE name = 'execution'");
    if (!row) throw new Error("id_sequence has no execution row"); // the schema inserts it
    return row.value;
  }

  /** The next execution id, or null when none is left. */
  async nextExecution() {
    const value = await this.issued();
    if (value >= this.cfg.maxExec) return null;
    await this.db.run("UPDATE id_sequence SET value = value + 1 WHERE name = 'execution'");
    return value + 1;
  }

  /** Insert-only acquisition (inside a transaction): the new claim's execution id, or null.
   * @param {string} session @param {string} owner */
  async insert(session, owner) {
    const old = await this.get(session);
    const overwrite = old && this.cfg.has("acquire-overwrites-expired") && this.ttl(old) <= 0;
    if (old && !overwrite) return null;
    const execution = await this.nextExecution();
    if (execution === null) return null;
    const expires = this.clock.now() + this.cfg.lease;
    if (overwrite) {
      await this.db.run(`UPDATE execution_claims SET execution_id = ?, owner_id = ?, lease_expires_at = ?, phase = 'running',
        assistant_id = NULL, recovery_error = NULL, recovery_attempts = 0 WHERE session_id = ?`,
      [execution, owner, expires, session]);
    } else {
      await this.db.run(`INSERT INTO execution_claims (session_id, execution_id, owner_id, lease_expires_at, phase)
        VALUES (?, ?, ?, ?, 'running')`, [session, execution, owner, expires]);
    }
    return execution;
  }

  /** Renew the exact claim's lease to now + lease; `live`: only while unexpired. Rows changed.
   * @param {string} session @param {number} execution @param {string} owner @param {{live?: boolean}} options */
  async renew(session, execution, owner, { live = true } = {}) {
    const now = this.clock.now();
    return this.db.run(`UPDATE execution_claims SET lease_expires_at = ? WHERE session_id = ? AND execution_id = ?
      AND owner_id = ? AND (lease_expires_at > ? OR ? = 1)`,
    [now + this.cfg.lease, session, execution, owner, now, live ? 0 : 1]);
  }

  /** A fenced change of the exact claim under a live lease (and, given, in phase `from`); FenceLost else.
   * @param {string} session @param {number} execution @param {string} owner @param {{phase: Phase}} set
   * @param {{from?: Phase | null}} options */
  async update(session, execution, owner, set, { from = null } = {}) {
    const cols = Object.entries(set);
    const changed = await this.db.run(`UPDATE execution_claims SET ${cols.map(([k]) => `${k} = ?`).join(", ")}
      WHERE session_id = ? AND execution_id = ? AND owner_id = ? AND lease_expires_at > ? AND (phase = ? OR ? = 1)`,
    [...cols.map(([, v]) => v), session, execution, owner, this.clock.now(), from ?? "", from ? 0 : 1]);
    if (changed !== 1) throw new FenceLost(`claim ${session}/${execution}/${owner}: fence lost`);
  }

  /** Remove the exact claim (fenced, in phase `phase`); FenceLost when it is not there so.
   * @param {string} session @param {number} execution @param {string} owner @param {Phase} phase */
  async remove(session, execution, owner, phase) {
    const changed = await this.db.run(`DELETE FROM execution_claims WHERE session_id = ? AND execution_id = ? AND owner_id = ?
      AND lease_expires_at > ? AND phase = ?`, [session, execution, owner, this.clock.now(), phase]);
    if (changed !== 1) throw new FenceLost(`claim ${session}/${execution}/${owner}: fence lost`);
  }

  /** Inside a transaction: the exact claim is still running under a live lease, or FenceLost.
   * @param {string} session @param {number} execution @param {string} owner @returns {Promise<void>} */
  async checkFence(session, execution, owner) {
    if (this.cfg.has("unfenced-step-publication")) return;
    if (!(await this.runningFenced(session, execution, owner))) throw new FenceLost(`claim ${session}/${execution}: fence lost`);
  }

  /** @returns {Promise<ClaimRow[]>} */
  async all() {
    return this.db.all("SELECT * FROM execution_claims ORDER BY execution_id");
  }
}

/** The assistant has a terminal event (Step.Failed, Step.Interrupted or Step.Ended).
 * @param {Database} db @param {string} assistant */
export async function completed(db, assistant) {
  return (await db.get("SELECT 1 AS x FROM events WHERE assistant_id = ? AND kind IN ('Failed', 'Interrupted', 'Ended')",
    [assistant])) !== undefined;
}

/** Assistant `a`'s Step's tool calls (local, and the hosted call its Step.Started names) whose start is
 * recorded and whose outcome is not, in index order:
 * a call is (Session, execution, Step, call index), so each outcome settles its own call. `cfg` names the
 * defects: tool-call-identified-by-step (an outcome of any call of the Step reads as every call's).
 * @param {Database} db @param {string} assistant @param {import("./config.js").Settings} cfg
 * @returns {Promise<number[]>} */
export async function openToolCalls(db, assistant, cfg) {
  const byStep = cfg.has("tool-call-identified-by-step");
  /** @type {Pick<import('./types.js').EventRow, "kind" | "tool_call">[]} */
  const rows = await db.all(
    "SELECT kind, tool_call FROM events WHERE assistant_id = ? AND (kind LIKE 'Tool%' OR (kind = 'Started' AND tool_call > 0))",
    [assistant]);
  // a Step.Started names its hosted call (reconciliation-skips-hosted-call: only a ToolStarted starts a call)
  const starts = new Set(cfg.has("reconciliation-skips-hosted-call") ? ["ToolStarted"] : ["ToolStarted", "Started"]);
  const settled = new Set(rows.filter((r) => !starts.has(r.kind)).map((r) => r.tool_call));
  if (byStep && settled.size > 0) return [];
  const started = [...new Set(rows.filter((r) => starts.has(r.kind)).map((r) => r.tool_call))].sort((x, y) => x - y);
  return started.filter((c) => !settled.has(c));
}

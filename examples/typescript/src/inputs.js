// @ts-check
/**
 * Inputs: prompts (admitted held or pending) and recovery's continuations; ordinary selection, the exact
 * retry with its deterministic PromptExecutionRequested, explicit resume, and steer selection.
 */
import { continuationId, promptId, requestId } from "./ids.js";

/** @typedef {{sess: string, kind: string, src: number, state: string, gen?: number}} InputRecord */

export class Inputs {
  /** @param {import('./db.js').Database} db @param {import('./config.js').Settings} cfg
   *  @param {import('./publisher.js').Publisher} publisher */
  constructor(db, cfg, publisher) {
    this.db = db;
    this.cfg = cfg;
    this.publisher = publisher;
  }

  /** The id of an input record as the caller names it. */
  idOf(/** @type {InputRecord} */ i) {
    return i.kind === "prompt" ? promptId(i.sess, i.src) : continuationId(i.sess, i.src, i.gen ?? 0);
  }

  get(id) {
    return this.db.get("SELECT * FROM inputs WHERE input_id = ?", [id]);
  }

  setState(id, state) {
    this.db.run("UPDATE inputs SET state = ? WHERE input_id = ?", [state, id]);
  }

  /** Admit prompt k of a Session: held (its execution not yet requested) or pending. */
  insertPrompt(session, k, state) {
    this.db.run("INSERT INTO inputs (input_id, session_id, kind, src, gen, state) VALUES (?, ?, 'prompt', ?, 0, ?)",
      [promptId(session, k), session, k, state]);
  }

  insertContinuation(session, execution, gen) {
    this.db.run("INSERT OR IGNORE INTO inputs (input_id, session_id, kind, src, gen, state) VALUES (?, ?, 'cont', ?, ?, 'pending')",
      [continuationId(session, execution, gen), session, execution, gen]);
  }

  prompts(session) {
    return this.db.all("SELECT * FROM inputs WHERE session_id = ? AND kind = 'prompt' ORDER BY src", [session]);
  }

  /** A session_recovery row of this Session and execution owns the continuation. */
  recoveryOwned(session, execution) {
    return this.db.get("SELECT 1 AS x FROM session_recovery WHERE execution_id = ? AND session_id = ?", [execution, session]) !== undefined;
  }

  /** The input the caller names, as it is now, if it is in the state the caller names. */
  named(/** @type {InputRecord} */ i) {
    const row = this.get(this.idOf(i));
    return row && row.state === i.state && row.session_id === i.sess ? row : undefined;
  }

  /** Ordinary (steer and queue) selection: pending, and never a recovery-owned continuation. */
  selectable(row) {
    if (row.state !== "pending") return false;
    if (row.kind === "prompt") return true;
    return this.cfg.has("recovery-input-in-ordinary-queue") || !this.recoveryOwned(row.session_id, row.src);
  }

  /** Caller: admit the Session's next prompt, held. */
  admit(session) {
    if (!this.cfg.admission) return false;
    const k = this.prompts(session).length + 1;
    if (k > this.cfg.prompts) return false;
    this.db.tx(() => this.insertPrompt(session, k, "held"));
    return true;
  }

  /** Caller: retry prompt i's admission exactly; one deterministic PromptExecutionRequested at most. */
  exactRetry(/** @type {InputRecord} */ i) {
    if (!this.cfg.admission || i.kind !== "prompt") return false;
    const row = this.get(promptId(i.sess, i.src));
    if (!row || row.state === "recovery") return false; // the identity check: an admitted prompt of that id
    const request = requestId(row.input_id);
    const twice = this.cfg.has("exact-retry-appends-twice");
    if (twice ? row.state === "pending" : this.db.get("SELECT 1 AS x FROM events WHERE request_id = ?", [request])) {
      return false; // idempotent: the request is there already
    }
    this.db.tx(() => {
      this.publisher.append({ session: row.session_id, kind: "PromptExecutionRequested", input: row.input_id,
        request, writer: "" });
      if (twice || row.state === "held") this.setState(row.input_id, "pending");
    });
    return true;
  }

  /** Resume: durably request the Session's held prompts (the drain that follows is an Acquire). */
  requestHeld(session) {
    const held = this.prompts(session).filter((r) => r.state === "held");
    if (!this.cfg.admission || held.length === 0) return false;
    this.db.tx(() => held.forEach((r) => this.setState(r.input_id, "pending")));
    return true;
  }

  oldestHeld(session) {
    return this.prompts(session).find((r) => r.state === "held");
  }
}

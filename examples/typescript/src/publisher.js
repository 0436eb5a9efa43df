// @ts-check
/**
 * The event publisher: an event is appended and projected in one transaction (projectors and the claim
 * fence run inside it), then the listeners run after the commit. Between the commit and the return of
 * `publish` sits the listener gate: the publishing actor's `hold()`, with the boundary fired first.
 */
import { FenceLost } from "./db.js";

/** @typedef {import('./types.js').NewEvent} NewEvent */
/**
 * What happens around a publish's commit: `project` runs inside its transaction, the rest after it.
 * @typedef {{project?: (event: NewEvent) => Promise<void>, boundary?: import('./types.js').Boundary | null,
 *   committed?: () => void, gate?: (() => Promise<void>) | null}} PublishSteps
 */

export class PublicationFailed extends Error {}

export class Publisher {
  /** @param {import('./types.js').Database} db @param {import('./failpoints.js').Failpoints} failpoints */
  constructor(db, failpoints) {
    this.db = db;
    this.failpoints = failpoints;
    /** @type {Array<(event: NewEvent) => unknown>} */
    this.listeners = [];
    this.failNext = false; // the environment's publication fault: the next transaction fails
  }

  /** @param {(event: NewEvent) => unknown} listener (awaited when it returns a promise) */
  subscribe(listener) {
    this.listeners.push(listener);
  }

  /**
   * Append `event` (session, kind, assistant, writer) with `project(event)` in one transaction; a
   * FenceLost from `project` rolls everything back and is returned as false. After the commit: fire
   * `boundary`, call `committed()`, hold at `gate` (an actor's gate), then run the listeners.
   * @param {NewEvent} event @param {PublishSteps} steps
   * @returns {Promise<boolean>} whether it committed
   */
  async publish(event, { project = async () => {}, boundary = null, committed = () => {}, gate = null } = {}) {
    if (this.failNext) {
      this.failNext = false;
      throw new PublicationFailed(`${event.kind}: the transaction failed`);
    }
    try {
      await this.db.tx(async () => {
        await project(event);
        await this.append(event);
      });
    } catch (err) {
      if (err instanceof FenceLost) return false;
      throw err;
    }
    if (boundary) this.failpoints.fire(boundary);
    committed();
    if (gate) await gate();
    for (const listener of this.listeners) await listener(event);
    return true;
  }

  /** The append itself (inside the caller's transaction). @param {NewEvent} event */
  async append(event) {
    const { session, kind, writer } = event;
    const assistant = event.kind === "PromptExecutionRequested" ? null : event.assistant;
    const [input, request] = event.kind === "PromptExecutionRequested" ? [event.input, event.request] : [null, null];
    const call = event.kind === "PromptExecutionRequested" ? 0 : event.call ?? 0;
    await this.db.run(`INSERT INTO events (session_id, kind, assistant_id, input_id, request_id, writer, tool_call)
      VALUES (?, ?, ?, ?, ?, ?, ?)`, [session, kind, assistant, input, request, writer, call]);
    if (event.kind === "Started") {
      await this.db.run(`INSERT INTO assistants (assistant_id, session_id, execution_id) VALUES (?, ?, ?)
        ON CONFLICT DO NOTHING`,
        [event.assistant, session, Number(event.assistant.split(":")[1])]);
    } else if (event.kind === "Failed" || event.kind === "Interrupted" || event.kind === "Ended") {
      await this.db.run("UPDATE assistants SET outcome = COALESCE(outcome, ?) WHERE assistant_id = ?", [kind, event.assistant]);
    }
  }
}

// @ts-check
/**
 * The deterministic gate every actor's async code path passes between two atomic units: `hold()` reports
 * the unit just done and waits until the scheduler moves the actor again. In production `hold` resolves at
 * once; under the driver it is where an actor sits at its next named boundary (the listener gate of a
 * publish, the gap after a commit).
 */
export class Gated {
  constructor() {
    /** @type {null | (() => void)} resumes the held code path */
    this.resume = null;
    /** @type {null | {resolve: (took: import('./types.js').ActionName | null) => void, reject: (err: unknown) => void}} */
    this.waiter = null;
    /** @type {import('./types.js').ActionName | null} the action the current unit took */
    this.took = null;
  }

  /** The scheduler's side: run the held code path to its next gate; the action it took, or null.
   * @returns {Promise<import('./types.js').ActionName | null>} */
  async move() {
    if (!this.resume) return null;
    const resume = this.resume;
    this.resume = null;
    /** @type {Promise<import('./types.js').ActionName | null>} */
    const done = new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
    resume();
    return done;
  }

  /** The actor's side: report the unit just done, then wait to be moved. @returns {Promise<void>} */
  hold() {
    const held = new Promise((resolve) => (this.resume = () => resolve(undefined)));
    this.report();
    return held;
  }

  /** The code path ended (or failed): report, and nothing is held any more. @param {unknown} err */
  report(err = undefined) {
    const waiter = this.waiter;
    const took = this.took;
    this.waiter = null;
    this.took = null;
    if (!waiter) {
      if (err) process.stderr.write(`an actor failed outside a move: ${err}\n`);
      return;
    }
    if (err) waiter.reject(err);
    else waiter.resolve(took);
  }

  /** Start an async code path, held at once at its first gate (the caller's unit already committed).
   * @param {() => Promise<unknown>} body */
  launch(body) {
    body().then(() => this.report(), (/** @type {unknown} */ err) => this.report(err));
  }

  /** A crash: the held code path is never resumed (its memory goes with the process). */
  abandon() {
    this.resume = null;
    this.waiter = null;
    this.took = null;
  }
}

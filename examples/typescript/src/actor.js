// @ts-check
/**
 * What every actor of this server shares (runner, finalizer, recovery worker): the gate its async code
 * path passes between two atomic units (`Gated`, src/gate.js), its memory released whole on a crash, the
 * one rule of when it works on an execution, and the wait of an actor that takes no step while another
 * works on that execution (a finalizer waits for its runner to stop, a stopped runner for its finalizer).
 * The pc names are the registry's, as the types of src/types.ts (`RunnerPc`, `FinalizerPc`, `RecoveryPc`).
 */
import { Gated } from "./gate.js";

/** @typedef {import('./types.js').RunnerPc | import('./types.js').FinalizerPc | import('./types.js').RecoveryPc} Pc */

export class Actor extends Gated {
  /** @type {Pc} */ pc = "idle";

  /** A crash, or a clear of this execution: the held code path is dropped with the memory. */
  reset() {
    this.abandon();
    this.release();
  }

  /** The memory, idle (each actor releases its own fields too). */
  release() {
    this.pc = "idle";
  }

  /** The actor works on its execution: it is neither idle nor a runner that only waits to release it. */
  get busy() {
    return this.pc !== "idle" && this.pc !== "stopped";
  }

  /** Held, taking no step (a move answers null), while `waiting()` holds. @param {() => boolean} waiting */
  async waitWhile(waiting) {
    while (waiting()) {
      this.took = null;
      await this.hold();
    }
  }
}

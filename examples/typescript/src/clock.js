// @ts-check
/** The server's clock in lease ticks: a manual clock the environment (the driver's Tick) moves. */
export class ManualClock {
  constructor() {
    this.t = 0;
  }
  now() {
    return this.t;
  }
  /** @param {number} ticks */
  advance(ticks = 1) {
    this.t += ticks;
  }
}

/** A real process's clock (the stress run, src/stress.js): ticks of `tickMs` milliseconds since a shared epoch
 * (milliseconds since the Unix epoch, the same for every process of the run). `read()` samples the wall clock,
 * never backwards in this process; `now()` returns the reading, so every lease decision of one atomic unit
 * sees one instant (the line's `now`). */
export class RealClock extends ManualClock {
  /** @param {number} epochMs @param {number} tickMs @param {() => number} wall milliseconds since the Unix epoch */
  constructor(epochMs, tickMs, wall = Date.now) {
    super();
    this.epochMs = epochMs;
    this.tickMs = tickMs;
    this.wall = wall;
    this.read();
  }

  read() {
    this.t = Math.max(this.t, Math.floor((this.wall() - this.epochMs) / this.tickMs));
    return this.t;
  }

  /** A real clock is not moved by hand. @override @param {number} _ticks */
  advance(_ticks = 1) {
    throw new Error("a real clock is not advanced by hand");
  }
}

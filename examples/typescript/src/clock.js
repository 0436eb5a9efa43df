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

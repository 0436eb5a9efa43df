// @ts-check
/**
 * Failpoints: the named boundaries of the registry, fired in the server's own code paths. A production
 * server leaves them as no-ops; a test records them (the driver reports them on `observe`).
 */
export class Failpoints {
  constructor() {
    /** @type {import('./types.js').Boundary[]} */
    this.fired = [];
  }
  /** @param {import('./types.js').Boundary} name a boundary of spec/names.py BOUNDARIES */
  fire(name) {
    this.fired.push(name);
  }
  /** The boundaries fired since the previous drain. */
  drain() {
    const out = this.fired;
    this.fired = [];
    return out;
  }
}

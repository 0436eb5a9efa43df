// @ts-check
/**
 * The server's settings, read from a claimcheck configuration object (a trace's `config`): the names of
 * its Sessions, nodes and recovery workers, lease and scan settings, and the defect switches it runs with.
 * @typedef {import('./types.js').TraceConfig} RawConfig
 * @typedef {import('./types.js').Defect} Defect
 */

export class Settings {
  /** @param {RawConfig} raw @param {readonly string[]} defects the defect switches the server runs with (a
   *  name the registry does not have switches nothing) */
  constructor(raw, defects) {
    this.sessions = raw.sessions;
    this.nodes = raw.nodes;
    this.recoverers = raw.recoverers;
    this.prompts = raw.prompts;
    this.maxExec = raw.max_exec;
    this.maxSteps = raw.max_steps ?? 1;
    this.tools = raw.tools ?? 0;
    // Hosted: each Step's provider call also runs one hosted tool, call index tools + 1 (0: none)
    this.hostedCall = raw.hosted ? this.tools + 1 : 0;
    this.fragments = raw.fragments ?? 0;
    this.lease = raw.lease;
    this.scanBound = raw.scan_bound;
    this.maxTries = raw.max_tries ?? 2;
    this.admission = Boolean(raw.admission);
    this.steering = Boolean(raw.steering);
    // delivery kinds (DeliveryKinds): the prompts SteerPrompts names are admitted steer, the rest queue
    this.deliveryKinds = Boolean(raw.delivery_kinds);
    /** @type {ReadonlySet<number>} */
    this.steerPrompts = new Set(raw.steer_prompts ?? []);
    this.wakeRows = raw.wake_rows ?? 0;
    this.wakeBatch = raw.wake_batch ?? 2;
    this.freshShare = raw.fresh_share ?? 1;
    this.maxWakeTries = raw.max_wake_tries ?? 2;
    this.wakers = raw.wakers ?? 1;
    // WakesTied: row 1 the one Session's ordinary wake, row 2 its recovery wake (wakes.js tied*)
    this.wakesTied = Boolean(raw.wakes_tied);
    // LeftClaims: the Sessions whose claims earlier processes left, in the order of `sessions` (world.js)
    const left = new Set(raw.left_claims ?? []);
    this.leftClaims = raw.sessions.filter((s) => left.has(s));
    const off = new Set(raw.assumptions_off ?? []);
    this.processLocalRouting = !off.has("ProcessLocalRouting");
    const grace = raw.grace ?? 1;
    const lag = raw.supervision_lag ?? 1;
    // clocks that disagree by more than the grace: the takeover waits one tick less than supervision
    this.grace = off.has("SynchronizedClocks") ? Math.min(grace, lag - 1) : grace;
    /** @type {ReadonlySet<string>} */
    this.defects = new Set(defects);
  }

  /** @param {Defect} name a registry defect */
  has(name) {
    return this.defects.has(name);
  }

  /** Fresh rows' share of a planned batch (the wake-share defects keep none, or all of it).
   * @param {number} batch */
  freshSlots(batch) {
    if (this.has("wake-fresh-share-zero")) return 0;
    if (this.has("wake-fresh-share-full")) return batch;
    return this.freshShare;
  }
}

// @ts-check
/**
 * A recovery worker (an owner id of its own): the bounded scan of expired, unquarantined claims, the
 * compare-and-swap takeover of the exact row it saw, then the conversion (one transaction: settle the
 * open assistant, one session_recovery row, the deterministic continuation, the claim cleared), the
 * completion of cancellation-owned work, or a checked quarantine of malformed work.
 */
import { Actor } from "./actor.js";
import { Claims } from "./claims.js";
import { Inputs } from "./inputs.js";
import { Publisher } from "./publisher.js";
import { heartbeatClaim } from "./node.js";
import { convertInTransaction, reconvertInTransaction, conflicts } from "./conversion.js";

/** @typedef {import('./types.js').ClaimRow} ClaimRow @typedef {import('./types.js').QuarantineReason} QuarantineReason */
/**
 * The worker's memory (the twin's `rec[r]`, src/mapping.js), and the unit it just took.
 * @typedef {{pc: import('./types.js').RecoveryPc, session: string, execution: number, seen: string,
 *   why: QuarantineReason | "", took: import('./types.js').ActionName | null}} RecoveryMemory
 */

export class RecoveryWorker extends Actor {
  // the memory, idle (release() puts it back)
  /** @override @type {RecoveryMemory["pc"]} */ pc = "idle";
  session = "";
  execution = 0;
  seen = ""; // the owner the scan saw
  /** @type {QuarantineReason | ""} */ why = "";

  /** @param {import('./world.js').World} world @param {string} id */
  constructor(world, id) {
    super();
    this.world = world;
    this.id = id;
    this.cfg = world.cfg;
    this.db = world.db;
    this.failpoints = world.failpoints;
    this.provider = world.provider;
    this.claims = new Claims(this.db, world.clock, this.cfg);
    this.publisher = new Publisher(this.db, this.failpoints);
    this.inputs = new Inputs(this.db, this.cfg, this.publisher);
    /** @type {false | "committed" | "not-committed"} the environment's `ack` fault: the next conversion's
     * acknowledgement is lost after COMMIT, or its COMMIT is */
    this.loseAck = false;
    this.reset();
  }

  /** @override */
  release() {
    this.set({ pc: "idle", session: "", execution: 0, seen: "", why: "" });
  }

  /** Part of the memory, changed at once. @param {Partial<RecoveryMemory>} memory */
  set(memory) {
    Object.assign(this, memory);
  }

  /** The oldest-first window of expired, unquarantined claims, planned like a wake batch. */
  async window() {
    const eligible = (await this.claims.all()).filter((c) => this.claims.ttl(c) <= -this.cfg.grace && c.recovery_error === null);
    // a window of one has no share to keep; scan-window-ignores-fresh-share keeps none (the oldest rows)
    if (this.cfg.scanBound === 1 || this.cfg.has("scan-window-ignores-fresh-share")) {
      return eligible.slice(0, this.cfg.scanBound);
    }
    const tries = (/** @type {ClaimRow} */ c) => Math.min(c.recovery_attempts, this.cfg.maxTries);
    const fresh = eligible.filter((c) => tries(c) === 0);
    const retried = eligible.filter((c) => tries(c) > 0);
    const again = retried.slice(0, this.cfg.scanBound - fresh.slice(0, this.cfg.freshSlots(this.cfg.wakeBatch)).length);
    return [...fresh.slice(0, this.cfg.scanBound - again.length), ...again];
  }

  /** The scan: remember the window's row for `session` (execution, former owner); false when not in it.
   * @param {string} session */
  async scan(session) {
    if (this.pc !== "idle") return false;
    const c = (await this.window()).find((x) => x.session_id === session);
    if (!c) return false;
    this.set({ pc: "scanned", session, execution: c.execution_id, seen: c.owner_id });
    this.failpoints.fire("recovery.scanned");
    this.launch(() => this.recover());
    return true;
  }

  async recover() {
    await this.hold();
    this.took = "RecoveryTakeover";
    if (!(await this.takeover())) return this.release();
    this.failpoints.fire("recovery.taken_over");
    await this.hold();
    this.took = "RecoveryReconcile";
    await this.reconcile();
    await this.hold();
    const loseAck = this.loseAck;
    this.loseAck = false;
    const got = await this.convert(loseAck);
    if (got === "done") return this.release();
    await this.hold();
    if (got === "reconvert") {
      this.took = "RecoveryReconvert";
      await this.db.tx(() => reconvertInTransaction(this));
      return this.release();
    }
    this.took = "RecoveryQuarantine";
    await this.quarantine();
    this.release();
  }

  /** The compare-and-swap on what the scan saw; a lost race changes nothing durable. */
  async takeover() {
    const trusts = this.cfg.has("takeover-trusts-scan");
    const now = this.world.clock.now();
    const c = await this.claims.get(this.session);
    if (!c || c.execution_id !== this.execution || c.recovery_error !== null) return false;
    if (!trusts && (c.owner_id !== this.seen || this.claims.ttl(c) > -this.cfg.grace)) return false;
    if (this.cfg.has("scan-quarantines-cancellation") && ["cancelling", "cancelled"].includes(c.phase)) {
      await this.db.run("UPDATE execution_claims SET recovery_error = ? WHERE session_id = ?", ["invalid: cancellation-owned", this.session]);
      return false;
    }
    const phase = c.phase === "running" || this.cfg.has("takeover-overwrites-phase") ? "recovering" : c.phase;
    const changed = await this.db.tx(() => this.db.run(`UPDATE execution_claims SET owner_id = ?, lease_expires_at = ?,
      phase = ?, recovery_attempts = ? WHERE session_id = ? AND execution_id = ? AND recovery_error IS NULL
      ${trusts ? "" : "AND owner_id = ? AND lease_expires_at <= ?"}`,
    [this.id, now + this.cfg.lease, phase, Math.min(c.recovery_attempts + 1, this.cfg.maxTries), this.session, this.execution,
      ...(trusts ? [] : [this.seen, now - this.cfg.grace])]));
    if (changed !== 1) return false;
    this.set({ pc: "converting", seen: "" });
    return true;
  }

  /** RecoveryReconcile: under its own exact, live claim (the check, a read) the execution's hosted tools
   * are reconciled, an external effect before any transaction (this example has no hosted tools: the step
   * is the check and the span it opens); a worker whose lease is gone begins nothing and leaves the lost
   * lease to its conversion. @returns {Promise<boolean>} */
  async reconcile() {
    const held = await this.claims.fenced(this.session, this.execution, this.id);
    this.set({ pc: "reconciled" });
    this.failpoints.fire("recovery.reconciling");
    return held;
  }

  /** RecoveryConvert (or, the ack lost, RecoveryConvertAckLost; the COMMIT lost, RecoveryConvertFails):
   * "done", "quarantine" or "reconvert". `loseAck`: false, "committed" (the transaction commits, its
   * acknowledgement is lost) or "not-committed" (the connection is lost before COMMIT: nothing commits).
   * @param {false | "committed" | "not-committed"} loseAck @returns {Promise<"done" | "quarantine" | "reconvert">} */
  async convert(loseAck) {
    const c = await this.claims.get(this.session);
    this.took = "RecoveryConvert";
    if (!c || !(await this.claims.fenced(this.session, this.execution, this.id))) {
      const mine = c && c.execution_id === this.execution && c.owner_id === this.id && c.recovery_error === null;
      if (mine && (c.recovery_attempts < this.cfg.maxTries || this.cfg.has("recovery-retries-unbounded"))) return "done";
      return this.failed("exhausted");
    }
    const cancellation = ["cancelling", "cancelled"].includes(c.phase) && !this.cfg.has("cancellation-quarantine-strands");
    const conflict = !cancellation && (await conflicts(this));
    if (!cancellation && (!["recovering", "unknown"].includes(c.phase) || conflict)) {
      return this.failed(conflict ? "malformed" : "invalid");
    }
    const lost = loseAck && !cancellation;
    // the COMMIT lost: the transaction rolls back whole, as if it never ran
    if (!(lost && loseAck === "not-committed")) await this.db.tx(() => convertInTransaction(this, c, cancellation));
    if (lost) {
      this.set({ pc: "reconverting", took: loseAck === "not-committed" ? "RecoveryConvertFails" : "RecoveryConvertAckLost" });
      if (loseAck === "committed") this.failpoints.fire("recovery.converted");
      return "reconvert";
    }
    return "done";
  }

  /** @param {QuarantineReason} why @returns {"quarantine"} */
  failed(why) {
    this.set({ pc: "quarantining", why });
    this.failpoints.fire("recovery.convert_failed");
    return "quarantine";
  }

  /** Mark the exact claim this worker owns quarantined; the update must change exactly one row. */
  async quarantine() {
    const silent = this.cfg.has("silent-quarantine-noop");
    const now = this.world.clock.now();
    await this.db.tx(() => this.db.run(`UPDATE execution_claims SET recovery_error = ? WHERE session_id = ? AND execution_id = ?
      AND owner_id = ? AND recovery_error IS NULL AND (lease_expires_at > ? OR ? = 0)`,
    [`${this.why}: conversion failed`, this.session, this.execution, this.id, now, silent ? 1 : 0]));
  }

  /** @param {string} session */
  async heartbeat(session) {
    const c = await this.claims.get(session);
    if (!c || c.owner_id !== this.id || !["converting", "reconciled"].includes(this.pc) || this.session !== session || this.execution !== c.execution_id) {
      return false;
    }
    return heartbeatClaim(this.claims, c, this.cfg, this.cfg.has("heartbeat-extends-lease"));
  }

  crash() {
    if (this.pc === "idle") return false;
    this.reset();
    return true;
  }
}

// @ts-check
/**
 * A server process: its runner and finalizer, its event publisher, and the entry points a request
 * reaches (acquire a pending input, promote recovery's continuation, interrupt, heartbeat, resume,
 * steer) plus its supervisor, which stops an actor whose claim is no longer its exact, live claim.
 */
import { Claims } from "./claims.js";
import { FenceLost } from "./db.js";
import { Finalizer } from "./finalizer.js";
import { Inputs } from "./inputs.js";
import { Publisher } from "./publisher.js";
import { Runner, Settling } from "./runner.js";

/** @typedef {import('./types.js').InputRecord} InputRecord @typedef {import('./types.js').InputRow} InputRow
 *  @typedef {import('./types.js').ClaimRow} ClaimRow */

/** A wake's redrive whose row holds no reservation: its take rolls back. */
class NotServed extends Error {}

export class Node {
  /** @param {import('./world.js').World} world @param {string} id */
  constructor(world, id) {
    this.world = world;
    this.id = id;
    this.cfg = world.cfg;
    this.db = world.db;
    this.clock = world.clock;
    this.provider = world.provider;
    this.failpoints = world.failpoints;
    this.claims = new Claims(this.db, this.clock, this.cfg);
    this.publisher = new Publisher(this.db, this.failpoints);
    this.inputs = new Inputs(this.db, this.cfg, this.publisher);
    // each actor receives what it uses, never the node; they share Settling (the finalizer's execution)
    const stores = { id, cfg: this.cfg, db: this.db, claims: this.claims, publisher: this.publisher,
      provider: this.provider, failpoints: this.failpoints };
    const settling = new Settling();
    this.runner = new Runner(stores, settling);
    this.finalizer = new Finalizer({ ...stores, inputs: this.inputs }, this.runner, settling);
  }

  /** Ordinary selection took input `i` (a pending prompt, or a continuation no recovery row owns); through
   * a woken ordinary wake (`wake`, its row's item: WakeAcquire) the row goes in the same transaction.
   * @param {InputRecord} i @param {string} [wake] */
  async acquire(i, wake) {
    const row = await this.inputs.named(i);
    if (!row) return false;
    // the defect wake-serves-regardless: a woken ordinary wake takes any pending input of its Session
    const ok = wake !== undefined && this.cfg.has("wake-serves-regardless") ? row.state === "pending"
      : (await this.inputs.selectable(row)) && !(await this.inputs.waitingAhead(row));
    return ok && this.take(row, "ordinary", wake);
  }

  /** Recovery's continuation, promoted exactly: only one its own session_recovery row owns.
   * Through a woken recovery wake (`wake`: WakePromote) its row goes in the same transaction.
   * @param {InputRecord} i @param {string} [wake] */
  async promote(i, wake) {
    const row = await this.inputs.named(i);
    if (!row || row.state !== "pending" || row.kind !== "cont") return false;
    let owned = await this.inputs.recoveryOwned(row.session_id, row.src);
    if (this.cfg.has("recovery-input-excluded-everywhere")) owned = !owned;
    if (!owned) return false;
    return (await this.inputs.refusedFlaw(row)) === undefined ? this.take(row, "recovery", wake) : this.refuse(row, wake);
  }

  /** A flawed continuation row (forged or corrupt) is refused and set aside, quarantined, in one transaction,
   * under the promotion's own conditions (an idle runner, the Session free, an execution id left; decision 28).
   * @param {InputRow} row @param {string} [wake] a woken wake row's item, removed in this transaction */
  async refuse(row, wake) {
    if (this.runner.pc !== "idle") return false;
    try {
      return await this.db.tx(async () => {
        if ((await this.claims.get(row.session_id)) || (await this.claims.issued()) >= this.cfg.maxExec) return false;
        await this.inputs.setState(row.input_id, "quarantined");
        if (wake !== undefined && (await this.db.run("DELETE FROM wake_rows WHERE item = ? AND reserved != ''", [wake])) !== 1)
          throw new NotServed();
        return true;
      });
    } catch (err) {
      if (err instanceof NotServed) return false;
      throw err;
    }
  }

  /** Insert the claim for the input's Session (insert-only) and start the runner on it.
   * @param {InputRow} row @param {"ordinary" | "recovery"} as the input's state once taken
   * @param {string} [wake] a woken wake row's item, removed in this transaction (none: a standalone take) */
  async take(row, as, wake) {
    if (this.runner.pc !== "idle") return false;
    /** @type {number | null} */
    let execution;
    try {
      execution = await this.db.tx(async () => {
        const e = await this.claims.insert(row.session_id, this.id);
        if (e === null) return null;
        await this.inputs.setState(row.input_id, as);
        if (wake !== undefined && (await this.db.run("DELETE FROM wake_rows WHERE item = ? AND reserved != ''", [wake])) !== 1)
          throw new NotServed();
        return e;
      });
    } catch (err) {
      if (err instanceof NotServed) return false; // the row holds no reservation: nothing of the take survives
      throw err;
    }
    if (execution === null) return false;
    this.failpoints.fire("acquire.committed");
    this.runner.begin(row.session_id, execution);
    return true;
  }

  /** @param {string} session */
  cancel(session) {
    return this.finalizer.cancel(session);
  }

  /** Renew the lease of a claim one of this node's actors works on (fenced; only a partly used lease).
   * @param {string} session */
  async heartbeat(session) {
    const c = await this.claims.get(session);
    const extends_ = this.cfg.has("heartbeat-extends-lease");
    if (!c || c.owner_id !== this.id || !this.worksOn(c.execution_id)) return false;
    return heartbeatClaim(this.claims, c, this.cfg, extends_);
  }

  /** One of this node's actors works on the execution (so its heartbeat keeps that lease). @param {number} execution */
  worksOn(execution) {
    return this.runner.worksOn(execution) || this.finalizer.holds(execution);
  }

  /** The supervisor's pass: stop the runner or finalizer whose claim was lost; "Supervise" or null. */
  async supervise() {
    const r = this.runner;
    const f = this.finalizer;
    const stopRun = r.busy && !(await this.claims.holds(r.session, r.execution, this.id));
    const stopFin = f.busy && !this.cfg.has("unsupervised-cancel-heartbeat")
      && !(await this.claims.holds(f.session, f.execution, f.owner));
    if (!stopRun && !stopFin) return null;
    if (stopRun) r.pc = "stopped";
    if (stopFin) f.reset();
    return "Supervise";
  }

  /** Explicit resume: durably request the Session's held prompts before the drain (an Acquire).
   * @param {string} session */
  async resume(session) {
    if (this.cfg.has("resume-drains-without-request")) {
      const held = this.cfg.admission ? await this.inputs.oldestHeld(session) : undefined;
      return Boolean(held && (await this.take(held, "ordinary")));
    }
    const ok = await this.inputs.requestHeld(session);
    if (ok) this.failpoints.fire("resume.requested");
    return ok;
  }

  /** At a Step's start, steer a pending input of the runner's Session into its execution (fenced).
   * @param {InputRecord} i */
  async steer(i) {
    const r = this.runner;
    if (!this.cfg.steering || r.pc !== "acquired" || r.intr) return false;
    const row = await this.inputs.named(i);
    if (!row || row.session_id !== r.session || row.state !== "pending") return false;
    const owned = row.kind === "cont" && (await this.inputs.recoveryOwned(row.session_id, row.src));
    if (owned && !this.cfg.has("steer-selects-recovery-input")) return false;
    // with delivery kinds a steer takes steer inputs only, none waiting ahead of it
    if (this.cfg.deliveryKinds && row.delivery !== "steer" && !this.cfg.has("steer-takes-queued-input")) return false;
    if (await this.inputs.waitingAhead(row)) return false;
    if (!(await this.claims.runningFenced(r.session, r.execution, this.id))) return false;
    await this.db.tx(() => this.inputs.setState(row.input_id, "steered"));
    return true;
  }

  crash() {
    if (this.runner.pc === "idle" && this.finalizer.pc === "idle") return false;
    this.runner.reset();
    this.finalizer.reset();
    return true;
  }
}

/** The heartbeat's fenced renewal of a partly used lease: to now + lease (or, the defect, lease added).
 * @param {Claims} claims @param {ClaimRow} c @param {import('./config.js').Settings} cfg @param {boolean} extendsLease */
export async function heartbeatClaim(claims, c, cfg, extendsLease) {
  const ttl = claims.ttl(c);
  const live = ttl > 0 || cfg.has("renew-after-expiry");
  if (ttl >= cfg.lease || !live) return false;
  const expires = extendsLease ? claims.clock.now() + ttl + cfg.lease : claims.clock.now() + cfg.lease;
  try {
    await claims.db.tx(async () => {
      const changed = await claims.db.run(`UPDATE execution_claims SET lease_expires_at = ? WHERE session_id = ?
        AND execution_id = ? AND owner_id = ?`, [expires, c.session_id, c.execution_id, c.owner_id]);
      if (changed !== 1) throw new FenceLost("heartbeat: the claim changed");
    });
  } catch (err) {
    if (err instanceof FenceLost) return false;
    throw err;
  }
  return true;
}

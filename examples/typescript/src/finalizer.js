// @ts-check
/**
 * Cancellation: the interrupt (running -> cancelling, fenced) and the finalizer that settles the
 * interrupted execution on its node: it waits for its runner to stop, checks its own supervision and
 * reconciles tools (a span of its own, that can stall: FinalizerReconcile), then in one fenced
 * transaction (FinalizerSettle) reads the claimed execution's assistant from the database (never from publisher
 * memory), publishes at most one Step.Interrupted, moves the claim to cancelled and removes it. It
 * receives what it uses, never its node: the stores, the runner it waits for and settles after, and
 * `Settling`, where it tells that runner which execution it holds.
 */
import { Actor } from "./actor.js";
import { completed, openToolCalls } from "./claims.js";
import { FenceLost } from "./db.js";
import { assistantId } from "./ids.js";

export class Finalizer extends Actor {
  // the memory, idle (release() puts it back)
  /** @override @type {import('./types.js').FinalizerPc} */ pc = "idle";
  session = "";
  execution = 0;
  owner = "";

  /** @param {import('./runner.js').Stores & {inputs: import('./inputs.js').Inputs}} stores
   *  @param {import('./runner.js').Runner} runner @param {import('./runner.js').Settling} settling */
  constructor({ id, cfg, db, claims, publisher, provider, failpoints, inputs }, runner, settling) {
    super();
    this.id = id;
    this.cfg = cfg;
    this.db = db;
    this.claims = claims;
    this.publisher = publisher;
    this.provider = provider;
    this.failpoints = failpoints;
    this.inputs = inputs;
    this.runner = runner;
    this.settling = settling;
    this.reset();
  }

  /** @override */
  release() {
    this.pc = "idle";
    this.session = "";
    this.execution = 0;
    this.owner = "";
    this.settling.execution = 0;
  }

  /** The finalizer works on this execution (its runner waits for it to exit). @param {number} execution */
  holds(execution) {
    return this.settling.holds(execution);
  }

  /** The authenticated interrupt of Session `session` on this node; false when refused. @param {string} session */
  async cancel(session) {
    const { claims, db, runner, id } = this;
    const c = await claims.get(session);
    if (this.pc !== "idle" || !c || c.phase !== "running" || claims.ttl(c) <= 0) return false;
    if (this.cfg.processLocalRouting && c.owner_id !== id) return false;
    try {
      await db.tx(() => claims.update(session, c.execution_id, c.owner_id, { phase: "cancelling" }, { from: "running" }));
    } catch (err) {
      if (err instanceof FenceLost) return false;
      throw err;
    }
    if (c.owner_id === id && runner.worksOn(c.execution_id)) runner.intr = true;
    this.pc = "settle";
    this.session = session;
    this.execution = c.execution_id;
    this.owner = c.owner_id;
    this.settling.execution = c.execution_id;
    this.failpoints.fire("cancel.requested");
    this.launch(() => this.finalize());
    return true;
  }

  async finalize() {
    for (;;) {
      await this.hold();
      await this.waitWhile(() => this.runner.worksOn(this.execution)); // waits for its runner to stop
      this.took = "FinalizerReconcile";
      if (!(await this.reconcile())) return this.release();
      break;
    }
    for (;;) {
      await this.hold();
      this.took = "FinalizerSettle";
      const got = await this.settle();
      if (got === "stop") return this.release();
      if (got === "settled") break;
    }
    await this.hold();
    this.took = "FinalizerClear";
    await this.clear();
  }

  /** FinalizerReconcile: its own supervision check, then the tools' reconciliation (an external effect,
   * before any transaction); false when the check stopped it. @returns {Promise<boolean>} */
  async reconcile() {
    const { claims, provider, id } = this;
    if (!this.cfg.has("unsupervised-cancel-heartbeat") && !(await claims.holds(this.session, this.execution, this.owner))) {
      return false;
    }
    provider.reconcile({ session: this.session, execution: this.execution, owner: this.owner, node: id });
    this.pc = "reconciling";
    this.failpoints.fire("finalizer.reconciling");
    return true;
  }

  /** FinalizerSettle: "settled", "stop" (the fence failed: the claim is not its own, live and cancelling)
   * or "retry". @returns {Promise<"settled" | "stop" | "retry">} */
  async settle() {
    const { claims, db, publisher, runner } = this;
    const cfg = this.cfg;
    const c = await claims.get(this.session);
    if (!(await claims.fenced(this.session, this.execution, this.owner)) || c?.phase !== "cancelling") return "stop";
    const a = c.assistant_id;
    const mine = runner.execution === this.execution;
    const mem = mine ? runner.mem : null;
    const active = mine ? runner.active : false;
    const settle = cfg.has("cancel-interrupts-unstarted") && a === null ? assistantId(this.execution, 1)
      : cfg.has("cancel-trusts-previous-step-memory") && mem !== null ? mem : a;
    // the flush of publisher memory's open fragment: with no assistant in memory it has nothing durable and is
    // dropped; flush-without-assistant raises there for want of an assistant id, and the finalizer retries
    if (cfg.has("flush-without-assistant") && active && mem === null) return "retry";
    if (cfg.has("step-started-window") && a !== null && mem === null) {
      return "retry"; // it starts the assistant again, the cancelling phase rejects it: it retries later
    }
    // (an active runner has its memory set, so the duplicate's `mem === a` has a settled assistant too)
    const interrupt = settle !== null
      && ((cfg.has("step-failed-duplicate-interrupt") && active && mem === a) || !(await completed(db, settle)));
    await db.tx(async () => {
      const w = { session: this.session, writer: this.owner };
      // every open local tool call of the Step, each by its call index: recorded as failed, never re-run
      if (a !== null) {
        for (const call of await openToolCalls(db, a, cfg)) {
          await publisher.append({ ...w, kind: "ToolFailed", assistant: a, call });
        }
      }
      if (cfg.has("cancel-restarts-assistant") && a !== null && mem === null) {
        await publisher.append({ ...w, kind: "Started", assistant: a });
      }
      if (interrupt) await publisher.append({ ...w, kind: "Interrupted", assistant: settle });
      await claims.update(this.session, this.execution, this.owner, { phase: "cancelled" }, { from: "cancelling" });
    });
    this.pc = "clear";
    this.failpoints.fire("finalizer.settled");
    return "settled";
  }

  /** FinalizerClear: remove the exact cancelled claim; cancellation leaves no recovery state. */
  async clear() {
    const { claims, db, runner } = this;
    const c = await claims.get(this.session);
    if (!(await claims.fenced(this.session, this.execution, this.owner)) || c?.phase !== "cancelled") return this.release();
    await db.tx(async () => {
      await claims.remove(this.session, this.execution, this.owner, "cancelled");
      await db.run("INSERT INTO cancelled_executions (execution_id, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
        [this.execution, this.session]);
      if (this.cfg.has("cancel-requeues-continuation")) {
        await db.run("INSERT INTO session_recovery (execution_id, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
          [this.execution, this.session]);
        await this.inputs.insertContinuation(this.session, this.execution, 0);
      }
    });
    if (runner.execution === this.execution) runner.reset();
    this.release();
  }
}


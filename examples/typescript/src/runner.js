// @ts-check
/**
 * The runner: one execution's agent loop on a node, as async code. Each Step renews the claim, dispatches
 * the provider stream, publishes Step.Started (publisher memory follows once the publish returned), runs
 * the Step's local tool, and publishes Step.Failed or Step.Ended; after the last Step it clears its claim.
 * Between two atomic units it passes its gate (`Gated.hold`), and inside each publish the listener gate.
 * It receives what it uses, never its node (`Stores`), and `Settling`, all it reads of its node's finalizer.
 */
import { Actor } from "./actor.js";
import { assistantId } from "./ids.js";
import { PublicationFailed } from "./publisher.js";

/** @typedef {import('./types.js').ActionName} ActionName @typedef {import('./types.js').RunnerPc} RunnerPc */
/**
 * What a node's actors use (never the node): its id, settings, database, claims, publisher, the provider
 * and the failpoints.
 * @typedef {{id: string, cfg: import('./config.js').Settings, db: import('./types.js').Database,
 *   claims: import('./claims.js').Claims, publisher: import('./publisher.js').Publisher,
 *   provider: import('./provider.js').ScriptedProvider, failpoints: import('./failpoints.js').Failpoints}} Stores
 */
/**
 * The runner's memory (the twin's `run[n]`, src/mapping.js), and the unit it just took.
 * @typedef {{pc: RunnerPc, session: string, execution: number, mem: string | null, active: boolean,
 *   intr: boolean, ordinal: number, tool: number, took: ActionName | null}} RunnerMemory
 */

/** The runner stops: `took` is the unit that stopped it (null: stopped from outside, nothing taken yet). */
class Stopped {
  /** @param {ActionName | null} took */
  constructor(took) {
    this.took = took;
  }
}

/**
 * The execution this node's finalizer holds (0: none), the one fact of the finalizer its runner reads: a
 * stopped runner releases its memory only once the finalizer no longer holds its execution. The finalizer
 * writes it and knows its runner; the runner knows only this, so neither holds the other both ways.
 */
export class Settling {
  execution = 0;

  /** @param {number} execution */
  holds(execution) {
    return this.execution !== 0 && this.execution === execution;
  }
}

export class Runner extends Actor {
  // the memory, idle (release() puts it back)
  /** @override @type {RunnerPc} */ pc = "idle";
  session = "";
  execution = 0;
  /** @type {string | null} publisher memory: the last assistant id published */ mem = null;
  active = false;
  intr = false; // an interrupt was delivered
  ordinal = 0; // the current Step
  tool = 0; // the Step's tool calls whose Tool.Success was published

  /** @param {Stores} stores @param {Settling} settling */
  constructor({ id, cfg, db, claims, publisher, provider, failpoints }, settling) {
    super();
    this.id = id;
    this.cfg = cfg;
    this.db = db;
    this.claims = claims;
    this.publisher = publisher;
    this.provider = provider;
    this.failpoints = failpoints;
    this.settling = settling;
    this.reset();
  }

  /** The runner's memory released (from inside its own loop; a crash, or the finalizer's clear of this
   * execution, also drops the loop: reset()). @override */
  release() {
    this.pc = "idle";
    this.session = "";
    this.execution = 0;
    this.mem = null;
    this.active = false;
    this.intr = false;
    this.ordinal = 0;
    this.tool = 0;
  }

  /** Part of the memory, changed at once. @param {Partial<RunnerMemory>} memory */
  set(memory) {
    Object.assign(this, memory);
  }

  /** The claim was inserted for this execution (Acquire, PromoteContinuation): the loop starts, held.
   * @param {string} session @param {number} execution */
  begin(session, execution) {
    this.reset();
    this.set({ pc: "acquired", session, execution, ordinal: 1 });
    this.launch(() => this.run());
  }

  get assistant() {
    return assistantId(this.execution, this.ordinal);
  }

  /** Between two units: held until moved; then an interrupt or a stop from outside is noticed first. */
  async gate() {
    await this.hold();
    if (this.pc === "stopped") throw new Stopped(null);
    if (this.intr) {
      this.pc = "stopped";
      throw new Stopped("RunnerStop");
    }
  }

  /** Stop with `memory` set: the Stopped to throw. @param {ActionName} took @param {Partial<RunnerMemory>} memory */
  stop(took, memory = {}) {
    this.set({ ...memory, pc: "stopped" });
    return new Stopped(took);
  }

  /** The environment's hang (Residual R2): a listener of the Step event just committed never returns. The
   * runner stays held at its listener gate, hung: a move takes no step (the gate is never released) and no
   * interrupt is noticed, while it still works on its execution, so the heartbeat keeps the lease live and
   * a finalizer of it waits. Only a supervisor's stop (its claim no longer its exact, live claim) or a crash
   * ends it. @returns {ActionName | null} */
  hang() {
    const atGate = ["started", "failed", "ended"].includes(this.pc) || (this.pc === "done" && this.active);
    if (this.intr || !atGate) return null;
    this.pc = "hung";
    return "ListenerHangs";
  }

  /** A hung runner's gate is never released. @override */
  async move() {
    return this.pc === "hung" ? null : super.move();
  }

  /** The runner works on this execution (a finalizer of it waits for the runner to stop). @param {number} execution */
  worksOn(execution) {
    return this.busy && this.execution === execution;
  }

  async fence() {
    return this.claims.runningFenced(this.session, this.execution, this.id);
  }

  /** A publication's fence, read before its transaction. The environment's publication fault fails the
   * step's first database access, this read, whatever the lease: the model's Tool.Success publication
   * fails before its fence decides (an expired lease did hide the fault here, found on `toolpauses`). */
  async publishOk() {
    if (this.publisher.failNext) {
      this.publisher.failNext = false;
      throw new PublicationFailed("the transaction failed");
    }
    return this.cfg.has("unfenced-step-publication") || this.fence();
  }

  async run() {
    try {
      await this.gate();
      for (;;) {
        await this.renew();
        const stream = await this.dispatch();
        if (this.cfg.fragments > 0 && stream.opensFragment()) await this.openFragment();
        await this.publishStepStarted();
        if (this.pc === "hosted") await this.reconcileHosted();
        if (await this.stepBody(stream)) return;
      }
    } catch (err) {
      if (!(err instanceof Stopped)) throw err;
      await this.stopped(err.took);
    }
  }

  /** The renewal before the provider dispatch (fenced, its row count checked). */
  async renew() {
    const { claims, id } = this;
    const live = !this.cfg.has("renew-after-expiry");
    const renewed = (await this.db.tx(() => claims.renew(this.session, this.execution, id, { live }))) === 1;
    if (!renewed && !this.cfg.has("dispatch-after-failed-renewal")) throw this.stop("Renew");
    this.pc = "renewed";
    this.took = "Renew";
    if (renewed) this.failpoints.fire("renew.committed");
    await this.gate();
  }

  /** The provider call begins: the Step's stream (an external effect, no transaction). */
  async dispatch() {
    const id = this.id;
    const stream = this.provider.dispatch({ session: this.session, execution: this.execution, owner: id,
      node: id, step: this.ordinal });
    this.pc = "streaming";
    this.took = "Dispatch";
    this.failpoints.fire("provider.dispatched");
    await this.gate();
    return stream;
  }

  /** OpenFragment: the stream's first chunk is a partial fragment; publisher memory holds it open (active) and
   * names no assistant, since no Step.Started was published (in memory only). */
  async openFragment() {
    this.set({ active: true, took: "OpenFragment" });
    this.failpoints.fire("fragment.opened");
    await this.gate();
  }

  /** The stream's first chunk: Step.Started, fenced; memory follows only once the publish returned. */
  async publishStepStarted() {
    const a = this.assistant;
    const early = this.cfg.has("memory-before-publish") ? { mem: a, active: true } : {};
    if (!(await this.publishOrFail("StepStartedFails", early))) throw this.stop("PublishStepStarted", early);
    this.set(early);
    const { claims } = this;
    const call = this.cfg.hostedCall; // Step.Started names the Step's hosted call (0: none)
    await this.publisher.publish({ session: this.session, kind: "Started", assistant: a, writer: this.id, call }, {
      project: async () => {
        await claims.checkFence(this.session, this.execution, this.id);
        await this.db.run("UPDATE execution_claims SET assistant_id = ? WHERE session_id = ? AND execution_id = ?",
          [a, this.session, this.execution]);
      },
      boundary: "step_started.committed",
      committed: () => this.set({ pc: "started", took: "PublishStepStarted" }),
      gate: () => this.gate(),
    });
    // with a hosted tool the runner reconciles it next (the defect step-ended-before-hosted-tool: never)
    const hosted = call > 0 && !this.cfg.has("step-ended-before-hosted-tool");
    this.set({ pc: hosted ? "hosted" : "stepping", mem: a, active: true, took: "StepStartedReturn" });
    await this.gate();
  }

  /** The Step's hosted call (the provider ran it inside the dispatch): its outcome, Tool.Success with its
   * call index, one fenced transaction, before any local tool, Step.Ended or Step.Failed. */
  async reconcileHosted() {
    const { claims, id } = this;
    if (!(await this.publishOrFail("HostedReconcileFails"))) throw this.stop("HostedReconcile");
    await this.publisher.publish({ session: this.session, kind: "ToolSucceeded", assistant: this.assistant, writer: id,
      call: this.cfg.hostedCall }, { project: () => claims.checkFence(this.session, this.execution, id) });
    this.set({ pc: "stepping", took: "HostedReconcile" });
    await this.gate();
  }

  /** The rest of a Step; true when the execution is over (its claim cleared).
   * @param {{outcome: () => import('./provider.js').Outcome}} stream */
  async stepBody(stream) {
    while (stream.outcome() !== "fail" && this.tool < this.cfg.tools) await this.runTool();
    if (stream.outcome() === "fail") {
      await this.publishStepFailed();
      this.set({ pc: "done", active: false, took: "StepFailedReturn" });
      await this.gate();
      return this.clearClaim();
    }
    const last = this.ordinal >= this.cfg.maxSteps;
    await this.publishStepEnded(last);
    if (last) return this.clearClaim();
    this.set({ pc: "acquired", active: false, ordinal: this.ordinal + 1, tool: 0, took: "StepEndedReturn" });
    await this.gate();
    return false;
  }

  /** Step.Failed, fenced; its listener gate holds the runner, memory still active. */
  publishStepFailed() {
    return this.publishTerminal("Failed", "PublishStepFailed", "failed", "step_failed.committed");
  }

  /** Step.Ended, fenced; after the last Step the runner's return from its gate is its release.
   * @param {boolean} last */
  publishStepEnded(last) {
    return this.publishTerminal("Ended", "PublishStepEnded", last ? "done" : "ended", "step_ended.committed");
  }

  /** @param {"Failed" | "Ended"} kind @param {ActionName} action @param {RunnerPc} pc
   *  @param {import('./types.js').Boundary} boundary */
  async publishTerminal(kind, action, pc, boundary) {
    const ok = kind === "Ended" ? await this.publishOrFail("StepEndedFails") : await this.publishOk();
    if (!ok) throw this.stop(action);
    await this.publisher.publish({ session: this.session, kind, assistant: this.assistant, writer: this.id }, {
      project: () => this.claims.checkFence(this.session, this.execution, this.id),
      boundary,
      committed: () => this.set({ pc, took: action }),
      gate: () => this.gate(),
    });
  }

  /** The Step's next local tool call (its index: the calls whose Tool.Success was published, plus one; the
   * Step's calls run one after the other): the fenced start (renews, records ToolStarted), the run,
   * Tool.Success, each naming the call's index. */
  async runTool() {
    const { db, claims, id, publisher, provider, failpoints } = this;
    const call = this.tool + 1;
    if (!(await this.publishOk())) throw this.stop("ToolStart");
    await db.tx(async () => {
      if (await this.fence()) await claims.renew(this.session, this.execution, id);
      await publisher.append({ session: this.session, kind: "ToolStarted", assistant: this.assistant, writer: id, call });
    });
    this.set({ pc: "tool_started", took: "ToolStart" });
    failpoints.fire("tool.started");
    for (;;) {
      await this.gate();
      provider.runTool({ session: this.session, execution: this.execution, owner: id, node: id, step: this.ordinal, call });
      this.set({ pc: "tooling", took: "ToolRun" });
      failpoints.fire("tool.ran");
      await this.gate();
      const early = this.cfg.has("tool-settled-before-publication");
      if (early) this.tool += 1; // the settlement flag, set before the publication
      try {
        if (!(await this.publishOk())) throw this.stop("PublishToolSuccess");
        await publisher.publish({ session: this.session, kind: "ToolSucceeded", assistant: this.assistant, writer: id, call }, {
          project: () => claims.checkFence(this.session, this.execution, id),
        });
      } catch (err) {
        if (!(err instanceof PublicationFailed)) throw err;
        if (early) {
          this.set({ pc: "stepping", took: "ToolSuccessFails" });
          return this.gate();
        }
        if (await this.afterFailedPublication()) continue;
      }
      if (!early) this.tool += 1;
      this.set({ pc: "stepping", took: "PublishToolSuccess" });
      return this.gate();
    }
  }

  /** A Step event's publication fence, or its injected failure (`fault`: StepStartedFails, StepEndedFails):
   * nothing durable changed, publisher memory stays as `memory` left it, and the error path follows.
   * @param {ActionName} fault @param {Partial<RunnerMemory>} memory */
  async publishOrFail(fault, memory = {}) {
    try {
      return await this.publishOk();
    } catch (err) {
      if (!(err instanceof PublicationFailed)) throw err;
      this.set(memory);
      await this.afterFailedPublication(fault, "publish_failed");
      return false; // not reached: the error path stops the runner
    }
  }

  /** The error path of a failed publication (Tool.Success, Step.Started, Step.Ended): the claim goes
   * unknown (fenced) and the runner stops; true when it runs the tool again instead
   * (retry-tool-after-failed-publication, after a Tool.Success only).
   * @param {ActionName} fault @param {RunnerPc} pc */
  async afterFailedPublication(fault = "ToolSuccessFails", pc = "tool_failed") {
    this.set({ pc, took: fault });
    if (pc === "tool_failed") this.failpoints.fire("tool.publish_failed");
    await this.gate();
    if (pc === "tool_failed" && this.cfg.has("retry-tool-after-failed-publication")) {
      this.set({ pc: "tool_started", took: "MarkUnknown" });
      return true;
    }
    const { db, claims, id } = this;
    await db.tx(async () => {
      if (await this.fence()) await claims.update(this.session, this.execution, id, { phase: "unknown" });
    });
    throw this.stop("MarkUnknown");
  }

  /** Remove the exact, settled claim (fenced); the runner's memory is released. */
  async clearClaim() {
    const { db, claims, id } = this;
    if (!(await this.fence())) throw this.stop("ClearClaim");
    await db.tx(() => claims.remove(this.session, this.execution, id, "running"));
    this.release();
    this.took = "ClearClaim";
    return true;
  }

  /** Stopped: report the unit that stopped it, then release memory once no finalizer of this node
   * still works on the execution (RunnerExit). @param {ActionName | null} took */
  async stopped(took) {
    if (took !== null) {
      this.took = took;
      await this.hold();
    }
    await this.waitWhile(() => this.settling.holds(this.execution));
    this.release();
    this.took = "RunnerExit";
  }
}

// @ts-check
/**
 * The driver's action table: each registry action and what makes this server take it. An attempt
 * (the caller chooses the parameters) answers taken or not; an actor's own step moves that actor one
 * atomic unit and answers the action it took; the environment's steps move the clock, crash a process,
 * corrupt a row, fail a publication.
 */
export const ATTEMPTS = new Set(["Acquire", "PromoteContinuation", "CancelRequest", "Heartbeat", "RecoveryScan", "Admit",
  "ExactRetry", "Resume", "Steer"]);

const RUNNER = ["Renew", "Dispatch", "PublishStepStarted", "StepStartedReturn", "ToolStart", "ToolRun", "PublishToolSuccess",
  "MarkUnknown", "PublishStepFailed", "StepFailedReturn", "PublishStepEnded", "StepEndedReturn", "ClearClaim", "RunnerStop",
  "RunnerExit"];
const FINALIZER = ["FinalizerSettle", "FinalizerClear"];
const RECOVERY = ["RecoveryTakeover", "RecoveryConvert", "RecoveryQuarantine", "RecoveryReconvert"];

/** @typedef {import('./world.js').World} World */

/** An attempt: true when the server took it. @type {Record<string, (w: World, p: any) => Promise<boolean>>} */
const ATTEMPT = {
  Acquire: (w, p) => w.node(p.n).acquire(p.i),
  PromoteContinuation: (w, p) => w.node(p.n).promote(p.i),
  CancelRequest: (w, p) => w.node(p.n).cancel(p.s),
  Heartbeat: (w, p) => w.process(p.n).heartbeat(p.s),
  RecoveryScan: (w, p) => w.worker(p.r).scan(p.s),
  Admit: (w, p) => w.anyNode.inputs.admit(p.s),
  ExactRetry: (w, p) => w.anyNode.inputs.exactRetry(p.i),
  Resume: (w, p) => w.node(p.n).resume(p.s),
  Steer: (w, p) => w.node(p.n).steer(p.i),
};

/** The actor kinds a `move` names (names.STEPPING_ACTORS) and how each takes its next unit. */
export const MOVE = {
  runner: (w, who) => w.node(who).runner.move(),
  finalizer: (w, who) => w.node(who).finalizer.move(),
  recovery: (w, who) => w.worker(who).move(),
  supervisor: (w, who) => w.node(who).supervise(),
};

const took = (name, ok) => (ok ? name : null);

/** A step: the action the server took (null: none). @type {Record<string, (w: World, p: any) => Promise<string | null>>} */
const STEP = {
  ...Object.fromEntries(RUNNER.map((a) => [a, (w, p) => w.node(p.n).runner.move()])),
  PublishStepFailed: (w, p) => decided(w, p.n, "fail"),
  PublishStepEnded: (w, p) => decided(w, p.n, "end"),
  ToolStart: (w, p) => decided(w, p.n, "end"),
  ToolSuccessFails: async (w, p) => {
    const node = w.node(p.n);
    node.publisher.failNext = true;
    try {
      return await node.runner.move();
    } finally {
      node.publisher.failNext = false;
    }
  },
  ...Object.fromEntries(FINALIZER.map((a) => [a, (w, p) => w.node(p.n).finalizer.move()])),
  ...Object.fromEntries(RECOVERY.map((a) => [a, (w, p) => w.worker(p.r).move()])),
  RecoveryConvertAckLost: async (w, p) => {
    const worker = w.worker(p.r);
    worker.loseAck = true;
    try {
      return await worker.move();
    } finally {
      worker.loseAck = false;
    }
  },
  Supervise: (w, p) => w.node(p.n).supervise(),
  Tick: async (w) => {
    w.clock.advance(1);
    return "Tick";
  },
  Crash: async (w, p) => took("Crash", w.process(p.n).crash()),
  CorruptRecoveryRow: async (w, p) => took("CorruptRecoveryRow", (await w.db.run(
    "INSERT INTO session_recovery (execution_id, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING", [p.e, p.s])) === 1),
  WakeArrive: async (w, p) => took("WakeArrive", await w.wakes.arrive(`w${p.w}`, p.w)),
  WakeScan: async (w) => took("WakeScan", await w.wakes.scan()),
  WakeServe: async (w, p) => took("WakeServe", await w.wakes.serve(`w${p.w}`)),
  WakeLost: async (w, p) => took("WakeLost", await w.wakes.release(`w${p.w}`)),
};

/** The provider's stream for the runner's execution ends this way; then the runner moves. */
function decided(w, n, outcome) {
  const node = w.node(n);
  if (node.runner.execution) w.provider.decide(node.runner.execution, outcome);
  return node.runner.move();
}

/** @returns {Promise<string | null>} */
export async function step(world, action, params) {
  if (ATTEMPTS.has(action)) return (await attempt(world, action, params)) ? action : null;
  const fn = STEP[action];
  if (!fn) throw new RangeError(`unknown action ${JSON.stringify(action)}`);
  return fn(world, params);
}

/** @returns {Promise<boolean>} */
export async function attempt(world, action, params) {
  const fn = ATTEMPT[action];
  if (!fn) throw new RangeError(`${JSON.stringify(action)} is not an attempt (names.ATTEMPTS)`);
  return fn(world, params);
}

// @ts-check
/**
 * The driver's action table: each registry action and what makes this server take it. An attempt
 * (the caller chooses the parameters) answers taken or not; an actor's own step moves that actor one
 * atomic unit and answers the action it took; the environment's steps move the clock, crash a process,
 * corrupt a row, fail a publication, hang a listener.
 */
/**
 * @typedef {import('./world.js').World} World @typedef {import('./types.js').ActionParams} ActionParams
 * @typedef {import('./types.js').ActionName} ActionName @typedef {import('./types.js').AttemptName} AttemptName
 * @typedef {Exclude<ActionName, AttemptName>} StepName an action only a step takes
 */
import { contentDigest, continuationId, forgedContinuationId } from "./ids.js";
import { tiedLost, tiedSync } from "./wakes.js";

/** An attempt: true when the server took it (a refusal may answer its reason instead, a string).
 * @type {{[A in AttemptName]: (w: World, p: ActionParams[A]) => Promise<boolean | string>}} */
const ATTEMPT = {
  Acquire: (w, p) => w.node(p.n).acquire(p.i),
  PromoteContinuation: (w, p) => w.node(p.n).promote(p.i),
  CancelRequest: (w, p) => w.node(p.n).cancel(p.s),
  Heartbeat: (w, p) => w.process(p.n).heartbeat(p.s),
  RecoveryScan: (w, p) => w.worker(p.r).scan(p.s),
  Admit: (w, p) => w.anyNode.inputs.admit(p.s),
  ExactRetry: (w, p) => {
    const id = w.anyNode.inputs.idOf(p.i);
    return w.anyNode.inputs.exactRetry(p.s, id, p.d === "admitted" ? contentDigest(id) : p.d);
  },
  Resume: (w, p) => w.node(p.n).resume(p.s),
  Steer: (w, p) => w.node(p.n).steer(p.i),
};

/** The actor kinds a `move` names (names.STEPPING_ACTORS) and how each takes its next unit.
 * @type {{[K in import('./types.js').SteppingActor]: (w: World, who: string) => Promise<ActionName | null>}} */
export const MOVE = {
  runner: (w, who) => w.node(who).runner.move(),
  finalizer: (w, who) => w.node(who).finalizer.move(),
  recovery: (w, who) => w.worker(who).move(),
  supervisor: (w, who) => w.node(who).supervise(),
};

/** @param {ActionName} name @param {boolean} ok */
const took = (name, ok) => (ok ? name : null);

/** A unit of the runner's own: it moves, and answers the unit it took. @param {World} w @param {{n: string}} p */
const runner = (w, p) => w.node(p.n).runner.move();
/** @param {World} w @param {{n: string}} p */
const finalizer = (w, p) => w.node(p.n).finalizer.move();
/** @param {World} w @param {{r: string}} p */
const recovery = (w, p) => w.worker(p.r).move();

/** The conversion under the `ack` fault: its acknowledgement lost after COMMIT ("committed") or its COMMIT
 * lost ("not-committed"); the worker is left reconverting either way.
 * @param {World} w @param {string} r @param {"committed" | "not-committed"} outcome */
async function convertLosing(w, r, outcome) {
  const worker = w.worker(r);
  worker.loseAck = outcome;
  try {
    return await worker.move();
  } finally {
    worker.loseAck = false;
  }
}

/** A step: the action the server took (null: none); every action that is not an attempt has one.
 * @type {{[A in StepName]: (w: World, p: ActionParams[A]) => Promise<ActionName | null>}} */
const STEP = {
  Renew: runner,
  Dispatch: runner,
  OpenFragment: (w, p) => fragmented(w, p.n, true),
  PublishStepStarted: (w, p) => fragmented(w, p.n, false),
  StepStartedReturn: runner,
  ToolStart: (w, p) => decided(w, p.n, "end"),
  ToolRun: runner,
  PublishToolSuccess: runner,
  MarkUnknown: runner,
  PublishStepFailed: (w, p) => decided(w, p.n, "fail"),
  StepFailedReturn: runner,
  PublishStepEnded: (w, p) => decided(w, p.n, "end"),
  StepEndedReturn: runner,
  ClearClaim: runner,
  RunnerStop: runner,
  RunnerExit: runner,
  ToolSuccessFails: (w, p) => publicationFails(w, p.n, () => w.node(p.n).runner.move()),
  StepStartedFails: (w, p) => publicationFails(w, p.n, () => fragmented(w, p.n, false)),
  StepEndedFails: (w, p) => publicationFails(w, p.n, () => decided(w, p.n, "end")),
  HostedReconcile: runner,
  HostedReconcileFails: (w, p) => publicationFails(w, p.n, () => w.node(p.n).runner.move()),
  ListenerHangs: async (w, p) => w.node(p.n).runner.hang(),
  FinalizerReconcile: finalizer,
  FinalizerSettle: finalizer,
  FinalizerClear: finalizer,
  RecoveryTakeover: recovery,
  RecoveryReconcile: recovery,
  RecoveryConvert: recovery,
  RecoveryQuarantine: recovery,
  RecoveryReconvert: recovery,
  RecoveryConvertAckLost: (w, p) => convertLosing(w, p.r, "committed"),
  RecoveryConvertFails: (w, p) => convertLosing(w, p.r, "not-committed"),
  Supervise: (w, p) => w.node(p.n).supervise(),
  Tick: async (w) => {
    w.clock.advance(1);
    return "Tick";
  },
  Crash: async (w, p) => took("Crash", w.process(p.n).crash()),
  CorruptRecoveryRow: async (w, p) => took("CorruptRecoveryRow", (await w.db.run(
    "INSERT INTO session_recovery (execution_id, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING", [p.e, p.s])) === 1),
  ForgeContinuation: async (w, p) => took("ForgeContinuation", await forge(w, p.s, p.e, p.f)),
  WakeArrive: async (w, p) => took("WakeArrive", await w.wakes.arrive(`w${p.w}`, p.w)),
  WakeScan: async (w) => took("WakeScan", await w.wakes.scan()),
  WakeRead: async (w, p) => took("WakeRead", await waker(w, p.k).read()),
  WakeReserve: async (w, p) => took("WakeReserve", await waker(w, p.k).reserve()),
  WakeServe: async (w, p) => took("WakeServe", await w.wakes.serve(`w${p.w}`)),
  WakeLost: async (w, p) => took("WakeLost", w.cfg.wakesTied ? await tiedLost(w, p.w) : await w.wakes.release(`w${p.w}`)),
  // tied wake rows (WakesTied): the woken row's redrive takes the work and removes the row in one transaction
  WakeSync: async (w, p) => took("WakeSync", await tiedSync(w, p.w)),
  WakeScanQueue: async (w, p) => took("WakeScanQueue", await w.wakes.scan(`w${p.w}`)),
  WakeAcquire: async (w, p) => took("WakeAcquire", p.w === 1 && (await w.node(p.n).acquire(p.i, "w1"))),
  WakePromote: async (w, p) => took("WakePromote", p.w === 2 && (await w.node(p.n).promote(p.i, "w2"))),
};

/** What a forged continuation row changes of the row recovery made, per flaw (spec/names.py CONTINUATION_FLAWS):
 * each fails exactly one check of the promotion's validation (inputs.js continuationFlaws).
 * @type {Record<string, [string, (row: import('./types.js').InputRow) => string | number]>} */
const FORGED = {
  id: ["input_id", (row) => forgedContinuationId(row.session_id, row.src)],
  session: ["origin_session", (row) => `${row.session_id}-other`],
  delivery: ["delivery", () => "steer"],
  prompt: ["content_digest", () => "forged-content"],
  assistant: ["assistant_execution", (row) => row.src + 1],
  newest: ["assistant_id", () => "forged-assistant"],
  synthetic: ["synthetic", () => 0],
};

/** ForgeContinuation: an adversary replaces recovery's pending continuation of (Session, execution) with a row
 * of one flaw (one transaction). @param {World} w @param {string} s @param {number} e @param {string} f */
async function forge(w, s, e, f) {
  const [column, value] = FORGED[f] ?? [];
  if (!column || !value) throw new RangeError(`unknown continuation flaw ${f}`);
  const id = continuationId(s, e, 0);
  return w.db.tx(async () => {
    const row = await w.anyNode.inputs.get(id);
    if (!row || row.state !== "pending") return false;
    await w.db.run(`UPDATE inputs SET ${column} = ? WHERE input_id = ?`, [value(row), id]);
    return true;
  });
}

/** Waker k (1-based) of the world's racing wakers. @param {World} w @param {number} k */
function waker(w, k) {
  const x = w.wakers[k - 1];
  if (!x) throw new RangeError(`no waker ${k} in the configuration`);
  return x;
}

/** The provider's stream for the runner's execution ends this way; then the runner moves.
 * @param {World} w @param {string} n @param {import('./provider.js').Outcome} outcome */
function decided(w, n, outcome) {
  const node = w.node(n);
  if (node.runner.execution) w.provider.decide(node.runner.execution, outcome);
  return node.runner.move();
}

/** The environment's publication fault: the runner's next publication (Tool.Success, Step.Started,
 * Step.Ended) fails as it moves. The move must spend the fault: a fault left set is an error here, not
 * cleared (clearing it hid a server that never spends it, whose next publication would fail too).
 * @param {World} w @param {string} n @param {() => Promise<ActionName | null>} move */
async function publicationFails(w, n, move) {
  const node = w.node(n);
  node.publisher.failNext = true;
  const took = await move();
  if (node.publisher.failNext) {
    node.publisher.failNext = false;
    throw new Error(`runner ${n}'s move left the publication fault set: its next publication would fail too`);
  }
  return took;
}

/** The provider's stream for the runner's execution opens with a partial fragment (or not); then it moves.
 * @param {World} w @param {string} n @param {boolean} opens */
function fragmented(w, n, opens) {
  const node = w.node(n);
  if (node.runner.execution) w.provider.openFragment(node.runner.execution, opens);
  return node.runner.move();
}

/** @param {string} action @returns {action is AttemptName} */
const isAttempt = (action) => Object.hasOwn(ATTEMPT, action);
/** @param {string} action @returns {action is StepName} */
const isStep = (action) => Object.hasOwn(STEP, action);

/**
 * The request's `params` are taken to be the action's (docs/driver.schema.json, <Action>Params; types.ts
 * ActionParams): claimcheck's client sends them so, and a request that does not fails inside the action
 * with a TypeError or RangeError, which the driver reports as an error reply.
 * @template {ActionName} A @param {A} _action @param {import('./types.js').Params} params @returns {ActionParams[A]}
 */
const paramsOf = (_action, params) => /** @type {ActionParams[A]} */ (params);

/** @template {StepName} A @param {World} world @param {A} action @param {ActionParams[A]} params */
const stepWith = (world, action, params) => STEP[action](world, params);
/** @template {AttemptName} A @param {World} world @param {A} action @param {ActionParams[A]} params */
const attemptWith = (world, action, params) => ATTEMPT[action](world, params);

/** Take `action` as a step. @param {World} world @param {string} action @param {import('./types.js').Params} params
 * @returns {Promise<ActionName | null>} */
export async function step(world, action, params) {
  if (isAttempt(action)) return (await attempt(world, action, params)) === true ? action : null;
  if (!isStep(action)) throw new RangeError(`unknown action ${JSON.stringify(action)}`);
  return stepWith(world, action, paramsOf(action, params));
}

/** Make the call of an attempt. @param {World} world @param {string} action @param {import('./types.js').Params} params
 * @returns {Promise<boolean | string>} true when taken; a refusal's reason, or false */
export async function attempt(world, action, params) {
  if (!isAttempt(action)) throw new RangeError(`${JSON.stringify(action)} is not an attempt (names.ATTEMPTS)`);
  return attemptWith(world, action, paramsOf(action, params));
}

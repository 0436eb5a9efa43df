// @ts-check
/**
 * The state mapping: the database and each actor's memory read back in the twin's vocabulary
 * (docs/driver.md "The vocabulary"; harness/traces/trace.py state_to_json).
 */
import { assistantStep } from "./ids.js";
import { continuationFlaws } from "./inputs.js";

/** @typedef {import('./types.js').TwinState} TwinState */

/** The twin's number of an assistant id: Step k of execution e is (e - 1) * MaxSteps + k; none is 0.
 * @param {import('./config.js').Settings} cfg @param {string | null | undefined} id */
export function twinAssistant(cfg, id) {
  if (id === null || id === undefined) return 0;
  const [e, k] = assistantStep(id);
  return (e - 1) * cfg.maxSteps + k;
}

/** @type {import('./types.js').TwinClaim} */
const NO_CLAIM = { exec: 0, owner: "", ttl: 0, phase: "none", asst: 0, quar: false, tries: 0, why: "" };

/** A claim row (or none) in the twin's vocabulary, its `ttl` at the claims' clock reading.
 * @param {import('./config.js').Settings} cfg @param {import('./claims.js').Claims} claims
 * @param {import('./types.js').ClaimRow | undefined} c @returns {import('./types.js').TwinClaim} */
export function twinClaim(cfg, claims, c) {
  return !c ? NO_CLAIM : {
    exec: c.execution_id, owner: c.owner_id, ttl: claims.ttl(c), phase: c.phase,
    asst: twinAssistant(cfg, c.assistant_id), quar: c.recovery_error !== null,
    tries: Math.min(c.recovery_attempts, cfg.maxTries),
    why: c.recovery_error === null ? "" : quarantineReason(c.recovery_error),
  };
}

/** A runner's memory (the twin's `run[n]`). @param {import('./config.js').Settings} cfg
 * @param {import('./runner.js').Runner} r @returns {import('./types.js').TwinRunner} */
export function runnerMemory(cfg, r) {
  return { pc: r.pc, sess: r.session, exec: r.execution, mem: twinAssistant(cfg, r.mem), active: r.active,
    intr: r.intr, ordinal: r.ordinal, tool: r.tool };
}

/** A finalizer's memory (`fin[n]`). @param {import('./finalizer.js').Finalizer} f @returns {import('./types.js').TwinFinalizer} */
export function finalizerMemory(f) {
  return { pc: f.pc, sess: f.session, exec: f.execution, owner: f.owner };
}

/** A recovery worker's memory (`rec[r]`). @param {import('./recovery.js').RecoveryWorker} w
 * @returns {import('./types.js').TwinRecovery} */
export function recoveryMemory(w) {
  return { pc: w.pc, sess: w.session, exec: w.execution, seen: w.seen, why: w.why };
}

/** @param {import('./world.js').World} world @returns {Promise<TwinState>} */
export async function twinState(world) {
  const { cfg, db } = world;
  const claims = world.anyNode.claims;
  /** @type {TwinState["claim"]} */
  const claim = {};
  for (const s of cfg.sessions) claim[s] = twinClaim(cfg, claims, await claims.get(s));
  /** @type {import('./types.js').InputRow[]} */
  const inputs = await db.all("SELECT * FROM inputs ORDER BY input_id");
  // an input event names its input as the twin's RequestId: a prompt by number, a continuation by its
  // execution negated (only a defective identity check lets a request name one)
  const promptNo = new Map(inputs.map((i) => [i.input_id, i.kind === "prompt" ? i.src : -i.src]));
  /** @type {import('./types.js').EventRow[]} */
  const events = await db.all("SELECT * FROM events ORDER BY seq");
  /** the newest assistant each (Session, execution) started @type {Map<string, string>} */
  const newest = new Map();
  for (const e of events) if (e.kind === "Started" && e.assistant_id) newest.set(`${e.session_id}/${assistantStep(e.assistant_id)[0]}`, e.assistant_id);
  /** A continuation row's first failing check of the promotion's validation, when it fails one (decision 28).
   * @param {import('./types.js').InputRow} i */
  const flawOf = (i) => {
    const [flaw] = continuationFlaws(i, newest.get(`${i.session_id}/${i.src}`));
    return flaw ? { flaw } : {};
  };
  const log = events.map((e) => ({
    sess: e.session_id, kind: e.kind,
    asst: e.input_id !== null ? promptNo.get(e.input_id) ?? 0 : twinAssistant(cfg, e.assistant_id), node: e.writer,
    call: e.tool_call,
  }));
  /** A session_recovery or cancelled_executions table. @param {string} sql */
  const pairs = async (sql) => {
    /** @type {import('./types.js').CancelledRow[]} */
    const rows = await db.all(sql);
    return rows.map((r) => ({ exec: r.execution_id, sess: r.session_id }));
  };
  /** @type {TwinState["run"]} */
  const run = {};
  /** @type {TwinState["fin"]} */
  const fin = {};
  for (const [id, n] of world.nodes) {
    run[id] = runnerMemory(cfg, n.runner);
    fin[id] = finalizerMemory(n.finalizer);
  }
  /** @type {TwinState["rec"]} */
  const rec = {};
  for (const [id, w] of world.workers) rec[id] = recoveryMemory(w);
  const rows = new Map((await world.wakes.rows()).map((r) => [r.item, r]));
  /** @type {TwinState["wakes"]} */
  const wakes = [];
  for (let k = 1; k <= cfg.wakeRows; k++) {
    const r = rows.get(`w${k}`);
    wakes.push(r ? { work: true, tries: r.attempts, woken: r.reserved, turned: Number(r.turned) === 1 }
      : { work: false, tries: 0, woken: "", turned: false });
  }
  return {
    claim,
    nextExec: (await claims.issued()) + 1,
    log,
    recovery: await pairs("SELECT * FROM session_recovery"),
    inputs: inputs.map((i) => ({ sess: i.session_id, kind: i.kind, src: i.src, state: i.state, gen: i.gen,
      ...(i.kind === "cont" ? flawOf(i) : {}) })),
    run, fin, rec,
    cancelled: await pairs("SELECT * FROM cancelled_executions"),
    faults: [], // the environment's history: claimcheck fills it in from the twin
    effects: world.provider.effects.map((x) => ({ ...x })),
    wakes,
    ...(cfg.wakers > 1 ? { waker: world.wakers.map((k) => k.plan.map((r) => ({ row: r.rank, tries: r.attempts, slot: r.slot }))) } : {}),
  };
}

/** The reason a quarantined claim's `recovery_error` starts with ("malformed: conversion failed"). @param {string} error
 * @returns {import('./types.js').QuarantineReason} */
function quarantineReason(error) {
  return /** @type {import('./types.js').QuarantineReason} */ (error.split(":")[0]);
}

// @ts-check
/**
 * The state mapping: the database and each actor's memory read back in the twin's vocabulary
 * (docs/driver.md "The vocabulary"; harness/traces/trace.py state_to_json).
 */
import { assistantStep } from "./ids.js";

/** The twin's number of an assistant id: Step k of execution e is (e - 1) * MaxSteps + k; none is 0. */
function twinAssistant(cfg, id) {
  if (id === null || id === undefined) return 0;
  const [e, k] = assistantStep(id);
  return (e - 1) * cfg.maxSteps + k;
}

const NO_CLAIM = { exec: 0, owner: "", ttl: 0, phase: "none", asst: 0, quar: false, tries: 0, why: "" };

/** @param {import('./world.js').World} world */
export async function twinState(world) {
  const { cfg, db } = world;
  const claims = world.anyNode.claims;
  const claim = {};
  for (const s of cfg.sessions) {
    const c = await claims.get(s);
    claim[s] = !c ? NO_CLAIM : {
      exec: c.execution_id, owner: c.owner_id, ttl: claims.ttl(c), phase: c.phase,
      asst: twinAssistant(cfg, c.assistant_id), quar: c.recovery_error !== null,
      tries: Math.min(c.recovery_attempts, cfg.maxTries),
      why: c.recovery_error === null ? "" : c.recovery_error.split(":")[0],
    };
  }
  const inputs = await db.all("SELECT * FROM inputs ORDER BY input_id");
  const promptNo = new Map(inputs.map((i) => [i.input_id, i.src]));
  const log = (await db.all("SELECT * FROM events ORDER BY seq")).map((e) => ({
    sess: e.session_id, kind: e.kind,
    asst: e.input_id !== null ? promptNo.get(e.input_id) ?? 0 : twinAssistant(cfg, e.assistant_id), node: e.writer,
  }));
  const pairs = async (sql) => (await db.all(sql)).map((r) => ({ exec: r.execution_id, sess: r.session_id }));
  const run = {};
  const fin = {};
  for (const [id, n] of world.nodes) {
    const r = n.runner;
    run[id] = { pc: r.pc, sess: r.session, exec: r.execution, mem: twinAssistant(cfg, r.mem), active: r.active,
      intr: r.intr, ordinal: r.ordinal, tool: r.tool };
    const f = n.finalizer;
    fin[id] = { pc: f.pc, sess: f.session, exec: f.execution, owner: f.owner };
  }
  const rec = {};
  for (const [id, w] of world.workers) rec[id] = { pc: w.pc, sess: w.session, exec: w.execution, seen: w.seen, why: w.why };
  const rows = new Map((await world.wakes.rows()).map((r) => [r.item, r]));
  const wakes = [];
  for (let k = 1; k <= cfg.wakeRows; k++) {
    const r = rows.get(`w${k}`);
    wakes.push(r ? { work: true, tries: r.attempts, woken: r.reserved } : { work: false, tries: 0, woken: "" });
  }
  return {
    claim,
    nextExec: (await claims.issued()) + 1,
    log,
    recovery: await pairs("SELECT * FROM session_recovery"),
    inputs: inputs.map((i) => ({ sess: i.session_id, kind: i.kind, src: i.src, state: i.state, gen: i.gen })),
    run, fin, rec,
    cancelled: await pairs("SELECT * FROM cancelled_executions"),
    faults: [], // the environment's history: claimcheck fills it in from the twin
    effects: world.provider.effects.map((x) => ({ ...x })),
    wakes,
  };
}

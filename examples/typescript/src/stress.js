// @ts-check
/**
 * This server as several real processes on one PostgreSQL database, its commits recorded for
 * `claimcheck validate` (docs/history.md; examples/typescript/README.md "Several processes"):
 *
 *   node src/stress.js run --nodes 4 --seconds 60 --crash-every 3 --pause-every 10 --database URL --out h.jsonl
 *
 * `run` is the supervisor: it makes a fresh schema, starts one `node` process per node (its Node: runner,
 * finalizer, supervisor, heartbeats; and recovery worker r<k> beside node n<k>, as the bundled server's stress
 * nodes host theirs) and one `caller`, SIGKILLs a node now and then (a new incarnation takes its place) and
 * SIGSTOPs one for longer than a lease (then SIGCONTs it), at seeded random times; at the end it stops them
 * (SIGTERM: each finishes its unit) and writes the history: a header with the run's configuration, then the
 * lines in `seq` order. Every unit a process runs is one recorded transaction (src/recorder.js) and names the
 * registry action it took, as the driver's requests do (src/actions.js): the same World, Node and actors.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { attempt, MOVE, step } from "./actions.js";
import { RealClock } from "./clock.js";
import { Settings } from "./config.js";
import { finalizerMemory, recoveryMemory, runnerMemory } from "./mapping.js";
import { connect, createRun, recordCrash, recordedLines, Recorder } from "./recorder.js";
import { SOURCE } from "./history.js";
import { World } from "./world.js";

/** @typedef {import('./recorder.js').Taken} Taken @typedef {import('./types.js').ActionName} ActionName */

/** Options: `--name value` (repeatable ones collected), and their defaults. */
const DEFAULTS = { nodes: "2", sessions: "8", seconds: "10", "crash-every": "3", "pause-every": "10", seed: "1",
  "tick-ms": "10", lease: "100", grace: "0", "max-steps": "1", "fail-rate": "0.25", "cancel-every": "0.3",
  "turn-ms": "2", "any-share": "0.2", "scan-every-ms": "200", memory: "1" };

/** @param {string[]} argv */
function parse(argv) {
  /** @type {Record<string, string>} */
  const o = { ...DEFAULTS };
  /** @type {string[]} */
  const defects = [];
  for (let k = 0; k < argv.length; k += 2) {
    const key = argv[k], value = argv[k + 1];
    if (!key?.startsWith("--") || value === undefined) usage(`bad option ${key ?? ""}`);
    if (key === "--defect") defects.push(value ?? "");
    else o[key.slice(2)] = value ?? "";
  }
  return { o, defects };
}

/** @param {string} why @returns {never} */
function usage(why) {
  process.stderr.write(`stress.js: ${why} (usage: node src/stress.js run|node|caller --database URL ...)\n`);
  process.exit(2);
}

/** @param {Record<string, string>} o @param {string} name */
function num(o, name) {
  const v = Number(o[name]);
  if (!Number.isFinite(v)) usage(`--${name} must be a number, not ${JSON.stringify(o[name])}`);
  return v;
}

/** A seeded generator (mulberry32 over the seed string's hash). @param {string} seed @returns {() => number} */
function seeded(seed) {
  let h = 1779033703;
  for (const ch of seed) h = Math.imul(h ^ ch.charCodeAt(0), 3432918353) >>> 0;
  return () => {
    h = (h + 0x6d2b79f5) >>> 0;
    let t = h;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** @template T @param {() => number} rng @param {T[]} xs @returns {T | undefined} */
const pick = (rng, xs) => xs[Math.floor(rng() * xs.length)];
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The run's configuration (the twin's, docs/history.md): `prompts` and `max_exec` are the run's limits here,
 * the header's are what the run used. @param {Record<string, string>} o @returns {import('./types.js').TraceConfig} */
function runConfig(o) {
  const n = num(o, "nodes");
  return {
    sessions: Array.from({ length: num(o, "sessions") }, (_, k) => `s${k + 1}`),
    nodes: Array.from({ length: n }, (_, k) => `n${k + 1}`),
    recoverers: Array.from({ length: n }, (_, k) => `r${k + 1}`),
    prompts: 1000, max_exec: 1_000_000, max_steps: num(o, "max-steps"), lease: num(o, "lease"), scan_bound: 100,
    grace: num(o, "grace"), supervision_lag: 1, max_tries: 3, faults: ["crash", "pause"], admission: true,
    steering: false, defects: [], assumptions_off: [], wake_rows: 0,
  };
}

/** What every process of a run shares: its World (on the run's schema, with this process's real clock).
 * @param {Record<string, string>} o @param {string[]} defects */
async function open(o, defects) {
  const db = await connect(o.database ?? usage("--database is required"), o.schema ?? usage("--schema is required"));
  const clock = new RealClock(num(o, "epoch"), num(o, "tick-ms"));
  const world = new World(new Settings(runConfig(o), defects), db, clock);
  return { db, clock, world };
}

let stopping = false;

/** An attempt (the caller's parameters) as a unit's body: the action when the server took it.
 * @param {World} world @param {import('./types.js').AttemptName} action @param {import('./types.js').Params} params
 * @returns {Promise<Taken>} */
async function attempted(world, action, params) {
  return { took: (await attempt(world, action, params)) === true ? action : null, params };
}

/** One node process: node n<k> and recovery worker r<k>, one recorded unit at a time.
 * @param {Record<string, string>} o @param {string[]} defects */
async function nodeProcess(o, defects) {
  const { db, clock, world } = await open(o, defects);
  const id = o.node ?? usage("--node is required"), rid = o.worker ?? usage("--worker is required");
  const cfg = world.cfg, node = world.node(id), worker = world.worker(rid);
  const rng = seeded(`${o.seed}:${id}:${o.incarnation}`);
  const memory = num(o, "memory") ? () => ({ run: { [id]: runnerMemory(cfg, node.runner) },
    fin: { [id]: finalizerMemory(node.finalizer) }, rec: { [rid]: recoveryMemory(worker) } }) : () => undefined;
  const rec = new Recorder(world, db, clock, `${id}#${o.incarnation}@${process.pid}`, () => node.supervise(), memory);
  const failRate = num(o, "fail-rate"), beatEvery = Math.max(1, Math.floor(cfg.lease / 3));
  const scanEvery = num(o, "scan-every-ms"), turnMs = num(o, "turn-ms"), anyShare = num(o, "any-share");
  /** @type {Map<string, number>} the clock reading of each Session's last heartbeat */
  const beats = new Map();
  let nextScan = 0, nextWork = 0;

  /** @param {string} actor @param {() => Promise<Taken | null>} body */
  const unit = (actor, body) => rec.unit(actor, body);
  /** @param {ActionName | null} took @param {import('./types.js').Params} params @returns {Taken} */
  const as = (took, params) => ({ took, params });
  /** @param {import('./types.js').AttemptName} action @param {import('./types.js').Params} params */
  const tried = (action, params) => attempted(world, action, params);

  /** The runner's next unit, the provider's outcome decided for the Step's end as the driver's step does. */
  const runnerUnit = () => unit(id, async () => {
    const r = node.runner;
    if (r.pc === "idle" || r.pc === "hung") return null;
    if (r.pc === "stepping" && r.tool >= cfg.tools) {
      return as(await step(world, rng() < failRate ? "PublishStepFailed" : "PublishStepEnded", { n: id }), { n: id });
    }
    return as(await MOVE.runner(world, id), { n: id });
  });

  /** Ordinary acquisition, or recovery's continuation, of a pending input of an unclaimed Session (`--any-share`
   * of the tries, a fifth: of any Session with pending input, which insert-only acquisition must refuse when
   * claimed). */
  const acquire = () => unit(id, async () => {
    if (node.runner.pc !== "idle") return null;
    const any = rng() < anyShare;
    /** @type {import('./types.js').InputRow[]} */
    const rows = await db.all(`SELECT * FROM inputs i WHERE state = 'pending' ${any ? "" : `AND NOT EXISTS
      (SELECT 1 FROM execution_claims c WHERE c.session_id = i.session_id)`} ORDER BY input_id`);
    const row = pick(rng, rows);
    if (!row) {
      nextWork = Date.now() + 20;
      return null;
    }
    const i = { sess: row.session_id, kind: row.kind, src: row.src, state: row.state, gen: row.gen };
    const owned = row.kind === "cont" && (await node.inputs.recoveryOwned(row.session_id, row.src));
    const action = owned ? "PromoteContinuation" : "Acquire";
    return as(await step(world, action, { n: id, i }), { n: id, i });
  });

  const recovery = async () => {
    if (worker.pc !== "idle") return unit(rid, async () => as(await MOVE.recovery(world, rid), { r: rid }));
    if (Date.now() < nextScan) return null;
    // RecoveryScan: a read that commits nothing (the search takes it); the takeover on what it saw follows
    return unit(rid, async () => {
      const rows = await worker.window();
      const c = pick(rng, rows.slice(0, 4));
      if (!c) {
        nextScan = Date.now() + scanEvery;
        return null;
      }
      return as(await step(world, "RecoveryScan", { r: rid, s: c.session_id }), { r: rid, s: c.session_id });
    });
  };

  const heartbeats = async () => {
    let did = false;
    const now = clock.read();
    const busy = new Set([node.runner, node.finalizer].filter((a) => a.busy).map((a) => a.session));
    for (const s of busy) {
      if (now - (beats.get(s) ?? -Infinity) < beatEvery) continue;
      beats.set(s, now);
      did = Boolean(await unit(id, () => tried("Heartbeat", { n: id, s }))) || did;
    }
    if (["converting", "reconciled"].includes(worker.pc) && now - (beats.get("@worker") ?? -Infinity) >= beatEvery) {
      beats.set("@worker", now);
      const s = worker.session;
      did = Boolean(await unit(rid, () => tried("Heartbeat", { n: rid, s }))) || did;
    }
    for (const s of [...beats.keys()]) if (s !== "@worker" && !busy.has(s)) beats.delete(s);
    return did;
  };

  /** The caller's interrupts routed to this node (ProcessLocalRouting): each a CancelRequest. */
  const cancels = async () => {
    /** @type {{session_id: string}[]} */
    const got = await db.all("DELETE FROM ts_inbox WHERE node = ? RETURNING session_id", [id]);
    let did = false;
    for (const { session_id: s } of got) {
      if (node.finalizer.pc !== "idle") continue;
      did = Boolean(await unit(id, () => tried("CancelRequest", { n: id, s }))) || did;
    }
    return did;
  };

  /** Whether a move of the runner can take a unit (a stopped runner waits while its finalizer holds its execution).
   * @param {import('./runner.js').Runner} r */
  const movable = (r) => r.pc !== "idle" && r.pc !== "hung" && !(r.pc === "stopped" && node.finalizer.holds(r.execution));
  while (!stopping) {
    let did = await cancels();
    for (let k = 0; k < 12 && !stopping && movable(node.runner); k++) {
      if (!(await runnerUnit())) break;
      did = true;
    }
    if (node.runner.pc === "idle" && Date.now() >= nextWork) did = Boolean(await acquire()) || did;
    for (let k = 0; k < 4 && node.finalizer.pc !== "idle"; k++) {
      if (!(await unit(id, async () => as(await MOVE.finalizer(world, id), { n: id })))) break;
      did = true;
    }
    did = Boolean(await recovery()) || did;
    did = (await heartbeats()) || did;
    await sleep(did ? turnMs : 5);
  }
  if (process.env.CLAIMCHECK_TS_STRESS_DEBUG) process.stderr.write(`${id}: ${rec.units} units, ${rec.lines} lines, ${rec.ms} ms in units\n`);
  await db.conn.end();
}

/** The caller: admits prompts (Admit, then Resume: the held prompt requested) while a Session has fewer than
 * two waiting, and now and then routes an interrupt of a running execution to its owning node's inbox.
 * @param {Record<string, string>} o @param {string[]} defects */
async function callerProcess(o, defects) {
  const { db, clock, world } = await open(o, defects);
  const cfg = world.cfg, rng = seeded(`${o.seed}:caller`);
  const rec = new Recorder(world, db, clock, null);
  const n = cfg.nodes[0] ?? "n1", cancelEvery = num(o, "cancel-every") * 1000;
  let nextCancel = Date.now() + rng() * 2 * cancelEvery;
  while (!stopping) {
    const s = pick(rng, cfg.sessions) ?? "s1";
    /** @type {{k: string}[]} */
    const [waiting] = await db.all("SELECT count(*) AS k FROM inputs WHERE session_id = ? AND kind = 'prompt' AND state IN ('held', 'pending')", [s]);
    if (Number(waiting?.k ?? 0) < 2) {
      const admitted = await rec.unit("environment", () => attempted(world, "Admit", { s }));
      if (admitted) await rec.unit("environment", () => attempted(world, "Resume", { n, s }));
    }
    if (Date.now() >= nextCancel) {
      nextCancel = Date.now() + rng() * 2 * cancelEvery;
      /** @type {{session_id: string, owner_id: string}[]} */
      const running = await db.all("SELECT session_id, owner_id FROM execution_claims WHERE phase = 'running' ORDER BY session_id");
      const c = pick(rng, running.filter((r) => cfg.nodes.includes(r.owner_id)));
      if (c) await db.run("INSERT INTO ts_inbox (node, session_id) VALUES (?, ?)", [c.owner_id, c.session_id]);
    }
    await sleep(10);
  }
  await db.conn.end();
}

/** The supervisor. @param {Record<string, string>} o @param {string[]} defects */
async function run(o, defects) {
  const url = o.database ?? usage("--database is required"), out = o.out ?? usage("--out is required");
  const schemaName = o.schema ?? `ts_stress_${process.pid}`;
  const rng = seeded(`${o.seed}:supervisor`);
  const seconds = num(o, "seconds"), crashEvery = num(o, "crash-every") * 1000, pauseEvery = num(o, "pause-every") * 1000;
  const cfg = runConfig(o);
  if (cfg.nodes.length < 1 || cfg.sessions.length < 1) usage("--nodes and --sessions must be at least 1");
  for (const k of Object.keys(DEFAULTS)) num(o, k); // every numeric option, before any process starts
  const admin = await createRun(url, schemaName).catch((/** @type {unknown} */ err) => usage(`cannot open ${url}: ${err instanceof Error ? err.message : err}`));
  const epoch = Date.now();
  const common = ["--database", url, "--schema", schemaName, "--epoch", String(epoch)];
  for (const [k, v] of Object.entries(o)) if (!["database", "schema", "out", "epoch"].includes(k)) common.push(`--${k}`, v);
  for (const d of defects) common.push("--defect", d);
  const script = fileURLToPath(import.meta.url);
  /** @type {Map<string, {child: import('node:child_process').ChildProcess, incarnation: number, paused: number}>} */
  const procs = new Map();
  let unexpected = 0, crashes = 0, pauses = 0;
  /** @type {Promise<void>} the Crash records, in turn */
  let crashed = Promise.resolve();
  /** A node's arguments. @param {string} name */
  const nodeArgs = (name) => ["node", "--node", name, "--worker", cfg.recoverers[cfg.nodes.indexOf(name)] ?? "r1"];
  /** The crash of a node process that died (SIGKILL, or an unexpected exit): the twin's Crash of its node and
   * worker recorded, then its next incarnation started. @param {string} name @param {number} incarnation */
  const restart = async (name, incarnation) => {
    // one at a time on the supervisor's one connection
    const recorded = crashed.then(() => recordCrash(admin, [name, cfg.recoverers[cfg.nodes.indexOf(name)] ?? "r1"]));
    crashed = recorded;
    await recorded;
    if (!stopping) start(name, nodeArgs(name), incarnation + 1);
  };
  /** @param {string} name @param {string[]} args @param {number} incarnation */
  const start = (name, args, incarnation) => {
    const child = spawn(process.execPath, [script, ...args, ...common, "--incarnation", String(incarnation)],
      { stdio: ["ignore", "inherit", "inherit"] });
    const entry = { child, incarnation, paused: 0 };
    child.on("exit", (code, signal) => {
      if (procs.get(name) !== entry) return; // killed and replaced
      // at the end a process killed by the SIGTERM before its handler was installed (just started) stopped too
      if (stopping ? code !== 0 && signal !== "SIGTERM" : true) {
        unexpected++;
        process.stderr.write(`stress: ${name}#${incarnation} exited (${code ?? signal}) unexpectedly\n`);
        if (name === "caller") {
          if (!stopping) start(name, args, incarnation + 1);
        } else pending.push(restart(name, incarnation));
      }
    });
    procs.set(name, entry);
  };
  /** @type {Promise<void>[]} */
  const pending = [];
  cfg.nodes.forEach((n) => start(n, nodeArgs(n), 0));
  start("caller", ["caller"], 0);
  const t0 = Date.now();
  let nextCrash = t0 + crashEvery * (0.5 + rng()), nextPause = t0 + pauseEvery * (0.5 + rng());
  const pauseMs = num(o, "lease") * num(o, "tick-ms");
  while (Date.now() - t0 < seconds * 1000) {
    await sleep(20);
    const t = Date.now();
    for (const p of procs.values()) {
      if (p.paused && t >= p.paused) {
        p.paused = 0;
        p.child.kill("SIGCONT");
      }
    }
    const running = cfg.nodes.filter((n) => procs.has(n) && !procs.get(n)?.paused); // neither paused nor restarting
    if (crashEvery > 0 && t >= nextCrash) {
      nextCrash = t + crashEvery * (0.5 + rng());
      const name = pick(rng, running);
      const p = name ? procs.get(name) : undefined;
      if (name && p) {
        // not awaited here: the Crash's record waits for the recorders' lock, which a paused process may hold
        // until this loop resumes it
        procs.delete(name);
        const dead = new Promise((resolve) => p.child.once("exit", resolve));
        p.child.kill("SIGKILL");
        crashes++;
        pending.push(dead.then(() => restart(name, p.incarnation)));
      }
    }
    if (pauseEvery > 0 && t >= nextPause) {
      nextPause = t + pauseEvery * (0.5 + rng());
      const p = procs.get(pick(rng, running) ?? "");
      if (p) {
        p.child.kill("SIGSTOP");
        p.paused = t + pauseMs * (1 + 2 * rng()); // longer than a lease: its claims expire meanwhile
        pauses++;
      }
    }
  }
  stopping = true;
  const exits = [...procs.values()].map((p) => new Promise((resolve) => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve(undefined);
    p.child.once("exit", resolve);
    if (p.paused) p.child.kill("SIGCONT");
    p.child.kill("SIGTERM");
    setTimeout(() => p.child.kill("SIGKILL"), 10_000).unref();
  }));
  await Promise.all(exits);
  await Promise.all(pending);
  const lines = await recordedLines(admin);
  /** @type {{k: number | null}[]} */
  const [prompts] = await admin.all("SELECT max(src) AS k FROM inputs WHERE kind = 'prompt'");
  /** @type {{value: number}[]} */
  const [issued] = await admin.all("SELECT value FROM id_sequence WHERE name = 'execution'");
  const config = { ...cfg, prompts: Math.max(1, prompts?.k ?? 0), max_exec: Math.max(1, issued?.value ?? 0) };
  const header = { format: "claimcheck-history", version: 1, config, source: `${SOURCE}, ${cfg.nodes.length} processes (src/stress.js)` };
  writeFileSync(out, [JSON.stringify(header), ...lines].map((l) => `${l}\n`).join(""));
  if (!o["keep-schema"]) await admin.conn.query(`DROP SCHEMA ${schemaName} CASCADE`);
  await admin.conn.end();
  const took = ((Date.now() - t0) / 1000).toFixed(1);
  process.stdout.write(`stress: ${cfg.nodes.length} nodes, ${seconds} s: ${lines.length} lines, ${crashes} crashes, ${pauses} pauses, `
    + `${config.max_exec} executions, ${unexpected} unexpected exits (${took} s) -> ${out}\n`);
  return unexpected === 0 ? 0 : 1;
}

async function main() {
  const [role, ...rest] = process.argv.slice(2);
  const { o, defects } = parse(rest);
  process.on("SIGTERM", () => {
    stopping = true;
  });
  if (role === "run") process.exitCode = await run(o, defects);
  else if (role === "node") await nodeProcess(o, defects);
  else if (role === "caller") await callerProcess(o, defects);
  else usage(`unknown role ${JSON.stringify(role ?? "")}`);
}

main().catch((err) => {
  process.stderr.write(`stress.js ${process.argv[2] ?? ""} (pid ${process.pid}): ${err instanceof Error ? err.stack : err}\n`);
  process.exit(1);
});

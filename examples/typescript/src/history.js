// @ts-check
/**
 * The commit history (docs/history.md, format version 1) of one world, for `claimcheck validate`: the
 * driver's `--history DIR` (or $CLAIMCHECK_TS_HISTORY) writes `DIR/world-<n>.jsonl` for the n-th `start`.
 *
 * Where the log is taken: at the driver's request boundary, not inside the database layer. Every
 * `step`, `attempt` or `move` request moves one actor by one atomic unit (src/actions.js), and each
 * atomic unit of this server is at most one database transaction (a fenced statement or a BEGIN ...
 * COMMIT); the world is single-threaded and the driver serves one request at a time, so nothing else
 * commits between the state read before a request and the state read after it. The durable difference
 * between the two readings of `twinState` (src/mapping.js) is therefore exactly the rows that one
 * transaction wrote, in the twin's vocabulary, and the request names the action and its parameters.
 * A request that wrote nothing durable (a refused attempt, a fenced step that failed, a memory-only step
 * such as Dispatch, a Tick) is not logged: the validator's search takes such steps itself.
 *
 * The delta, per docs/history.md's `writes` table: `claim` the Sessions whose row changed (null:
 * deleted); `nextExec` when it moved; `log` the events appended (the events table is append-only);
 * `recovery` and `cancelled` the rows that are new; `inputs` the inputs new or changed (matched by Session,
 * kind, src and gen; rows are never deleted); `wakes` the whole table when it changed. `now` is the
 * manual clock's reading (the twin's clock: only the driver's Tick moves it), given on the steps that
 * read a lease and left out on the ones the twin lets read no clock.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * @typedef {import('./types.js').TwinState} TwinState @typedef {import('./types.js').Writes} Writes
 * @typedef {import('./types.js').TwinPair} TwinPair @typedef {import('./types.js').TwinInput} TwinInput
 */

export const SOURCE = "claimcheck TypeScript example";

/** Steps whose twin action reads no lease: no clock reading (docs/history.md, `now`). */
const NO_CLOCK = new Set(["Admit", "ExactRetry", "Resume", "WakeArrive", "WakeScan", "WakeServe", "WakeLost", "Crash",
  "CorruptRecoveryRow"]);
/** Steps a caller, the waker or a fault takes: the actor is `environment`. */
const ENVIRONMENT = new Set([...NO_CLOCK, "CancelRequest", "Steer", "Tick"]);

/** @param {unknown} a @param {unknown} b */
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
/** @param {TwinPair} r */
const key = (r) => `${r.exec}/${r.sess}`;

/** The durable rows between two twin states (src/mapping.js twinState), as a history line's `writes`.
 * @param {TwinState} before @param {TwinState} after @returns {Writes} */
export function writes(before, after) {
  /** @type {Writes} */
  const out = {};
  /** @type {NonNullable<Writes["claim"]>} */
  const claim = {};
  for (const [s, c] of Object.entries(after.claim)) {
    if (same(before.claim[s], c)) continue;
    claim[s] = c.phase === "none" ? null
      : { exec: c.exec, owner: c.owner, ttl: c.ttl, phase: c.phase, asst: c.asst, quar: c.quar, tries: c.tries, why: c.why };
  }
  if (Object.keys(claim).length) out.claim = claim;
  if (before.nextExec !== after.nextExec) out.nextExec = after.nextExec;
  if (after.log.length > before.log.length) out.log = after.log.slice(before.log.length);
  /** The rows of a keyed table that are new. @param {"recovery" | "cancelled"} name */
  const fresh = (name) => {
    const old = new Set(before[name].map(key));
    const rows = after[name].filter((r) => !old.has(key(r)));
    if (rows.length) out[name] = rows;
  };
  fresh("recovery");
  /** @param {TwinInput} i */
  const id = (i) => `${i.sess}/${i.kind}/${i.src}/${i.gen}`; // an input's identity (ids may sort anywhere)
  const was = new Map(before.inputs.map((i) => [id(i), i]));
  const inputs = after.inputs.filter((i) => !same(was.get(id(i)), i));
  if (inputs.length) out.inputs = inputs;
  fresh("cancelled");
  if (!same(before.wakes, after.wakes)) out.wakes = after.wakes;
  return out;
}

/** One world's log: a header, then a line per request that committed a durable change; kept in memory
 * (a restore drops the lines past its saved point) and written whole by `write`. */
export class History {
  /** @param {string} dir @param {number} n the world's number
   *  @param {import('./types.js').TraceConfig} config the start request's */
  constructor(dir, n, config) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, `world-${n}.jsonl`);
    /** @type {import('./types.js').HistoryHeader} */
    this.header = { format: "claimcheck-history", version: 1, config, source: SOURCE };
    /** @type {import('./types.js').HistoryLine[]} */
    this.lines = [];
  }

  /**
   * The line of one request, kept when it wrote something durable.
   * @param {import('./types.js').MovingRequest} req
   * @param {string | null} took the action taken (null: none)
   * @param {TwinState} before @param {TwinState} after @param {number} now the clock's reading after it
   */
  record(req, took, before, after, now) {
    if (!took || took === "Tick") return;
    const w = writes(before, after);
    if (!Object.keys(w).length) return;
    let params;
    let actor;
    if (req.op === "move") {
      params = req.actor === "recovery" ? { r: req.who } : { n: req.who };
      actor = req.who;
    } else {
      params = req.params ?? {};
      actor = ENVIRONMENT.has(took) ? "environment" : params.r ?? params.n ?? "environment";
    }
    this.lines.push({ actor, action: took, params, ...(NO_CLOCK.has(took) ? {} : { now }), writes: w });
  }

  write() {
    writeFileSync(this.path, [this.header, ...this.lines].map((l) => `${JSON.stringify(l)}\n`).join(""));
  }
}

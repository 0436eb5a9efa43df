// @ts-check
/* The commit history (docs/history.md) of one world: `--history DIR` writes DIR/world-<n>.jsonl for the n-th
 * `start`. One request runs one atomic unit (at most one transaction, nothing else commits meanwhile), so the
 * durable difference of the twin states around it (src/mapping.js) is what it committed. A request that wrote
 * nothing (refused, fenced, Dispatch, Tick) is not logged: the validator takes such steps itself. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SOURCE = "claimcheck TypeScript example";
export const NO_CLOCK = new Set(["Admit", "ExactRetry", "Resume", "WakeArrive", "WakeScan", "WakeScanQueue", "WakeServe",
  "WakeLost", "Crash", "CorruptRecoveryRow", "ForgeContinuation"]); // their twin actions read no lease: no `now`
const ENVIRONMENT = new Set([...NO_CLOCK, "CancelRequest", "Steer", "Tick"]); // a caller's, the waker's, a fault's
const same = (/** @type {unknown} */ a, /** @type {unknown} */ b) => JSON.stringify(a) === JSON.stringify(b);
/** @type {Record<string, (r: any) => string>} a row's identity, in the tables compared row by row */
const ID = { recovery: (r) => `${r.exec}/${r.sess}`, inputs: (i) => `${i.sess}/${i.kind}/${i.src}/${i.gen}`,
  cancelled: (r) => `${r.exec}/${r.sess}` };

/** The durable rows between two twin states (a line's `writes`): the claims that changed (null: deleted),
 * nextExec, the events appended, the rows new or changed, the wake table when it changed.
 * @param {any} before @param {any} after @returns {import('./types.js').Writes} */
export function writes(before, after) {
  const out = /** @type {Record<string, any>} */ ({}), claim = /** @type {Record<string, any>} */ ({});
  for (const [s, c] of Object.entries(after.claim)) if (!same(before.claim[s], c)) claim[s] = c.phase === "none" ? null
    : { exec: c.exec, owner: c.owner, ttl: c.ttl, phase: c.phase, asst: c.asst, quar: c.quar, tries: c.tries, why: c.why };
  if (Object.keys(claim).length) out.claim = claim;
  if (before.nextExec !== after.nextExec) out.nextExec = after.nextExec;
  if (after.log.length > before.log.length) out.log = after.log.slice(before.log.length);
  for (const [name, id] of Object.entries(ID)) {
    const was = new Map(before[name].map((/** @type {any} */ r) => [id(r), r]));
    const rows = after[name].filter((/** @type {any} */ r) => !same(was.get(id(r)), r));
    if (rows.length) out[name] = rows;
  }
  if (!same(before.wakes, after.wakes)) out.wakes = after.wakes;
  return out;
}

/** One world's log, kept in memory (a restore drops the lines past its saved point), written whole. */
export class History {
  /** @param {string} dir @param {number} n @param {import('./types.js').TraceConfig} config */
  constructor(dir, n, config) {
    this.path = (mkdirSync(dir, { recursive: true }), join(dir, `world-${n}.jsonl`));
    this.header = { format: "claimcheck-history", version: 1, config, source: SOURCE };
    /** @type {import('./types.js').HistoryLine[]} */ this.lines = [];
  }

  /** The line of a request (`took`: its action, or null) that wrote something durable, at the clock's `now`.
   * @param {import('./types.js').MovingRequest} req @param {string | null} took @param {any} before
   * @param {any} after @param {number} now */
  record(req, took, before, after, now) {
    const w = took && took !== "Tick" ? writes(before, after) : {};
    if (!took || !Object.keys(w).length) return;
    const params = req.op === "move" ? (req.actor === "recovery" ? { r: req.who } : { n: req.who }) : req.params ?? {};
    const actor = req.op === "move" ? req.who : ENVIRONMENT.has(took) ? "environment" : params.r ?? params.n ?? "environment";
    this.lines.push({ actor, action: took, params, ...(NO_CLOCK.has(took) ? {} : { now }), writes: w });
  }

  write() { writeFileSync(this.path, [this.header, ...this.lines].map((l) => `${JSON.stringify(l)}\n`).join("")); }
}

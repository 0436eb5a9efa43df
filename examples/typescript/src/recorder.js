// @ts-check
/**
 * The commit history (docs/history.md) of several real processes on one PostgreSQL database (src/stress.js).
 * Each atomic unit a process runs (an actor's move, an attempt) is one transaction: BEGIN, a transaction-level
 * advisory lock taken first (polled: see `unit`) (so the recording transactions are serialized: the history's row order is their
 * commit order, and the twin-state readings inside one are of one state), the process's clock read, its
 * supervisor's pass, the claims read, the unit's body (its own `db.tx` joins this transaction), the rows it
 * wrote read back, and, when it wrote something, one `ts_history` row (its `seq` drawn from a sequence in the
 * transaction) holding the line: actor, action, params, process, now, writes (the durable difference, as
 * src/history.js computes it) and the process's actors' memory before the unit. Then COMMIT: the row and the
 * commit are one. A SIGKILL before COMMIT loses both; none is ever recorded without its commit.
 *
 * The rows a transaction wrote are read by PostgreSQL's `xmin` (the writing transaction's id) rather than by
 * reading whole tables twice: the inputs, events, recovery and cancellation rows are never deleted, so the rows
 * whose `xmin` is this transaction's are exactly the ones it inserted or updated. Claims (at most one a Session)
 * are read whole before and after, at the unit's clock reading.
 */
import pg from "pg";
import { schema } from "./db.js";
import { NO_CLOCK, writes } from "./history.js";
import { assistantStep } from "./ids.js";
import { continuationFlaws } from "./inputs.js";
import { twinAssistant, twinClaim } from "./mapping.js";
import { PostgresDatabase } from "./pg.js";

/** @typedef {import('./types.js').ActionName} ActionName @typedef {import('./types.js').Params} Params
 *  @typedef {import('./types.js').ClaimRow} ClaimRow @typedef {import('./types.js').InputRow} InputRow
 *  @typedef {import('./types.js').EventRow & {ikind: string | null, isrc: number | null}} EventJson */
/** What a unit's body answers: the action it took (null: none) and the action's parameters.
 * @typedef {{took: ActionName | null, params: Params}} Taken */

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** The advisory lock every recording transaction takes first. */
const LOCK_KEY = 32_040;
/** The actions recorded even when they wrote nothing (a refused attempt, a renewal at the reading its lease
 * already runs from, a fenced step whose fence failed, a lost race, a conversion whose lease ran out): the
 * transactions a process ran, as the bundled server's recorder keeps them. An empty line places the step, and
 * the memory recorded with it, for the search (docs/history.md); without them a worker's conversion that found
 * its lease gone (idle again, nothing written) had to be found among every actor's silent steps. The
 * memory-only steps (Dispatch, the listener returns, RunnerStop, RunnerExit, Supervise, a scan, a
 * reconciliation) are left to the search. */
const RECORDED_EMPTY = new Set(["Acquire", "PromoteContinuation", "CancelRequest", "Heartbeat", "Renew", "PublishStepStarted",
  "PublishStepEnded", "PublishStepFailed", "PublishToolSuccess", "ToolStart", "MarkUnknown", "ClearClaim", "FinalizerSettle",
  "FinalizerClear", "RecoveryTakeover", "RecoveryConvert", "RecoveryReconvert", "RecoveryQuarantine", "Admit", "Resume"]);
/** This transaction's id as `xmin` holds it (32 bits), or null when it has written nothing yet. */
const XID = "(SELECT txid_current_if_assigned() % 4294967296)";
const MINE = `xmin::text::bigint = ${XID}`;

/** The run's own tables beside the server's: the history, and the caller's interrupts routed to nodes. */
const RUN_DDL = `CREATE TABLE ts_history (seq BIGINT PRIMARY KEY, line TEXT NOT NULL);
CREATE SEQUENCE ts_history_seq;
CREATE TABLE ts_inbox (id SERIAL PRIMARY KEY, node TEXT NOT NULL, session_id TEXT NOT NULL);`;

/** A connection to the run's schema. @param {string} url @param {string} schemaName */
export async function connect(url, schemaName) {
  const client = new pg.Client({ connectionString: url.replace(/^postgresql\+\w+:/, "postgresql:") });
  await client.connect();
  await client.query(`SET client_min_messages TO WARNING; SET search_path TO ${schemaName}`);
  return new PostgresDatabase(client);
}

/** A fresh schema for a run: the server's tables and the run's. @param {string} url @param {string} schemaName */
export async function createRun(url, schemaName) {
  const db = await connect(url, "public");
  await db.conn.query(`DROP SCHEMA IF EXISTS ${schemaName} CASCADE; CREATE SCHEMA ${schemaName}; SET search_path TO ${schemaName}`);
  await db.conn.query(schema("SERIAL PRIMARY KEY"));
  await db.conn.query(RUN_DDL);
  return db;
}

export class Recorder {
  /** @param {import('./world.js').World} world @param {PostgresDatabase} db
   *  @param {import('./clock.js').RealClock} clock @param {string | null} process the process (incarnation) named
   *  on its lines, null: none (a caller's lines read no clock) @param {() => Promise<unknown>} prelude the
   *  supervisor's pass, after the clock is read @param {() => Record<string, unknown> | undefined} memory the
   *  process's actors' memory, recorded before each unit (undefined: none) */
  constructor(world, db, clock, process, prelude = async () => {}, memory = () => undefined) {
    this.world = world;
    this.db = db;
    this.clock = clock;
    this.process = process;
    this.prelude = prelude;
    this.memory = memory;
    this.lines = 0;
    this.units = 0;
    this.ms = 0;
  }

  /** One atomic unit in one recorded transaction; what it took. A body that throws rolls the unit back whole.
   * @param {string} actor @param {() => Promise<Taken | null>} body @returns {Promise<ActionName | null>} */
  async unit(actor, body) {
    const { db } = this;
    const t0 = Date.now();
    this.units++;
    await db.conn.query("BEGIN");
    db.depth = 1; // the body's own transactions join this one
    try {
      // tried, not waited for: a process waiting in PostgreSQL for the lock would hold it, once granted, while it
      // is stopped (SIGSTOP), stalling every other process for the pause; polled, a pause lands outside it
      // unless it lands inside the unit itself
      while (!(await this.tryLock())) await sleep(1 + Math.random() * 2);
      const now = this.clock.read();
      await this.prelude();
      const memory = this.memory();
      const before = await this.durable(false);
      const done = await body();
      const after = await this.durable(true);
      const w = writes(before, after);
      const wrote = Object.keys(w).length > 0;
      if (wrote && !done?.took) throw new Error(`${actor}: a unit that took no action wrote ${JSON.stringify(w)}`);
      if (done?.took && (wrote || RECORDED_EMPTY.has(done.took))) {
        // the line's `seq` is the row's: the supervisor puts it first when it writes the file
        const line = { actor, action: done.took, params: done.params,
          ...(NO_CLOCK.has(done.took) || this.process === null ? {} : { process: this.process, now }),
          writes: w, ...(memory ? { memory } : {}) };
        await db.run("INSERT INTO ts_history (seq, line) VALUES (nextval('ts_history_seq'), ?)", [JSON.stringify(line)]);
        this.lines++;
      }
      db.depth = 0;
      await db.conn.query("COMMIT");
      this.ms += Date.now() - t0;
      return done?.took ?? null;
    } catch (err) {
      db.depth = 0;
      await db.conn.query("ROLLBACK").catch(() => {});
      throw err;
    }
  }

  /** The recorders' lock, if free now (held to the end of the transaction). */
  async tryLock() {
    /** @type {{got: boolean}[]} */
    const rows = await this.db.all(`SELECT pg_try_advisory_xact_lock(${LOCK_KEY}) AS got`);
    return rows[0]?.got === true;
  }

  /** The durable state a unit's writes are the difference of: every claim (at the unit's reading) and the
   * next execution id; after the body (`written`) also the events, inputs, recovery and cancellation rows this
   * transaction wrote (one query each way). @param {boolean} written */
  async durable(written) {
    const { world, db } = this;
    const { cfg } = world;
    const claims = world.anyNode.claims;
    /** @type {{claims: ClaimRow[] | null, issued: number, events: EventJson[] | null, inputs: InputRow[] | null,
     *  recovery: import('./types.js').CancelledRow[] | null, cancelled: import('./types.js').CancelledRow[] | null}[]} */
    const [got] = await db.all(`SELECT (SELECT json_agg(c) FROM execution_claims c) AS claims,
      (SELECT value FROM id_sequence WHERE name = 'execution') AS issued${written ? `,
      (SELECT json_agg(x ORDER BY x.seq) FROM (SELECT e.*, i.kind AS ikind, i.src AS isrc FROM events e
        LEFT JOIN inputs i ON i.input_id = e.input_id WHERE e.${MINE}) x) AS events,
      (SELECT json_agg(i ORDER BY i.input_id) FROM inputs i WHERE ${MINE}) AS inputs,
      (SELECT json_agg(r ORDER BY r.execution_id) FROM session_recovery r WHERE ${MINE}) AS recovery,
      (SELECT json_agg(x ORDER BY x.execution_id) FROM cancelled_executions x WHERE ${MINE}) AS cancelled` : ""}`);
    if (!got) throw new Error("the durable state's query answered no row");
    const bySession = new Map((got.claims ?? []).map((c) => [c.session_id, c]));
    /** @type {Record<string, import('./types.js').TwinClaim>} */
    const claim = {};
    for (const s of cfg.sessions) claim[s] = twinClaim(cfg, claims, bySession.get(s));
    /** @param {import('./types.js').CancelledRow[] | null} rows */
    const pairs = (rows) => (rows ?? []).map((r) => ({ exec: r.execution_id, sess: r.session_id }));
    /** @type {unknown[]} */
    const inputs = [];
    for (const i of got.inputs ?? []) {
      const flaws = i.kind === "cont" ? continuationFlaws(i, await this.newestStarted(i.session_id, i.src)) : [];
      inputs.push({ sess: i.session_id, kind: i.kind, src: i.src, state: i.state, gen: i.gen, ...(flaws[0] ? { flaw: flaws[0] } : {}) });
    }
    return {
      claim, nextExec: Number(got.issued) + 1, inputs, recovery: pairs(got.recovery), cancelled: pairs(got.cancelled), wakes: [],
      log: (got.events ?? []).map((e) => ({ sess: e.session_id, kind: e.kind, node: e.writer, call: e.tool_call,
        asst: e.input_id !== null ? (e.ikind === "prompt" ? e.isrc ?? 0 : -(e.isrc ?? 0)) : twinAssistant(cfg, e.assistant_id) })),
    };
  }

  /** The newest assistant execution `execution` of the Session started (a continuation's check).
   * @param {string} session @param {number} execution */
  async newestStarted(session, execution) {
    /** @type {{assistant_id: string}[]} */
    const rows = await this.db.all("SELECT assistant_id FROM events WHERE session_id = ? AND kind = 'Started' AND assistant_id IS NOT NULL ORDER BY seq",
      [session]);
    return rows.map((r) => r.assistant_id).filter((a) => assistantStep(a)[0] === execution).pop();
  }
}

/** The environment's Crash of a process's actors (a node and its recovery worker), recorded by the supervisor
 * after the process's SIGKILL took effect and before its next incarnation starts: one transaction under the
 * recorders' lock, so it comes after the dead process's last commit and before the new one's first.
 * @param {PostgresDatabase} db @param {string[]} actors */
export async function recordCrash(db, actors) {
  await db.conn.query(`BEGIN; SELECT pg_advisory_xact_lock(${LOCK_KEY})`);
  for (const n of actors) {
    const line = { actor: "environment", action: "Crash", params: { n }, writes: {} };
    await db.run("INSERT INTO ts_history (seq, line) VALUES (nextval('ts_history_seq'), ?)", [JSON.stringify(line)]);
  }
  await db.conn.query("COMMIT");
}

/** The recorded lines in commit order. @param {PostgresDatabase} db @returns {Promise<string[]>} */
export async function recordedLines(db) {
  /** @type {{seq: string, line: string}[]} */
  const rows = await db.all("SELECT seq, line FROM ts_history ORDER BY seq");
  return rows.map((r) => `{"seq":${Number(r.seq)},${r.line.slice(1)}`);
}

// @ts-check
/**
 * A world: the nodes and recovery workers of one configuration on one shared database, clock and
 * provider, with the prompts the twin's Init holds admitted.
 */
import { ManualClock } from "./clock.js";
import { Settings } from "./config.js";
import { openDatabase, SqliteDatabase } from "./db.js";
import { Failpoints } from "./failpoints.js";
import { Node } from "./node.js";
import { ScriptedProvider } from "./provider.js";
import { RecoveryWorker } from "./recovery.js";
import { WakeQueue, Waker } from "./wakes.js";

export class World {
  /** @param {import('./config.js').RawConfig} raw @param {string[]} defects
   *  @param {string | null} url a PostgreSQL URL, or null: SQLite in memory
   *  @param {SqliteDatabase | null} reuse the previous world's SQLite database, emptied and reused (its
   *   prepared statements kept), or null: a fresh database */
  static async start(raw, defects, url = null, reuse = null) {
    const world = new World(new Settings(raw, defects), reuse ? await reuse.reset() : await openDatabase(url));
    if (!world.cfg.admission) {
      const inputs = world.anyNode.inputs;
      await world.db.tx(async () => {
        for (const s of world.cfg.sessions) {
          for (let k = 1; k <= world.cfg.prompts; k++) await inputs.insertPrompt(s, k, "pending");
        }
      });
    }
    if (world.cfg.leftClaims.length > 0) await world.leaveClaims();
    return world;
  }

  /** LeftClaims (spec/README.md, decision 16): the rows earlier processes left on the shared database,
   * written by the code paths that leave them, as the twin's Init has them. Each left Session's prompt 1 is
   * acquired (executions 1.., in the order of the configuration's Sessions) by a node that dies; once the
   * leases and the grace have run out the recovery worker takes each over (one attempt, phase recovering)
   * and dies too; then its lease and the grace run out. */
  async leaveClaims() {
    const { step } = await import("./actions.js");
    const cfg = this.cfg;
    const n = cfg.nodes[0] ?? "";
    const r = cfg.recoverers[0] ?? "";
    /** @param {string} action @param {import('./types.js').Params} params */
    const must = async (action, params) => {
      const took = await step(this, action, params);
      if (took !== action) throw new Error(`left_claims: ${action} ${JSON.stringify(params)} was not taken (${took})`);
    };
    for (const s of cfg.leftClaims) {
      await must("Acquire", { n, i: { sess: s, kind: "prompt", src: 1, state: "pending" } });
      await must("Crash", { n });
    }
    this.clock.advance(cfg.lease + cfg.grace);
    for (const s of cfg.leftClaims) {
      await must("RecoveryScan", { r, s });
      await must("RecoveryTakeover", { r });
      await must("Crash", { n: r });
    }
    this.clock.advance(cfg.lease + cfg.grace);
  }

  /** @param {Settings} cfg @param {import('./types.js').Database} db
   *  @param {ManualClock} clock the driver's manual clock, or a process's real one (src/stress.js) */
  constructor(cfg, db, clock = new ManualClock()) {
    this.cfg = cfg;
    this.db = db;
    this.clock = clock;
    this.failpoints = new Failpoints();
    this.provider = new ScriptedProvider();
    /** @type {Map<string, Node>} */
    this.nodes = new Map(cfg.nodes.map((n) => [n, new Node(this, n)]));
    /** @type {Map<string, RecoveryWorker>} */
    this.workers = new Map(cfg.recoverers.map((r) => [r, new RecoveryWorker(this, r)]));
    this.wakes = new WakeQueue(db, cfg, this.failpoints);
    /** the twin's wakers 1..Wakers when several race (each one's plan is its memory); none with one waker */
    this.wakers = cfg.wakers > 1 ? Array.from({ length: cfg.wakers }, () => new Waker(this.wakes)) : [];
    const first = this.nodes.get(cfg.nodes[0] ?? "");
    if (!first) throw new RangeError("the configuration names no node");
    this.anyNode = first;
  }

  /** @param {string} id */
  node(id) {
    const n = this.nodes.get(id);
    if (!n) throw new RangeError(`no node ${JSON.stringify(id)} in the configuration`);
    return n;
  }

  /** @param {string} id */
  worker(id) {
    const w = this.workers.get(id);
    if (!w) throw new RangeError(`no recovery worker ${JSON.stringify(id)} in the configuration`);
    return w;
  }

  /** A node or a recovery worker (the environment's Crash and the Heartbeat name either). @param {string} id */
  process(id) {
    return this.nodes.get(id) ?? this.worker(id);
  }
}

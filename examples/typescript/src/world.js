// @ts-check
/**
 * A world: the nodes and recovery workers of one configuration on one shared database, clock and
 * provider, with the prompts the twin's Init holds admitted.
 */
import { ManualClock } from "./clock.js";
import { Settings } from "./config.js";
import { openDatabase } from "./db.js";
import { Failpoints } from "./failpoints.js";
import { Node } from "./node.js";
import { ScriptedProvider } from "./provider.js";
import { RecoveryWorker } from "./recovery.js";
import { WakeQueue } from "./wakes.js";

export class World {
  /** @param {import('./config.js').RawConfig} raw @param {string[]} defects
   *  @param {string | null} url a PostgreSQL URL, or null: SQLite in memory */
  static async start(raw, defects, url = null) {
    const world = new World(new Settings(raw, defects), await openDatabase(url));
    if (!world.cfg.admission) {
      const inputs = world.anyNode.inputs;
      await world.db.tx(async () => {
        for (const s of world.cfg.sessions) {
          for (let k = 1; k <= world.cfg.prompts; k++) await inputs.insertPrompt(s, k, "pending");
        }
      });
    }
    return world;
  }

  /** @param {Settings} cfg @param {import('./types.js').Database} db */
  constructor(cfg, db) {
    this.cfg = cfg;
    this.db = db;
    this.clock = new ManualClock();
    this.failpoints = new Failpoints();
    this.provider = new ScriptedProvider();
    /** @type {Map<string, Node>} */
    this.nodes = new Map(cfg.nodes.map((n) => [n, new Node(this, n)]));
    /** @type {Map<string, RecoveryWorker>} */
    this.workers = new Map(cfg.recoverers.map((r) => [r, new RecoveryWorker(this, r)]));
    this.wakes = new WakeQueue(db, cfg, this.failpoints);
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

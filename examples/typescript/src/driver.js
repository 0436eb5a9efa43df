// @ts-check
/**
 * The claimcheck driver protocol, version 1 (docs/driver.md): JSON lines on stdin and stdout, one reply
 * per request, in order. Logs go to stderr only.
 *
 * Save and restore: the server is deterministic, so a saved point is the journal of requests that
 * changed the world since `start`; restore starts the world again and replays the journal up to the point
 * (held async code paths cannot be copied, but they can be driven to the same place again).
 */
import { createInterface } from "node:readline";
import { attempt, MOVE, step } from "./actions.js";
import { History } from "./history.js";
import { DEFECTS } from "./switches.js";
import { twinState } from "./mapping.js";
import { World } from "./world.js";
import { SqliteDatabase } from "./db.js";

/**
 * @typedef {import('./types.js').Request} Request @typedef {import('./types.js').MovingRequest} MovingRequest
 * @typedef {import('./types.js').Replies} Replies @typedef {keyof Replies} Op
 * @typedef {import('./types.js').TookReply} TookReply @typedef {import('./types.js').AttemptReply} AttemptReply
 */
/** The request of op `O`. @template {Op} O @typedef {Extract<Request, {op: O}>} RequestOf */
/** What the driver does for each op: the reply's fields.
 * @typedef {{[O in Op]: (this: Driver, req: RequestOf<O>) => Replies[O] | Promise<Replies[O]>}} Ops */

export const NAME = "claimcheck TypeScript example (examples/typescript, Node + sql.js in memory)";
export const NAME_PG = "claimcheck TypeScript example (examples/typescript, Node + PostgreSQL through pg)";
/** @param {string} actor @returns {actor is import('./types.js').SteppingActor} */
const stepping = (actor) => Object.hasOwn(MOVE, actor);

class Refused extends Error {}

/** A refused attempt changes nothing (claimcheck observes the world after every probe), so the journal a
 * restore replays leaves it out: the refusal probes are more than half the requests of a walk.
 * @param {TookReply | AttemptReply} reply */
const refused = (reply) => "answer" in reply && reply.answer === "refused";

/** A request's failure in one line (a reply's `error`); the server's own failures logged with their stack.
 * @param {unknown} err */
function failure(err) {
  const error = err instanceof SyntaxError ? `not JSON: ${err.message}`
    : err instanceof Refused || err instanceof RangeError ? err.message
      : err instanceof Error ? `the implementation raised ${err.name}: ${err.message}`
        : `the implementation raised an error: ${err}`;
  if (!(err instanceof Refused)) process.stderr.write(`${err instanceof Error ? err.stack ?? err : err}\n`);
  return error.replace(/\s+/g, " ");
}

export class Driver {
  /**
   * @param {string | null} url a PostgreSQL URL (each world in a fresh schema), or null: SQLite in memory
   * @param {string | null} history a directory: each world's commit history goes to DIR/world-<n>.jsonl
   *   (src/history.js); null: none is kept (and nothing is paid for it)
   * @param {boolean} switches whether hello declares the defect switches (src/switches.js); false
   *   (`--no-defects`): a server as a third party ships it, without any (its gate skips the kill matrix)
   */
  constructor(url = null, history = null, switches = true) {
    this.url = url;
    this.switches = switches;
    this.historyDir = history;
    /** @type {History | null} */
    this.history = null;
    this.worlds = 0;
    this.restoring = false;
    /** @type {Map<string, number>} saved point -> the history's line count at it */
    this.marks = new Map();
    /** @type {World | null} */
    this.world = null;
    this.stopped = false;
    /** @type {import('./types.js').StartRequest | null} the start request of the current world */
    this.begun = null;
    /** @type {MovingRequest[]} the requests that moved the world since start */
    this.journal = [];
    /** @type {Map<string, MovingRequest[]>} saved point -> the journal up to it */
    this.points = new Map();
  }

  current() {
    if (!this.world) throw new Refused("no world: send start first");
    return this.world;
  }

  /** Run one world-moving request; with a history, log the durable rows it wrote.
   * @template {TookReply | AttemptReply} R
   * @param {MovingRequest} req @param {(world: World) => Promise<R>} run @returns {Promise<R>} */
  async recorded(req, run) {
    const world = this.current();
    if (!this.history || this.restoring) {
      const reply = await run(world);
      if (!refused(reply)) this.journal.push(req);
      return reply;
    }
    this.journal.push(req);
    const before = await twinState(world);
    const reply = await run(world);
    const took = req.op === "attempt" ? ("answer" in reply && reply.answer === "taken" ? req.action : null)
      : "took" in reply ? reply.took : null;
    this.history.record(req, took, before, await twinState(world), world.clock.now());
    return reply;
  }

  /** The world in the twin's vocabulary and the boundaries fired since the last observation (observe's reply).
   * @returns {Promise<Replies["observe"]>} */
  async observation() {
    const world = this.current();
    return { state: await twinState(world), boundaries: world.failpoints.drain() };
  }

  /** A moving request's reply, with the observation after it when the request asks (`observe: true`, hello's
   * `observes`): one round trip where two were. A restore's replay of the journal never observes.
   * @template {TookReply | AttemptReply} R @param {MovingRequest} req @param {Promise<R>} reply
   * @returns {Promise<R & Partial<Replies["observe"]>>} */
  async observed(req, reply) {
    const got = await reply;
    return req.observe && !this.restoring ? { ...got, ...(await this.observation()) } : got;
  }

  /** The current world's history, written out. */
  flush() {
    this.history?.write();
  }

  /** One request line in, one reply line out. @param {string} line @returns {Promise<string>} */
  async handle(line) {
    /** @type {number | null} */
    let id = null;
    try {
      /** @type {unknown} */
      const req = JSON.parse(line);
      /** @type {{id?: unknown, op?: unknown}} */
      const head = typeof req === "object" && req !== null ? req : {};
      if (typeof head.id === "number" && Number.isInteger(head.id)) id = head.id;
      const op = typeof head.op === "string" && this.serves(head.op) ? head.op : null;
      if (id === null) throw new Refused("request.id: an integer is required");
      if (!op) throw new Refused(`request.op: unknown op ${JSON.stringify(head.op)}`);
      // the request's other fields are taken to be its op's (docs/driver.schema.json): claimcheck sends them so
      const reply = await this.answer(op, /** @type {RequestOf<typeof op>} */ (req));
      return JSON.stringify({ id, ok: true, ...reply });
    } catch (err) {
      return JSON.stringify({ id, ok: false, error: failure(err) });
    }
  }

  /** @param {string} op @returns {op is Op} */
  serves(op) {
    return Object.hasOwn(this.ops, op);
  }

  /** Carry out one request: its reply's fields. @template {Op} O @param {O} op @param {RequestOf<O>} req
   * @returns {Promise<Replies[O]>} */
  async answer(op, req) {
    /** @type {Ops[O]} */
    const carry = this.ops[op];
    return carry.call(this, req);
  }

  /** @type {Ops} */
  ops = {
    hello(req) {
      if (req.protocol !== "claimcheck-driver") {
        throw new Refused(`request.protocol: not claimcheck-driver: ${JSON.stringify(req.protocol)}`);
      }
      if (!Array.isArray(req.versions) || !req.versions.includes(1)) {
        throw new Refused("this driver speaks claimcheck-driver version 1 only");
      }
      const name = this.url ? NAME_PG : NAME;
      return {
        protocol: "claimcheck-driver", version: 1, driver: this.switches ? name : `${name}, no defect switches`,
        save: true, defects: this.switches ? [...DEFECTS] : [], history: this.historyDir !== null, observes: true,
        attempts: true,
      };
    },
    async start(req) {
      if (!this.switches && (req.defects ?? []).length > 0) {
        throw new Refused(`request.defects: this server has no defect switches (--no-defects): ${req.defects?.join(", ")}`);
      }
      // on SQLite the previous world's database is emptied and reused (its prepared statements kept: a
      // restore starts the world again); on PostgreSQL each world has a fresh schema and the old one is freed
      const reuse = this.world?.db instanceof SqliteDatabase ? this.world.db : null;
      if (!reuse) await this.world?.db.close();
      this.world = null;
      this.world = await World.start(req.config, req.defects ?? [], this.url, reuse);
      this.begun = req;
      this.journal = [];
      this.points = new Map();
      if (this.historyDir && !this.restoring) {
        this.flush();
        this.worlds += 1;
        this.history = new History(this.historyDir, this.worlds, req.config);
        this.marks = new Map();
      }
      return {};
    },
    step(req) {
      return this.observed(req, this.recorded(req, async (world) => ({ took: await step(world, req.action, req.params ?? {}) })));
    },
    attempt(req) {
      return this.observed(req, this.recorded(req, async (world) => {
        const got = await attempt(world, req.action, req.params ?? {});
        // a refusal may answer its reason (a string: an exact retry's, names.RETRY_REFUSALS) as the detail
        return typeof got === "string" ? { answer: "refused", detail: got } : { answer: got ? "taken" : "refused" };
      }));
    },
    async attempts(req) {
      /** @type {Replies["attempts"]["results"]} */
      const results = [];
      for (const probe of req.attempts) {
        try { // as `attempt` with `observe: true`: one at a time, each recorded (its journal) and observed
          /** @type {import('./types.js').AttemptRequest} */
          const one = { id: req.id, op: "attempt", action: probe.action, params: probe.params ?? {} };
          const reply = await this.ops.attempt.call(this, one);
          results.push({ ...reply, ...(await this.observation()) });
        } catch (err) { // as `handle` words it; the request ends at this attempt
          results.push({ error: failure(err) });
          break;
        }
      }
      return { results };
    },
    async move(req) {
      const world = this.current();
      const actor = req.actor;
      if (!stepping(actor)) throw new Refused(`request.actor: not a stepping actor: ${JSON.stringify(req.actor)}`);
      const names = actor === "recovery" ? world.cfg.recoverers : world.cfg.nodes;
      if (!names.includes(req.who)) throw new Refused(`request.who: no ${actor} named ${JSON.stringify(req.who)} in the configuration`);
      return this.observed(req, this.recorded(req, async (w) => ({ took: await MOVE[actor](w, req.who) })));
    },
    observe() {
      return this.observation();
    },
    save(req) {
      this.current();
      this.points.set(req.point, this.journal.slice());
      if (this.history) this.marks.set(req.point, this.history.lines.length);
      return {};
    },
    async restore(req) {
      this.current();
      const journal = this.points.get(req.point);
      if (journal === undefined) throw new Refused(`request.point: no saved point ${JSON.stringify(req.point)}`);
      const points = this.points;
      const begun = this.begun;
      if (!begun) throw new Refused("no world: send start first"); // a world is there, so its start request is too
      this.restoring = true; // the same world again: its history keeps its lines up to the point
      try {
        await this.answer("start", begun);
        for (const r of journal) await this.answer(r.op, r);
      } finally {
        this.restoring = false;
      }
      this.points = points;
      if (this.history) this.history.lines.length = this.marks.get(req.point) ?? 0;
      this.current().failpoints.drain(); // observe reports what fired since the restore
      return {};
    },
    stop() {
      this.flush();
      this.stopped = true;
      return {};
    },
  };
}

/** Serve the protocol on stdin and stdout until stop or the end of input.
 * @param {NodeJS.ReadableStream} input @param {{write: (line: string) => unknown}} output
 * @param {string | null} url @param {string | null} history @param {boolean} switches */
export async function serve(input = process.stdin, output = process.stdout, url = null, history = null,
  switches = true) {
  const driver = new Driver(url, history, switches);
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    output.write(`${await driver.handle(line)}\n`);
    if (driver.stopped) break;
  }
  lines.close();
  driver.flush();
  await driver.world?.db.close();
}

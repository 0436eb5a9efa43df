// @ts-check
/**
 * The claimcheck driver protocol, version 1 (docs/driver.md): JSON lines on stdin and stdout, one reply
 * per request, in order. Logs go to stderr only.
 */
import { createInterface } from "node:readline";
import { attempt, MOVE, step } from "./actions.js";
import { twinState } from "./mapping.js";
import { World } from "./world.js";

export const NAME = "claimcheck TypeScript example (examples/typescript, Node + sql.js in memory)";
const ACTORS = new Set(["runner", "finalizer", "recovery", "supervisor"]);

class Refused extends Error {}

export class Driver {
  constructor() {
    /** @type {World | null} */
    this.world = null;
    this.stopped = false;
  }

  current() {
    if (!this.world) throw new Refused("no world: send start first");
    return this.world;
  }

  /** One request line in, one reply line out. */
  async handle(line) {
    let id = null;
    try {
      const req = JSON.parse(line);
      if (req && Number.isInteger(req.id)) id = req.id;
      const op = this.ops[req?.op];
      if (id === null) throw new Refused("request.id: an integer is required");
      if (!op) throw new Refused(`request.op: unknown op ${JSON.stringify(req?.op)}`);
      const reply = await op.call(this, req);
      return JSON.stringify({ id, ok: true, ...reply });
    } catch (err) {
      const error = err instanceof SyntaxError ? `not JSON: ${err.message}`
        : err instanceof Refused || err instanceof RangeError ? err.message
          : `the implementation raised ${err?.name ?? "an error"}: ${err?.message ?? err}`;
      if (!(err instanceof Refused)) process.stderr.write(`${err?.stack ?? err}\n`);
      return JSON.stringify({ id, ok: false, error: error.replace(/\s+/g, " ") });
    }
  }

  ops = {
    hello(req) {
      if (!Array.isArray(req.versions) || !req.versions.includes(1)) {
        throw new Refused("this driver speaks claimcheck-driver version 1 only");
      }
      return { protocol: "claimcheck-driver", version: 1, driver: NAME, save: false };
    },
    async start(req) {
      this.world = await World.start(req.config, req.defects ?? []);
      return {};
    },
    async step(req) {
      const took = await step(this.current(), req.action, req.params ?? {});
      return { took };
    },
    attempt(req) {
      return { answer: attempt(this.current(), req.action, req.params ?? {}) ? "taken" : "refused" };
    },
    async move(req) {
      const world = this.current();
      if (!ACTORS.has(req.actor)) throw new Refused(`request.actor: not a stepping actor: ${JSON.stringify(req.actor)}`);
      const names = req.actor === "recovery" ? world.cfg.recoverers : world.cfg.nodes;
      if (!names.includes(req.who)) throw new Refused(`request.who: no ${req.actor} named ${JSON.stringify(req.who)} in the configuration`);
      return { took: await MOVE[req.actor](world, req.who) };
    },
    observe() {
      const world = this.current();
      return { state: twinState(world), boundaries: world.failpoints.drain() };
    },
    save() {
      throw new Refused("save is not supported by this driver (hello says save: false)");
    },
    restore() {
      throw new Refused("restore is not supported by this driver (hello says save: false)");
    },
    stop() {
      this.stopped = true;
      return {};
    },
  };
}

/** Serve the protocol on stdin and stdout until stop or the end of input. */
export async function serve(input = process.stdin, output = process.stdout) {
  const driver = new Driver();
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    output.write(`${await driver.handle(line)}\n`);
    if (driver.stopped) break;
  }
  lines.close();
}

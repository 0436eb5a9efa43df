// The actors receive what they use, never their node: no reference leads from a runner or a finalizer
// back to its node (the finalizer knows its runner; the runner knows only Settling). The walk is shown
// finding a planted back reference.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Settings } from "../src/config.js";
import { openDatabase } from "../src/db.js";
import { World } from "../src/world.js";

/** @type {import('../src/types.js').TraceConfig} */
const config = {
  sessions: ["s1"], nodes: ["n1"], recoverers: ["r1"], prompts: 1, max_exec: 2, lease: 1, scan_bound: 1,
  faults: ["crash", "pause", "corrupt"],
};

/** Whether `target` is reachable from `root` through objects' own properties (arrays, Maps and Sets too).
 * @param {unknown} root @param {unknown} target */
function reaches(root, target) {
  const seen = new Set();
  const stack = [root];
  while (stack.length) {
    const o = stack.pop();
    if (o === target) return true;
    if (o === null || typeof o !== "object" || seen.has(o)) continue;
    seen.add(o);
    if (o instanceof Map || o instanceof Set) stack.push(...o.values());
    else stack.push(...Object.values(o));
  }
  return false;
}

async function world() {
  return new World(new Settings(config, []), await openDatabase());
}

test("no actor reaches its node", async () => {
  const node = (await world()).node("n1");
  assert.ok(reaches(node, node.runner) && reaches(node, node.finalizer)); // the walk finds what is there
  assert.ok(reaches(node.finalizer, node.runner)); // the finalizer knows the runner it waits for
  assert.ok(!reaches(node.runner, node));
  assert.ok(!reaches(node.finalizer, node));
  assert.ok(!reaches(node.runner, node.finalizer)); // the runner knows only Settling
});

test("the walk finds a planted back reference", async () => {
  const node = (await world()).node("n1");
  Object.assign(node.runner, { back: node }); // a stand-in of `this.node`
  assert.ok(reaches(node.runner, node) && reaches(node.finalizer, node));
});

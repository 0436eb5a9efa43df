// The driver protocol end to end in process: a whole execution, one atomic unit per request.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Driver } from "../src/driver.js";

/** @typedef {import('../src/types.js').Replies} Replies */

/** @type {import('../src/types.js').TraceConfig} */
const config = {
  sessions: ["s1"], nodes: ["n1"], recoverers: ["r1"], prompts: 1, max_exec: 2, lease: 1, scan_bound: 1,
  faults: ["crash", "pause", "corrupt"],
};

/** The reply to one request, which must succeed.
 * @template {keyof Replies} O @param {Driver} driver @param {number} id @param {O} op @param {object} fields
 * @returns {Promise<Replies[O]>} */
async function ask(driver, id, op, fields = {}) {
  const reply = JSON.parse(await driver.handle(JSON.stringify({ id, op, ...fields })));
  assert.equal(reply.id, id);
  assert.equal(reply.ok, true, reply.error);
  return reply;
}

/** The error reply to one request. @param {Driver} driver @param {string} line
 * @returns {Promise<{id: number | null, ok: false, error: string}>} */
async function refusal(driver, line) {
  const reply = JSON.parse(await driver.handle(line));
  assert.equal(reply.ok, false);
  return reply;
}

test("an execution runs to its clear, each unit held at its boundary", async () => {
  const d = new Driver();
  assert.equal((await ask(d, 0, "hello", { protocol: "claimcheck-driver", versions: [1] })).save, true);
  await ask(d, 1, "start", { config, defects: [] });
  const i = { sess: "s1", kind: "prompt", src: 1, state: "pending" };
  assert.equal((await ask(d, 2, "step", { action: "Acquire", params: { n: "n1", i } })).took, "Acquire");
  const steps = [["Renew", "renew.committed"], ["Dispatch", "provider.dispatched"],
    ["PublishStepStarted", "step_started.committed"], ["StepStartedReturn", null],
    ["PublishStepEnded", "step_ended.committed"], ["ClearClaim", null]];
  let id = 3;
  await ask(d, id++, "observe");
  for (const [action, boundary] of steps) {
    assert.equal((await ask(d, id++, "step", { action, params: { n: "n1" } })).took, action);
    assert.deepEqual((await ask(d, id++, "observe")).boundaries, boundary ? [boundary] : []);
  }
  const { state } = await ask(d, id++, "observe");
  assert.equal(state.claim["s1"]?.phase, "none");
  assert.deepEqual(state.log.map((e) => e.kind), ["Started", "Ended"]);
  assert.equal(state.run["n1"]?.pc, "idle");
  assert.equal((await ask(d, id++, "move", { actor: "runner", who: "n1" })).took, null);
});

test("errors are replies that name the problem, never a crash", async () => {
  const d = new Driver();
  assert.match((await refusal(d, JSON.stringify({ id: 0, op: "observe" }))).error, /no world/);
  const bad = await refusal(d, "{not json");
  assert.equal(bad.id, null);
  assert.match(bad.error, /not JSON/);
});

test("restore replays the journal to the saved point", async () => {
  const d = new Driver();
  await ask(d, 0, "start", { config, defects: [] });
  const i = { sess: "s1", kind: "prompt", src: 1, state: "pending" };
  await ask(d, 1, "step", { action: "Acquire", params: { n: "n1", i } });
  await ask(d, 2, "save", { point: "acquired" });
  const before = (await ask(d, 3, "observe")).state;
  await ask(d, 4, "step", { action: "Renew", params: { n: "n1" } });
  await ask(d, 5, "step", { action: "Dispatch", params: { n: "n1" } });
  await ask(d, 6, "restore", { point: "acquired" });
  const after = await ask(d, 7, "observe");
  assert.deepEqual(after.state, before);
  assert.deepEqual(after.boundaries, []);
  assert.equal((await ask(d, 8, "move", { actor: "runner", who: "n1" })).took, "Renew");
});

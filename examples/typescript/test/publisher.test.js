// The event publisher and the gate: listeners run only after the commit, a lost fence rolls the whole
// transaction back, and a held actor moves exactly one unit per move.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FenceLost, openDatabase } from "../src/db.js";
import { Failpoints } from "../src/failpoints.js";
import { Gated } from "../src/gate.js";
import { Publisher } from "../src/publisher.js";

/** The events appended (COUNT(*) is a number on SQLite, a string on PostgreSQL).
 * @param {import('../src/types.js').Database} db */
const count = async (db) => {
  /** @type {{n: number | string} | undefined} */
  const row = await db.get("SELECT COUNT(*) AS n FROM events");
  return Number(row?.n);
};

test("listeners run after the commit, behind the listener gate", async () => {
  const db = await openDatabase();
  const failpoints = new Failpoints();
  const publisher = new Publisher(db, failpoints);
  /** @type {number[]} */
  const seen = [];
  publisher.subscribe(async () => seen.push(await count(db)));
  const actor = new Gated();
  let returned = false;
  actor.launch(async () => {
    await publisher.publish({ session: "s1", kind: "Started", assistant: "asst:1:1", writer: "n1" }, {
      boundary: "step_started.committed",
      committed: () => (actor.took = "PublishStepStarted"),
      gate: () => actor.hold(),
    });
    returned = true;
    actor.took = "StepStartedReturn";
  });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(failpoints.drain(), ["step_started.committed"]);
  assert.equal(await count(db), 1); // committed
  assert.deepEqual(seen, []); // the listener has not run: the publish is held in its gate
  assert.equal(returned, false);
  assert.equal(await actor.move(), "StepStartedReturn");
  assert.deepEqual(seen, [1]);
  assert.equal(returned, true);
  assert.equal(await actor.move(), null); // the code path ended: nothing is held
});

test("a lost fence rolls the event back and no listener runs", async () => {
  const db = await openDatabase();
  const publisher = new Publisher(db, new Failpoints());
  let heard = false;
  publisher.subscribe(() => (heard = true));
  const ok = await publisher.publish({ session: "s1", kind: "Ended", assistant: "asst:1:1", writer: "n1" }, {
    project: () => {
      throw new FenceLost("gone");
    },
  });
  assert.equal(ok, false);
  assert.equal(await count(db), 0);
  assert.equal(heard, false);
});

test("a failed publication changes nothing durable", async () => {
  const db = await openDatabase();
  const publisher = new Publisher(db, new Failpoints());
  publisher.failNext = true;
  await assert.rejects(publisher.publish({ session: "s1", kind: "ToolSucceeded", assistant: "asst:1:1", writer: "n1" }));
  assert.equal(await count(db), 0);
});

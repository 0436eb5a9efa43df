// @ts-check
/**
 * The wake queue: rows of work to redrive, each with a bounded wake-attempt counter. A scan plans its
 * batch (fresh rows first up to the fresh share, then retried rows, unused slots to the other kind) and
 * reserves each planned row by compare-and-set on the counter it read, rotating from its maximum to 1.
 * Retried rows take their slots in rounds (`turned`): a row woken in the current round waits until every
 * waiting retried row has been, so a poison row woken and lost for ever cannot take every retry slot.
 * A scan is the reviewed code's two units: `read` plans the batch (the twin's WakeRead) and `reserve` makes
 * each planned row's compare-and-set on the counter read observed (WakeReserve); a row whose counter moved,
 * or that another waker reserved, in between is lost to this waker. A `Waker` makes them two transactions
 * and keeps its plan between them; `scan` makes both in one (the twin's WakeScan).
 */
/** @typedef {{ item: string, rank: number, attempts: number, slot: "fresh" | "retry" }} Planned */
/** @typedef {import('./types.js').WakeRow} WakeRow */

export class WakeQueue {
  /** @param {import('./types.js').Database} db @param {import('./config.js').Settings} cfg
   *  @param {import('./failpoints.js').Failpoints} failpoints */
  constructor(db, cfg, failpoints) {
    this.db = db;
    this.cfg = cfg;
    this.failpoints = failpoints;
  }

  /** Fresh work arrives for row `item` (ranked `rank`); false when it already waits.
   * @param {string} item @param {number} rank */
  async arrive(item, rank) {
    return (await this.db.tx(() => this.db.run("INSERT INTO wake_rows (item, rank) VALUES (?, ?) ON CONFLICT DO NOTHING",
      [item, rank]))) === 1;
  }

  /** The bounded batch of unreserved rows, planned in one transaction (a new round clears the waiting turns);
   * each planned row with the counter it observed, none when nothing waits. @returns {Promise<Planned[]>} */
  async read() {
    return this.db.tx(() => this.plan());
  }

  /** The read's body (in the caller's transaction); `item`: one kind's queue, its tied row alone (WakeScanQueue).
   * @param {string | null} [item] @returns {Promise<Planned[]>} */
  async plan(item = null) {
    const batch = this.cfg.wakeBatch;
    const only = item === null ? "" : " AND item = ?", args = item === null ? [] : [item];
    /** @type {WakeRow[]} */
    const rows = await this.db.all(`SELECT * FROM wake_rows WHERE reserved = ''${only} ORDER BY rank`, args);
    const fresh = rows.filter((r) => r.attempts === 0);
    const rounds = !this.cfg.has("wake-retry-oldest-first");
    const waiting = rows.filter((r) => r.attempts > 0);
    // a new round when every waiting retried row was woken in this one: its turns are cleared
    const newRound = rounds && waiting.length > 0 && waiting.every((r) => Number(r.turned) === 1);
    if (newRound) await this.db.run(`UPDATE wake_rows SET turned = 0 WHERE reserved = '' AND attempts > 0${only}`, args);
    // those whose turn has not come first (each oldest first), unless the rounds are off
    const retried = rounds && !newRound
      ? [...waiting.filter((r) => Number(r.turned) !== 1), ...waiting.filter((r) => Number(r.turned) === 1)] : waiting;
    const first = fresh.slice(0, this.cfg.freshSlots(batch));
    const again = retried.slice(0, batch - first.length);
    /** @param {WakeRow} r @param {"fresh" | "retry"} slot @returns {Planned} */
    const plan = (r, slot) => ({ item: r.item, rank: r.rank, attempts: r.attempts, slot });
    return [...fresh.slice(0, batch - again.length).map((r) => plan(r, "fresh")), ...again.map((r) => plan(r, "retry"))];
  }

  /** Each planned row's compare-and-set on the counter its read observed, in one transaction; the rows that
   * no longer match are lost to this waker. The number reserved. @param {Planned[]} planned */
  async reserve(planned) {
    return this.db.tx(() => this.take(planned));
  }

  /** The reservation's body (in the caller's transaction): the number reserved. @param {Planned[]} planned */
  async take(planned) {
    const cas = !this.cfg.has("wake-reserve-without-cas");
    let won = 0;
    for (const r of planned) {
      const sql = "UPDATE wake_rows SET attempts = CASE WHEN attempts >= ? THEN 1 ELSE attempts + 1 END, reserved = ?, "
        + "turned = 1 WHERE item = ?" + (cas ? " AND attempts = ? AND reserved = ''" : "");
      won += await this.db.run(sql, cas ? [this.cfg.maxWakeTries, r.slot, r.item, r.attempts]
        : [this.cfg.maxWakeTries, r.slot, r.item]);
    }
    return won;
  }

  /** One waker's scan (WakeScan): the read and the reservation of its plan in one transaction, so wakers that
   * scan this way are serialized and no reservation loses (racing wakers read and reserve apart: `Waker`);
   * false when nothing waits. Tied rows (`item`): each kind's queue is scanned in a transaction of its own
   * (WakeScanQueue), as the reviewed code scans recovery wakes and ordinary wakes apart.
   * @param {string | null} [item] */
  async scan(item = null) {
    return this.db.tx(async () => {
      const planned = await this.plan(item);
      if (planned.length === 0) return false;
      await this.take(planned);
      this.failpoints.fire("wake.reserved");
      return true;
    });
  }

  /** The woken redrive took the row's work: the row goes. @param {string} item */
  async serve(item) {
    return (await this.db.tx(() => this.db.run("DELETE FROM wake_rows WHERE item = ? AND reserved != ''", [item]))) === 1;
  }

  /** The woken redrive took nothing: the reservation lapses, the row waits as a retry. @param {string} item */
  async release(item) {
    return (await this.db.tx(() => this.db.run("UPDATE wake_rows SET reserved = '' WHERE item = ? AND reserved != ''",
      [item]))) === 1;
  }

  /** @returns {Promise<WakeRow[]>} */
  async rows() {
    return this.db.all("SELECT * FROM wake_rows ORDER BY rank");
  }
}

// ---------------------------------------------------------------- tied wake rows (WakesTied)
// Row 1 is the one Session's ordinary wake (item w1), row 2 its recovery wake (item w2), in the world's queue.

/** The Session's pending inputs the tied row's kind takes (1: ordinary selection, in order, or with the defect
 * wake-serves-regardless any pending one; 2: a continuation recovery owns).
 * @param {import('./world.js').World} w @param {number} row */
async function tiedWork(w, row) {
  const node = w.node(w.cfg.nodes[0] ?? "");
  const session = w.cfg.sessions[0] ?? "";
  /** @type {import('./types.js').InputRow[]} */
  const rows = await w.db.all("SELECT * FROM inputs WHERE session_id = ? AND state = 'pending'", [session]);
  const out = [];
  for (const r of rows) {
    if (row === 2) {
      if (r.kind === "cont" && (await node.inputs.recoveryOwned(session, r.src))) out.push(r);
    } else if (await node.inputs.selectable(r)) out.push(r);
  }
  return out;
}

/** WakeSync: the syncer inserts the tied row while the Session is unclaimed and work of its kind waits.
 * @param {import('./world.js').World} w @param {number} row */
export async function tiedSync(w, row) {
  const session = w.cfg.sessions[0] ?? "";
  if ((await w.node(w.cfg.nodes[0] ?? "").claims.get(session)) || (await tiedWork(w, row)).length === 0) return false;
  return w.wakes.arrive(`w${row}`, row);
}

/** WakeLost of a tied row: its redrive found nothing to take; refused while an idle node could take its work
 * (the Session unclaimed, an execution id left). @param {import('./world.js').World} w @param {number} row */
export async function tiedLost(w, row) {
  const node = [...w.nodes.values()].find((n) => n.runner.pc === "idle");
  const session = w.cfg.sessions[0] ?? "";
  if (node && !(await node.claims.get(session)) && (await node.claims.issued()) < w.cfg.maxExec) {
    const work = await tiedWork(w, row);
    const regardless = row === 1 && w.cfg.has("wake-serves-regardless");
    const pending = regardless ? await w.db.all("SELECT * FROM inputs WHERE session_id = ? AND state = 'pending'", [session]) : [];
    const inOrder = [];
    for (const r of work) if (!(await node.inputs.waitingAhead(r))) inOrder.push(r);
    if (pending.length > 0 || (row === 1 ? inOrder : work).length > 0) return false;
  }
  return w.wakes.release(`w${row}`);
}

/** One of several wakers (the twin's Wakers > 1): its read and its reservation are two steps, and its plan
 * (the rows with the counters it observed) is its memory between them. */
export class Waker {
  /** @param {WakeQueue} queue */
  constructor(queue) {
    this.queue = queue;
    /** @type {Planned[]} */
    this.plan = [];
  }

  /** WakeRead: plan a batch and keep it; false while a plan waits, or when nothing waits. */
  async read() {
    if (this.plan.length > 0) return false;
    this.plan = await this.queue.read();
    return this.plan.length > 0;
  }

  /** WakeReserve: the compare-and-set of each planned row; the plan is spent whatever it won. */
  async reserve() {
    if (this.plan.length === 0) return false;
    const plan = this.plan;
    this.plan = [];
    await this.queue.reserve(plan);
    return true;
  }
}

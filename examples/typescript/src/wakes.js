// @ts-check
/**
 * The wake queue: rows of work to redrive, each with a bounded wake-attempt counter. A scan plans its
 * batch (fresh rows first up to the fresh share, then retried rows, unused slots to the other kind) and
 * reserves each planned row by compare-and-set on the counter it read, rotating from its maximum to 1.
 * Retried rows take their slots in rounds (`turned`): a row woken in the current round waits until every
 * waiting retried row has been, so a poison row woken and lost for ever cannot take every retry slot.
 */
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

  /** The bounded batch of unreserved rows, planned and reserved in one transaction; false when empty. */
  async scan() {
    const batch = this.cfg.wakeBatch;
    return this.db.tx(async () => {
      /** @type {WakeRow[]} */
      const rows = await this.db.all("SELECT * FROM wake_rows WHERE reserved = '' ORDER BY rank");
      const fresh = rows.filter((r) => r.attempts === 0);
      const rounds = !this.cfg.has("wake-retry-oldest-first");
      const waiting = rows.filter((r) => r.attempts > 0);
      // a new round when every waiting retried row was woken in this one: its turns are cleared
      const newRound = rounds && waiting.length > 0 && waiting.every((r) => Number(r.turned) === 1);
      if (newRound) await this.db.run("UPDATE wake_rows SET turned = 0 WHERE reserved = '' AND attempts > 0", []);
      // those whose turn has not come first (each oldest first), unless the rounds are off
      const retried = rounds && !newRound
        ? [...waiting.filter((r) => Number(r.turned) !== 1), ...waiting.filter((r) => Number(r.turned) === 1)] : waiting;
      const first = fresh.slice(0, this.cfg.freshSlots(batch));
      const again = retried.slice(0, batch - first.length);
      const planned = [...fresh.slice(0, batch - again.length).map((r) => /** @type {const} */ ([r, "fresh"])),
        ...again.map((r) => /** @type {const} */ ([r, "retry"]))];
      if (planned.length === 0) return false;
      for (const [r, slot] of planned) {
        const next = r.attempts >= this.cfg.maxWakeTries ? 1 : r.attempts + 1;
        const changed = await this.db.run("UPDATE wake_rows SET attempts = ?, reserved = ?, turned = 1 WHERE item = ? AND attempts = ? AND reserved = ''",
          [next, slot, r.item, r.attempts]);
        if (changed !== 1) throw new Error(`wake row ${r.item}: its counter moved under the scan`);
      }
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

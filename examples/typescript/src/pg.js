// @ts-check
/**
 * PostgreSQL through `pg`: the same async interface as the sql.js database (all, get, run, tx). One
 * connection per driver process; each world gets a fresh schema of its own (dropped and created again
 * on the next world), so a run never sees an earlier world's rows.
 */
import pg from "pg";
import { schema } from "./db.js";

/** @typedef {import('./types.js').Database} Database @typedef {import('./types.js').SqlValue} SqlValue */

/** @type {pg.Client | null} */
let client = null;
const SCHEMA_NAME = `claimcheck_ts_${process.pid}`;

/** `?` placeholders as PostgreSQL's `$1, $2, ...` (no statement of this server has a `?` in a literal).
 * @param {string} sql */
function numbered(sql) {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** @param {string} url a postgres:// (or postgresql://) URL @returns {Promise<Database>} */
export async function openPostgres(url) {
  if (!client) {
    client = new pg.Client({ connectionString: url.replace(/^postgresql\+\w+:/, "postgresql:") });
    await client.connect();
    await client.query("SET client_min_messages TO WARNING");
  }
  await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA_NAME} CASCADE; CREATE SCHEMA ${SCHEMA_NAME};
    SET search_path TO ${SCHEMA_NAME}`);
  await client.query(schema("SERIAL PRIMARY KEY"));
  return new PostgresDatabase(client);
}

/** @implements {Database} */
export class PostgresDatabase {
  /** @param {pg.Client} conn */
  constructor(conn) {
    this.conn = conn;
    this.depth = 0;
  }

  /** @template [R=unknown] @param {string} sql @param {SqlValue[]} params @returns {Promise<R[]>} */
  async all(sql, params = []) {
    return (await this.conn.query(numbered(sql), params)).rows;
  }

  /** @template [R=unknown] @param {string} sql @param {SqlValue[]} params @returns {Promise<R | undefined>} */
  async get(sql, params = []) {
    /** @type {R[]} */
    const rows = await this.all(sql, params);
    return rows[0];
  }

  /** @param {string} sql @param {SqlValue[]} params */
  async run(sql, params = []) {
    return (await this.conn.query(numbered(sql), params)).rowCount ?? 0;
  }

  /** @template T @param {() => Promise<T>} work @returns {Promise<T>} */
  async tx(work) {
    if (this.depth > 0) return work();
    await this.conn.query("BEGIN");
    this.depth++;
    try {
      const out = await work();
      this.depth--;
      await this.conn.query("COMMIT");
      return out;
    } catch (err) {
      this.depth--;
      await this.conn.query("ROLLBACK");
      throw err;
    }
  }

  async close() {
    // the connection serves the next world; the driver process's exit ends it
  }
}

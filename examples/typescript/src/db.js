// @ts-check
/** The SQLite database (sql.js, in memory): schema, statements and transactions. */
import initSqlJs from "sql.js";

/** @typedef {import('./types.js').Database} Database @typedef {import('./types.js').SqlValue} SqlValue */

const SCHEMA = `
CREATE TABLE execution_claims (
  session_id TEXT PRIMARY KEY,
  execution_id INTEGER NOT NULL,
  owner_id TEXT NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  phase TEXT NOT NULL CHECK (phase IN ('running', 'recovering', 'cancelling', 'cancelled', 'unknown')),
  assistant_id TEXT,
  recovery_error TEXT,
  recovery_attempts INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  assistant_id TEXT,
  input_id TEXT,
  request_id TEXT,
  writer TEXT NOT NULL,
  tool_call INTEGER NOT NULL DEFAULT 0 -- a tool event's call index in its Step; 0 for every other event
);
CREATE TABLE assistants (
  assistant_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  execution_id INTEGER NOT NULL,
  outcome TEXT
);
CREATE TABLE session_recovery (
  execution_id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  continuation_id TEXT
);
CREATE TABLE inputs (
  input_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('prompt', 'cont')),
  src INTEGER NOT NULL,
  gen INTEGER NOT NULL DEFAULT 0,
  delivery TEXT NOT NULL DEFAULT 'queue' CHECK (delivery IN ('steer', 'queue')),
  state TEXT NOT NULL,
  -- a continuation's recovery envelope, written by the conversion, checked by the promotion (decision 28)
  origin_session TEXT,
  content_digest TEXT,
  assistant_id TEXT,
  assistant_execution INTEGER,
  synthetic INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE cancelled_executions (
  execution_id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL
);
CREATE TABLE id_sequence (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO id_sequence VALUES ('execution', 0);
CREATE TABLE wake_rows (
  item TEXT PRIMARY KEY,
  rank INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  reserved TEXT NOT NULL DEFAULT '',
  turned INTEGER NOT NULL DEFAULT 0
);
`;

/** A fenced write that changed no row: the transaction rolls back. */
export class FenceLost extends Error {}

/** @type {import('sql.js').SqlJsStatic | null} */
let SQL = null;

/** The schema in either dialect: `serial` is the event sequence's column type. @param {string} serial */
export const schema = (serial) => SCHEMA.replace("seq INTEGER PRIMARY KEY AUTOINCREMENT", `seq ${serial}`);

/**
 * The database a world runs on: SQLite in memory through sql.js, or PostgreSQL through pg when `url` is
 * given (src/pg.js). Both answer the same async interface: all, get, run (rows changed), tx.
 * @param {string | null} url
 * @returns {Promise<Database>}
 */
export async function openDatabase(url = null) {
  if (url) {
    const { openPostgres } = await import("./pg.js");
    return openPostgres(url);
  }
  SQL ??= await initSqlJs();
  if (!IMAGE) { // the schema's DDL costs ~30 times what opening its image does: run it once per process
    const first = new SQL.Database();
    first.exec(schema("INTEGER PRIMARY KEY AUTOINCREMENT"));
    IMAGE = first.export();
    first.close();
  }
  const raw = new SQL.Database(IMAGE);
  // sql.js keeps the database in an emulated file system (MEMFS): with the default rollback journal every
  // transaction creates and deletes a journal file there, and every read looks for a hot one (a throwing
  // path lookup). The database is this process's alone, in memory: its journal in memory, its lock held.
  raw.exec(PRAGMAS);
  return new SqliteDatabase(raw);
}

const PRAGMAS = "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF";

/** The empty schema's database file, made once (a world's database opens from it). @type {Uint8Array | null} */
let IMAGE = null;

/** @implements {Database} */
export class SqliteDatabase {
  /** @param {import('sql.js').Database} raw */
  constructor(raw) {
    this.raw = raw;
    this.depth = 0;
    /** @type {Map<string, import('sql.js').Statement>} */
    this.statements = new Map();
  }

  /** Rows of a query, as objects (the caller states their type: types.ts Database).
   * @template [R=unknown] @param {string} sql @param {SqlValue[]} params @returns {Promise<R[]>} */
  async all(sql, params = []) {
    const stmt = this.prepared(sql);
    try {
      stmt.bind(params);
      /** @type {R[]} */
      const out = [];
      while (stmt.step()) out.push(/** @type {R} */ (/** @type {unknown} */ (stmt.getAsObject())));
      return out;
    } finally {
      stmt.reset();
    }
  }

  /** The statement of `sql`, prepared once per database (sql.js frees them all on close).
   * @param {string} sql @returns {import('sql.js').Statement} */
  prepared(sql) {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.raw.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** @template [R=unknown] @param {string} sql @param {SqlValue[]} params @returns {Promise<R | undefined>} */
  async get(sql, params = []) {
    /** @type {R[]} */
    const rows = await this.all(sql, params);
    return rows[0];
  }

  /** A write: the number of rows it changed. @param {string} sql @param {SqlValue[]} params */
  async run(sql, params = []) {
    this.prepared(sql).run(params);
    return this.raw.getRowsModified();
  }

  /** Run `work` in one transaction: committed when it resolves, rolled back when it throws.
   * @template T @param {() => Promise<T>} work @returns {Promise<T>} */
  async tx(work) {
    if (this.depth > 0) return work();
    this.raw.exec("BEGIN IMMEDIATE");
    this.depth++;
    try {
      const out = await work();
      this.depth--;
      this.raw.exec("COMMIT");
      return out;
    } catch (err) {
      this.depth--;
      this.raw.exec("ROLLBACK");
      throw err;
    }
  }

  /** The same database emptied back to the schema's image, its prepared statements kept: what a world
   * started again on it (a restore's replay) costs instead of a fresh database and every statement prepared
   * again. @returns {Promise<SqliteDatabase>} */
  async reset() {
    if (this.depth > 0) { // a transaction the previous world's code path left open: never committed
      this.depth = 0;
      this.raw.exec("ROLLBACK");
    }
    this.raw.exec(WIPE);
    return this;
  }

  async close() {
    this.raw.close();
  }
}

/** Every row the schema's image does not hold deleted, the sequences back at their start. */
const WIPE = `${[...SCHEMA.matchAll(/CREATE TABLE (\w+)/g)].map((m) => `DELETE FROM ${m[1]};`).join(" ")}
INSERT INTO id_sequence VALUES ('execution', 0); DELETE FROM sqlite_sequence;`;

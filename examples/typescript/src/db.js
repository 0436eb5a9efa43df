// @ts-check
/** The SQLite database (sql.js, in memory): schema, statements and transactions. */
import initSqlJs from "sql.js";

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
  writer TEXT NOT NULL
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
  state TEXT NOT NULL
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
  reserved TEXT NOT NULL DEFAULT ''
);
`;

/** A fenced write that changed no row: the transaction rolls back. */
export class FenceLost extends Error {}

let SQL = null;

export async function openDatabase() {
  SQL ??= await initSqlJs();
  const db = new Database(new SQL.Database());
  db.exec(SCHEMA);
  return db;
}

export class Database {
  constructor(raw) {
    this.raw = raw;
    this.depth = 0;
  }

  exec(sql) {
    this.raw.exec(sql);
  }

  /** Rows of a query, as objects. */
  all(sql, params = []) {
    const stmt = this.raw.prepare(sql);
    try {
      stmt.bind(params);
      const out = [];
      while (stmt.step()) out.push(stmt.getAsObject());
      return out;
    } finally {
      stmt.free();
    }
  }

  get(sql, params = []) {
    return this.all(sql, params)[0];
  }

  /** A write: the number of rows it changed. */
  run(sql, params = []) {
    this.raw.run(sql, params);
    return this.raw.getRowsModified();
  }

  /** Run `work` in one transaction: committed when it returns, rolled back when it throws. */
  tx(work) {
    if (this.depth > 0) return work();
    this.raw.exec("BEGIN IMMEDIATE");
    this.depth++;
    try {
      const out = work();
      this.depth--;
      this.raw.exec("COMMIT");
      return out;
    } catch (err) {
      this.depth--;
      this.raw.exec("ROLLBACK");
      throw err;
    }
  }
}

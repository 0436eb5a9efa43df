"""The implementation's statements, compiled once and run on the DBAPI cursor (sqlite).

Why: through `Connection.execute`, SQLAlchemy's per-statement work (the statement's cache key, the
compiled-cache lookup, an execution context, a result object) cost ~20 µs a statement against ~3 µs in
sqlite itself, and an atomic unit runs several. `run(conn, stmt, params)` is `conn.execute(stmt, params)`
for a statement built once (module level, bind parameters): on sqlite it compiles the statement for the
dialect on its first use (per set of parameter names: an INSERT's columns are the names given, as
SQLAlchemy compiles it), then runs the same SQL text with the same values on the connection's DBAPI
cursor, inside the same transaction. What SQLAlchemy would add is added here too: the columns' scalar
Python defaults of an INSERT, the bound literals' values, the types' bind and result processors (a
Boolean read back as bool), and a DBAPI error is raised as SQLAlchemy raises it (`sa.exc.IntegrityError`
for a refused constraint, the transaction still usable, as before). Anything else SQLAlchemy would do
at execution (a callable default, an expanding IN, onupdate) makes that statement go through
`conn.execute` as before; so do other dialects (PostgreSQL: the statements are the same, the path
SQLAlchemy's).

The answer has what the implementation's callers use of SQLAlchemy's result: `rowcount`, `first()`,
`scalar_one()`, `scalars()`, `all()`, iteration over rows (tuples), and `mappings()` (dicts by column key).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

# (id(stmt), parameter names, dialect) -> the compiled statement, or a _Fallback: SQLAlchemy's path (each
# holds its statement, so that no other statement ever gets its id while it is cached)
_prepared: dict[tuple, "_Prepared | _Fallback"] = {}


class Rows:
    """A statement's answer, fetched whole (the implementation's results are a few rows at most)."""

    __slots__ = ("rows", "keys", "rowcount")

    def __init__(self, rows: list, keys: tuple, rowcount: int):
        self.rows, self.keys, self.rowcount = rows, keys, rowcount

    def first(self):
        return self.rows[0] if self.rows else None

    def all(self) -> list:
        return list(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def scalar_one(self):
        if len(self.rows) != 1:
            raise (sa.exc.NoResultFound("No row was found when one was required") if not self.rows else
                   sa.exc.MultipleResultsFound("Multiple rows were found when exactly one was required"))
        return self.rows[0][0]

    def scalars(self) -> "Rows":
        return Rows([r[0] for r in self.rows], self.keys[:1], self.rowcount)

    def mappings(self) -> "Rows":
        keys = self.keys
        return Rows([dict(zip(keys, r)) for r in self.rows], keys, self.rowcount)


class _Prepared:
    __slots__ = ("stmt", "sql", "binds", "bind_fns", "keys", "result_fns")

    def __init__(self, stmt, compiled, dialect):
        self.stmt = stmt  # held: the cache is keyed by its id
        required = {name for name, b in compiled.binds.items() if b.required}
        # SQLAlchemy's own expansion (a literal IN list's values become parameters of their own), the
        # same for every call: only the required parameters come from the caller
        expanded = compiled.construct_expanded_state(dict.fromkeys(required))
        self.sql = expanded.statement
        defaults = {c.key: c.default.arg for c in compiled.insert_prefetch}
        # per positional parameter: its name, and the value it has when the caller does not give it
        self.binds = tuple((name, defaults[name] if name in defaults else _REQUIRED if name in required
                            else expanded.parameters[name]) for name in expanded.positiontup)
        procs = expanded.processors
        self.bind_fns = tuple(procs.get(name) for name in expanded.positiontup) if procs else None
        cols = compiled._result_columns
        self.keys = tuple(c[0] for c in cols)
        fns = tuple(c[3]._cached_result_processor(dialect, None) for c in cols)
        self.result_fns = fns if any(fns) else None


class _Fallback:
    __slots__ = ("stmt",)

    def __init__(self, stmt):
        self.stmt = stmt


_REQUIRED = object()


def _prepare(conn: Connection, stmt, names: tuple) -> _Prepared | _Fallback:
    dialect = conn.dialect
    compiled = stmt.compile(dialect=dialect, column_keys=sorted(names))
    if (compiled.positiontup is None or compiled.update_prefetch
            or any(not c.default.is_scalar for c in compiled.insert_prefetch)
            or any(b.callable is not None or b.expanding and b.required for b in compiled.binds.values())):
        return _Fallback(stmt)
    return _Prepared(stmt, compiled, dialect)


def run(conn: Connection, stmt, params: dict[str, Any] | None = None):
    """`conn.execute(stmt, params)` for a statement built once; on sqlite on the DBAPI cursor, compiled
    once (see the module's docstring): a `Rows`, else SQLAlchemy's own result."""
    dialect = conn.dialect
    if dialect.name != "sqlite" or not conn.in_transaction():  # (outside one: SQLAlchemy's autobegin)
        return conn.execute(stmt, params)
    params = params or {}
    key = (id(stmt), tuple(params), dialect)
    prep = _prepared.get(key, _REQUIRED)
    if prep is _REQUIRED:
        prep = _prepared[key] = _prepare(conn, stmt, key[1])
    if prep.__class__ is _Fallback:
        return conn.execute(stmt, params)
    args = []
    for name, default in prep.binds:
        value = params.get(name, default)
        if value is _REQUIRED:
            raise sa.exc.InvalidRequestError(f"A value is required for bind parameter {name!r}")
        args.append(value)
    if prep.bind_fns is not None:
        args = [v if fn is None else fn(v) for fn, v in zip(prep.bind_fns, args)]
    cur = conn.connection.dbapi_connection.cursor()
    try:
        cur.execute(prep.sql, args)
        rows = cur.fetchall() if cur.description is not None else []
    except dialect.loaded_dbapi.Error as exc:
        raise sa.exc.DBAPIError.instance(prep.sql, args, exc, dialect.loaded_dbapi.Error, dialect=dialect) from exc
    finally:
        rowcount = cur.rowcount
        cur.close()
    if prep.result_fns is not None and rows:
        fns = prep.result_fns
        rows = [tuple(v if fn is None else fn(v) for fn, v in zip(fns, r)) for r in rows]
    return Rows(rows, prep.keys, rowcount)

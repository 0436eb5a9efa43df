"""The bundled server's state mapping: its database (plus each actor's memory) read back as a twin State.

Replay, lockstep and the exhaustive walk compare the bundled server with the model through this one
function (binding.world.Scheduler.state); harness.conformance.diff names each field that differs.
"""

from __future__ import annotations

from typing import NamedTuple

from impl import ids
from impl.db import pg_sequence
from impl.schema import wake_row_t
from impl.snapshot import read_cursor as read_snapshot
from spec import model as M

from binding.actions import wake_item


# the last execution id issued: a row of id_sequence on sqlite, a sequence on PostgreSQL (impl/db.py next_id)
_ISSUED = "SELECT value FROM id_sequence WHERE name = 'execution'"
_ISSUED_PG = f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {pg_sequence('execution')}"
_WAKES = f"SELECT item, attempts, reserved, turned FROM {wake_row_t.name} WHERE kind = '{{kind}}'"  # the World's queue's kind


def why_of(recovery_error: str | None) -> str:
    """The twin's quarantine reason: the category that begins the implementation's recovery_error."""
    return "" if recovery_error is None else recovery_error.split(":", 1)[0]


def twin_assistant(cfg: M.Config, aid: str | None) -> int:
    """The twin's assistant id of an implementation's: Step k of execution e is Asst(e, k) (a restarted
    assistant is its Step's again); None is 0."""
    return 0 if aid is None else M.asst(cfg, *ids.assistant_step(aid))


def twin_state(cfg: M.Config, w, faults: frozenset = frozenset(), reader=None) -> M.State:
    """`w` is a binding.world.World; `faults` is the environment's history (not stored by the code);
    `reader` (binding.reads.Reader) reads the database, else `w.db.read()`."""
    if reader is not None:
        d = reader.read(cfg, lambda cur: durable(cfg, w, cur))
    else:
        with w.db.read() as conn:  # as impl.snapshot.read: the DBAPI cursor, no per-statement overhead
            d = durable(cfg, w, conn.connection.dbapi_connection.cursor())
    now = w.clock.now()
    grace = -cfg.eff_grace
    claim = tuple(M.NO_CLAIM if c is None else M.Claim(c[0], c[1], max(grace, c[2] - now), *c[3:])
                  for c in d.claims)
    return M.State(claim=claim, nextExec=d.nextExec, log=d.log, recovery=d.recovery, inputs=d.inputs,
                   cancelled=d.cancelled, faults=faults, wakes=d.wakes, **actor_fields(cfg, w))


class Durable(NamedTuple):
    """The twin's variables read from the database, in one read transaction; a claim is the twin's but
    for its lease's expiry time in place of the ttl (which depends on the clock, not the database)."""

    claims: tuple  # per cfg.sessions: None, or (execution, owner, lease_expires_at, phase, asst, quar, tries, why)
    nextExec: int
    log: tuple
    recovery: frozenset
    inputs: frozenset
    cancelled: frozenset
    wakes: tuple


def durable(cfg: M.Config, w, cur) -> Durable:
    """The database's part of the twin state, read on `cur` (a DBAPI cursor inside a read transaction)."""
    snap = read_snapshot(cur, assistants=False)
    cur.execute(_ISSUED_PG if w.db.is_postgresql else _ISSUED)
    (issued,), = cur.fetchall()
    rows = {}
    if cfg.wake_rows:
        cur.execute(_WAKES.format(kind=w.wakes.kind))
        rows = {item: (attempts, reserved or "", turned) for item, attempts, reserved, turned in cur.fetchall()}
        if cfg.wakes_tied:  # row 1 the Session's ordinary wake, row 2 its recovery wake (each keyed by the Session)
            cur.execute(_WAKES.format(kind=w.recovery_wakes.kind))
            tied = {item: (attempts, reserved or "", turned) for item, attempts, reserved, turned in cur.fetchall()}
            rows = {wake_item(1): rows.get(cfg.sessions[0]), wake_item(2): tied.get(cfg.sessions[0])}
    claims = []
    for s in cfg.sessions:
        c = snap.claims.get(s)
        claims.append(None if c is None else
                      (c.execution, c.owner, c.lease_expires_at, c.phase, twin_assistant(cfg, c.assistant),
                       c.quarantined, min(c.recovery_attempts, cfg.max_tries), why_of(c.recovery_error)))
    # an input event names its input as the twin's RequestId does: a prompt by number, a continuation by its
    # execution negated (only a defective identity check lets a request name one)
    src = {i.id: i.src if i.kind == "prompt" else -i.src for i in snap.inputs}
    return Durable(
        claims=tuple(claims), nextExec=issued + 1,
        log=tuple(M.Event(e.session, e.kind, src.get(e.input, 0), e.writer) if e.input is not None else
                  M.Event(e.session, e.kind, twin_assistant(cfg, e.assistant), e.writer, e.call) for e in snap.events),
        recovery=frozenset(M.RecRow(e, s) for e, s in snap.recovery),
        inputs=frozenset(M.Input(i.session, i.kind, i.src, i.state, ids.continuation_gen(i.id) if i.kind == "cont" else 0,
                                 i.flaw) for i in snap.inputs),
        cancelled=frozenset(M.RecRow(e, s) for e, s in snap.cancelled),
        wakes=wakes(cfg, rows))


def actor_fields(cfg: M.Config, w) -> dict:
    """The variables read from the actors' memory and the provider's record, not the database: run, fin,
    rec, effects, waker (each waker's plan) (the exhaustive walk maps only these after a probe that wrote no row: binding.savepoints)."""
    run, fin = [], []
    for n in cfg.nodes:
        node = w.node(n)
        r, f = node.runner, node.finalizer
        run.append(M.Runner(r.pc, r.session_id or "", r.execution_id or 0, twin_assistant(cfg, r.mem), r.active,
                            r.intr, r.ordinal, r.tool))
        fin.append(M.Fin(f.pc, f.session_id or "", f.execution_id or 0, f.owner_id or ""))
    rec = [M.Rec(x.pc, x.session_id or "", x.execution_id or 0, x.seen_owner, x.why)
           for x in (w.worker(r) for r in cfg.recoverers)]
    waker = tuple(frozenset(M.Plan(p["rank"], p["attempts"], p["slot"]) for p in k.plan) for k in w.wakers)
    return dict(run=tuple(run), fin=tuple(fin), rec=tuple(rec), effects=effects(w), waker=waker)


def wakes(cfg: M.Config, rows: dict) -> tuple:
    """The twin's wake rows from the implementation's (item wake_item(w): attempts, reserved slot, turned); a row
    that is absent has no pending work."""
    out = []
    for w in range(1, cfg.wake_rows + 1):
        got = rows.get(wake_item(w))
        out.append(M.WAKE_IDLE if got is None else M.Wake(True, got[0], got[1], bool(got[2])))
    return tuple(out)


def effects(w) -> frozenset:
    """The effects history: what the outside world saw (the shared provider's record of calls and
    reconciliations), not what any process remembers, so a crash does not erase it."""
    calls = {M.Effect(c.session_id, c.execution_id, c.owner_id, c.owner_id, "dispatch", c.step) for c in w.provider.calls}
    done = {M.Effect(x.session_id, x.execution_id, x.owner_id, x.node_id, "reconcile")
            for x in w.provider.reconciliations}
    tools = {M.Effect(x.session_id, x.execution_id, x.owner_id, x.node_id, "tool", x.step, x.call)
             for x in w.provider.tool_runs}
    return frozenset(calls | done | tools)

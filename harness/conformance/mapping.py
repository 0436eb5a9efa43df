"""The state mapping: the database (plus each actor's memory) read back as a twin State.

Replay, lockstep and the stress history check all compare implementation and model through this one
function; `diff` names each field that differs (`run[n1].mem: model 0, implementation 1`), model value
beside implementation value, never whole records.
"""

from __future__ import annotations

from typing import NamedTuple

from impl import ids
from impl.db import pg_sequence
from impl.schema import wake_row_t
from impl.snapshot import read_cursor as read_snapshot
from spec import model as M


# the last execution id issued: a row of id_sequence on sqlite, a sequence on PostgreSQL (impl/db.py next_id)
_ISSUED = "SELECT value FROM id_sequence WHERE name = 'execution'"
_ISSUED_PG = f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {pg_sequence('execution')}"
_WAKES = f"SELECT item, attempts, reserved FROM {wake_row_t.name} WHERE kind = '{{kind}}'"  # the World's queue's kind


def why_of(recovery_error: str | None) -> str:
    """The twin's quarantine reason: the category that begins the implementation's recovery_error."""
    return "" if recovery_error is None else recovery_error.split(":", 1)[0]


def twin_assistant(cfg: M.Config, aid: str | None) -> int:
    """The twin's assistant id of an implementation's: Step k of execution e is Asst(e, k) (a restarted
    assistant is its Step's again); None is 0."""
    return 0 if aid is None else M.asst(cfg, *ids.assistant_step(aid))


def twin_state(cfg: M.Config, w, faults: frozenset = frozenset(), reader=None) -> M.State:
    """`w` is a harness.conformance.scheduler.World; `faults` is the environment's history (not stored by
    the code); `reader` (harness.conformance.reads.Reader) reads the database, else `w.db.read()`."""
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
        rows = {item: (attempts, reserved or "") for item, attempts, reserved in cur.fetchall()}
    claims = []
    for s in cfg.sessions:
        c = snap.claims.get(s)
        claims.append(None if c is None else
                      (c.execution, c.owner, c.lease_expires_at, c.phase, twin_assistant(cfg, c.assistant),
                       c.quarantined, min(c.recovery_attempts, cfg.max_tries), why_of(c.recovery_error)))
    src = {i.id: i.src for i in snap.inputs}  # an input event names its prompt by number in the twin
    return Durable(
        claims=tuple(claims), nextExec=issued + 1,
        log=tuple(M.Event(e.session, e.kind, src.get(e.input, 0), e.writer) if e.input is not None else
                  M.Event(e.session, e.kind, twin_assistant(cfg, e.assistant), e.writer) for e in snap.events),
        recovery=frozenset(M.RecRow(e, s) for e, s in snap.recovery),
        inputs=frozenset(M.Input(i.session, i.kind, i.src, i.state, ids.continuation_gen(i.id) if i.kind == "cont" else 0)
                         for i in snap.inputs),
        cancelled=frozenset(M.RecRow(e, s) for e, s in snap.cancelled),
        wakes=wakes(cfg, rows))


def actor_fields(cfg: M.Config, w) -> dict:
    """The variables read from the actors' memory and the provider's record, not the database: run, fin,
    rec, effects (harness.conformance.conform maps only these after a probe that wrote no row)."""
    run, fin = [], []
    for n in cfg.nodes:
        node = w.node(n)
        r, f = node.runner, node.finalizer
        run.append(M.Runner(r.pc, r.session_id or "", r.execution_id or 0, twin_assistant(cfg, r.mem), r.active,
                            r.intr, r.ordinal, r.tool))
        fin.append(M.Fin(f.pc, f.session_id or "", f.execution_id or 0, f.owner_id or ""))
    rec = [M.Rec(x.pc, x.session_id or "", x.execution_id or 0, x.seen_owner, x.why)
           for x in (w.worker(r) for r in cfg.recoverers)]
    return dict(run=tuple(run), fin=tuple(fin), rec=tuple(rec), effects=effects(w))


def wakes(cfg: M.Config, rows: dict) -> tuple:
    """The twin's wake rows from the implementation's (item wake_item(w): attempts, reserved slot); a row
    that is absent has no pending work."""
    from harness.conformance.actions import wake_item
    out = []
    for w in range(1, cfg.wake_rows + 1):
        got = rows.get(wake_item(w))
        out.append(M.WAKE_IDLE if got is None else M.Wake(True, got[0], got[1]))
    return tuple(out)


def effects(w) -> frozenset:
    """The effects history: what the outside world saw (the shared provider's record of calls and
    reconciliations), not what any process remembers, so a crash does not erase it."""
    calls = {M.Effect(c.session_id, c.execution_id, c.owner_id, c.owner_id, "dispatch", c.step) for c in w.provider.calls}
    done = {M.Effect(x.session_id, x.execution_id, x.owner_id, x.node_id, "reconcile")
            for x in w.provider.reconciliations}
    tools = {M.Effect(x.session_id, x.execution_id, x.owner_id, x.node_id, "tool", x.step) for x in w.provider.tool_runs}
    return frozenset(calls | done | tools)


class Difference(NamedTuple):
    """One field where the model and the implementation disagree: `path` names it as the spec does
    (`run[n1].mem`, `claim[s1].ttl`, `log[2].kind`, `recovery[exec=1, sess=s1]`), the values are the
    field's own (never a whole record); an element of a set or sequence only one side has is `absent`."""

    path: str
    model: object
    impl: object

    def __str__(self) -> str:
        return f"{self.path}: model {show(self.model)}, implementation {show(self.impl)}"


ABSENT = type("Absent", (), {"__repr__": lambda self: "absent"})()


def show(v) -> str:
    """A field value as the spec writes it: TRUE/FALSE, "" for the empty name, records as field=value."""
    if v is ABSENT:
        return "absent"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if v == "":
        return '""'
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return "(" + ", ".join(f"{k}={show(x)}" for k, x in zip(v._fields, v)) + ")"
    return str(v)


def _record(path: str, m, i) -> list[Difference]:
    if hasattr(m, "_fields") and type(m) is type(i):
        return [Difference(f"{path}.{k}", a, b) for k, a, b in zip(m._fields, m, i) if a != b]
    return [Difference(path, m, i)]


def _keys(cfg: M.Config | None, var: str, n: int) -> list[str]:
    if var == "wakes":  # wake rows are numbered from 1, as in the spec
        return [str(k + 1) for k in range(n)]
    names = {"claim": "sessions", "run": "nodes", "fin": "nodes", "rec": "recoverers"}.get(var)
    got = tuple(getattr(cfg, names)) if cfg is not None and names else ()
    return list(got) if len(got) == n else [str(k) for k in range(n)]


def _key(x) -> str:
    if isinstance(x, M.Input):
        return f"{x.sess}/{x.kind}#{x.src}" + (f"/gen{x.gen}" if x.gen else "")
    if hasattr(x, "_fields"):
        return ", ".join(f"{k}={show(v)}" for k, v in zip(x._fields, x))
    return str(x)


def _set(var: str, m: frozenset, i: frozenset) -> list[Difference]:
    """Elements only one side has; inputs are matched by identity (Session, kind, source, gen), so an
    input whose state differs is one line naming its state."""
    if var == "inputs":
        ident = lambda x: (x.sess, x.kind, x.src, x.gen)
        mi, ii = {ident(x): x for x in m}, {ident(x): x for x in i}
        out = []
        for k in sorted(set(mi) | set(ii)):
            a, b = mi.get(k, ABSENT), ii.get(k, ABSENT)
            if a != b:
                where = f"inputs[{k[0]}/{k[1]}#{k[2]}" + (f"/gen{k[3]}" if k[3] else "") + "]"
                out += [Difference(f"{where}.state", a.state, b.state)] if ABSENT not in (a, b) else \
                    [Difference(where, "present" if a is not ABSENT else ABSENT, "present" if b is not ABSENT else ABSENT)]
        return out
    return [Difference(f"{var}[{_key(x)}]", "present" if x in m else ABSENT, "present" if x in i else ABSENT)
            for x in sorted(m ^ i, key=repr)]


def diff(model: M.State, impl: M.State, cfg: M.Config | None = None) -> list[Difference]:
    """One Difference per field that differs (unpacks as (path, model value, implementation value));
    `cfg` names the entries of per-Session, per-node and per-worker variables (else their index)."""
    out: list[Difference] = []
    for var in M.VARIABLES:
        m, i = getattr(model, var), getattr(impl, var)
        if m == i:
            continue
        if isinstance(m, frozenset) and isinstance(i, frozenset):
            out += _set(var, m, i)
        elif var == "log" and isinstance(m, tuple) and isinstance(i, tuple):
            for k in range(max(len(m), len(i))):
                a = m[k] if k < len(m) else ABSENT
                b = i[k] if k < len(i) else ABSENT
                if a != b:
                    out += _record(f"log[{k + 1}]", a, b)
        elif isinstance(m, tuple) and isinstance(i, tuple) and len(m) == len(i):
            for key, a, b in zip(_keys(cfg, var, len(m)), m, i):
                if a != b:
                    out += _record(f"{var}[{key}]", a, b)
        else:
            out.append(Difference(var, m, i))
    return out


def render_diff(delta: list[Difference], indent: str = "") -> list[str]:
    """The lines of a divergence: `run[n1].mem: model 0, implementation 1`, one per differing field."""
    return [f"{indent}{d}" for d in delta]

"""The state mapping: the database (plus each actor's memory) read back as a twin State.

Replay, lockstep and the stress history check all compare implementation and model through this one
function; `diff` names the variables that differ, model value beside implementation value.
"""

from __future__ import annotations

from impl import ids
from impl.snapshot import read as read_snapshot
from spec import model as M


_ISSUED = "SELECT value FROM id_sequence WHERE name = 'execution'"


def _asst(aid):
    return 0 if aid is None else ids.assistant_execution(aid)


def twin_state(cfg: M.Config, w, faults: frozenset = frozenset()) -> M.State:
    """`w` is a harness.conformance.scheduler.World; `faults` is the environment's history (not stored by the code)."""
    with w.db.read() as conn:  # one read transaction: the durable state and the execution sequence
        snap = read_snapshot(conn, assistants=False)
        issued = conn.exec_driver_sql(_ISSUED).scalar_one()
    now = w.clock.now()
    claim = []
    for s in cfg.sessions:
        c = snap.claims.get(s)
        claim.append(M.NO_CLAIM if c is None else
                     M.Claim(c.execution, c.owner, c.ttl(now), c.phase, _asst(c.assistant), c.quarantined))
    run, fin = [], []
    for n in cfg.nodes:
        node = w.node(n)
        r, f = node.runner, node.finalizer
        run.append(M.Runner(r.pc, r.session_id or "", r.execution_id or 0, _asst(r.mem), r.active, r.intr))
        fin.append(M.Fin(f.pc, f.session_id or "", f.execution_id or 0, f.owner_id or ""))
    rec = [M.Rec(x.pc, x.session_id or "", x.execution_id or 0) for x in (w.worker(r) for r in cfg.recoverers)]
    return M.State(
        claim=tuple(claim), nextExec=issued + 1,
        log=tuple(M.Event(e.session, e.kind, e.execution, e.writer) for e in snap.events),
        recovery=frozenset(M.RecRow(e, s) for e, s in snap.recovery),
        inputs=frozenset(M.Input(i.session, i.kind, i.src, i.state) for i in snap.inputs),
        run=tuple(run), fin=tuple(fin), rec=tuple(rec),
        cancelled=frozenset(M.RecRow(e, s) for e, s in snap.cancelled),
        faults=faults)


def diff(model: M.State, impl: M.State) -> list[tuple[str, object, object]]:
    """(variable, model value, implementation value) for each variable that differs."""
    return [(var, getattr(model, var), getattr(impl, var)) for var in M.VARIABLES
            if getattr(model, var) != getattr(impl, var)]

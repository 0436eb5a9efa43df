"""The executable twin of SessionExecution.tla: the same variables, actions, guards and hooks.

A state is an immutable, hashable `State`; each action is a function `(cfg, state, *params) -> State |
None` (None when its guard is false); `successors` enumerates `Next`. Every action mirrors the TLA+
operator of the same name line for line, the protocol only: where a known defect decides differently the
action calls the protocol's hook (`cfg.hooks.<hook>`, spec.hooks), and the configuration's defects switch
it through spec.mc's table, as MCSessionExecution.tla does for TLC. So the explorer's state graph equals
TLC's, defects included (tests/engines/test_equivalence.py).

The state types, `init` and the helper operators live in `spec.state`, `Config` in `spec.config`; this
module re-exports them, so `spec.model` stays the one name callers import.
"""

from __future__ import annotations

from typing import Iterator

from . import names as N
from .config import Config  # noqa: F401 - re-exported: callers use spec.model for the constants too
from .hooks import heartbeat_accepts as protocol_heartbeat_accepts
from .state import (  # noqa: F401 - re-exported: callers use spec.model for the state types too
    Claim, NO_CLAIM, Event, Effect, RecRow, Input, Runner, Fin, Rec, RUNNER_IDLE, FIN_IDLE, REC_IDLE, State,
    VARIABLES, init, _put, si, ni, owner_id, started, completed, has_row, row_for_exec, fenced, ordinary_ok,
    active_on, owner_active, selectable, in_order, delivery, eligible, scan_window, run_stale, fin_stale,
    lag_of, overdue, pausing, justified, foreign_row, asst, exec_of, step_asst, step_of, open_call, _ticking, listener_gate,
    _clock_may_advance, requests_of, prompts_of, _with_input, _runner_free, _acquire, _runner_at, _stop, _begin_effect,
    continuation, has_continuation, reconciled_calls, with_calls, CALL_INDICES, call_started, step_has_outcome,
    prompt_count, held_prompts, pending_inputs, find_input,
    Wake, WAKE_IDLE, Plan,
)
from .wake_plan import fresh_row, new_round, retried_row, rotate, wake_plan  # noqa: F401 - re-exported
from .conversion import (_conversion_commit, _promote_checked, ForgeContinuation,  # noqa: F401 - Next's
                         RecoveryConvertAckLost, RecoveryConvertFails, RecoveryReconvert)
from .wakes import (WakeArrive, WakeLost, WakeRead, WakeReserve, WakeScan, WakeScanQueue, WakeServe, WakeSync,
                    WakeAcquire, WakePromote, emit_wakes, waker_ids)  # noqa: F401 - the wake scans' actions
from .input_actions import Admit, ExactRetry, Resume, Steer, emit_inputs  # noqa: F401 - Admission, Steering
from .tools import (ToolStart, ToolRun, PublishToolSuccess, ToolSuccessFails, StepStartedFails,  # noqa: F401
                    StepEndedFails, MarkUnknown)
from .step_start import PublishStepStarted, StepStartedReturn, HostedReconcile, HostedReconcileFails  # noqa: F401


# ---------------------------------------------------------------- runner

def Acquire(cfg, st, n, i):
    if not (selectable(cfg, st, i) and in_order(cfg, st, i)):
        return None
    return _acquire(cfg, st, n, i, ordinary=True)


def PromoteContinuation(cfg, st, n, i):
    if cfg.wakes_tied:  # promotion only through a recovery wake (WakePromote)
        return None
    if not (i.state == "pending" and i.kind == "cont" and cfg.hooks.promotion_owned(cfg, st, i)):
        return None
    return _promote_checked(cfg, st, n, i)


def Renew(cfg, st, n):
    if not _runner_at(st, n, "acquired"):
        return None
    r = st.run[n]
    s = si(cfg, r.sess)
    c = st.claim[s]
    if cfg.hooks.renew_accepts(cfg, st, c, r, cfg.nodes[n]):
        return st._replace(claim=_put(st.claim, s, c._replace(ttl=cfg.lease)),
                           run=_put(st.run, n, r._replace(pc="renewed")))
    return st._replace(run=_put(st.run, n, r._replace(pc=cfg.hooks.failed_renewal_pc(cfg, st))))


def Dispatch(cfg, st, n):
    return _begin_effect(cfg, st, n, "dispatch", "streaming") if _runner_at(st, n, "renewed") else None


def OpenFragment(cfg, st, n):
    """The stream has begun: a partial fragment is open in publisher memory, which names no assistant."""
    if not (cfg.fragments > 0 and _runner_at(st, n, "streaming") and not st.run[n].active):
        return None
    return st._replace(run=_put(st.run, n, st.run[n]._replace(active=True)))


def _publish_terminal(cfg, st, n, kind, pc):
    """The commit of a terminal Step event; publisher memory waits for the listeners (the Return step)."""
    r = st.run[n]
    if not cfg.hooks.publish_ok(cfg, st, n):
        return _stop(st, n)
    return st._replace(log=st.log + (Event(r.sess, kind, step_asst(cfg, r), cfg.nodes[n]),),
                       run=_put(st.run, n, r._replace(pc=pc)))


def PublishStepFailed(cfg, st, n):
    if not _runner_at(st, n, "stepping"):
        return None
    return _publish_terminal(cfg, st, n, "Failed", "failed")


def StepFailedReturn(cfg, st, n):
    if not _runner_at(st, n, "failed"):
        return None
    return st._replace(run=_put(st.run, n, st.run[n]._replace(pc="done", active=False)))


def PublishStepEnded(cfg, st, n):
    if not (_runner_at(st, n, "stepping") and st.run[n].tool >= cfg.tools):  # the Step's tools settled first
        return None
    # the listener gate: memory still names the assistant, active; after the last Step the runner's
    # return is its release (ClearClaim), before it the return is StepEndedReturn
    return _publish_terminal(cfg, st, n, "Ended", "ended" if st.run[n].ordinal < cfg.max_steps else "done")


def StepEndedReturn(cfg, st, n):
    """Step.Ended's publish returns: memory marks the assistant inactive; the runner's next Step begins."""
    if not _runner_at(st, n, "ended"):
        return None
    r = st.run[n]
    return st._replace(run=_put(st.run, n, r._replace(pc="acquired", active=False, ordinal=r.ordinal + 1, tool=0)))


def ClearClaim(cfg, st, n):
    if not _runner_at(st, n, "done"):
        return None
    r = st.run[n]
    s = si(cfg, r.sess)
    if not ordinary_ok(st, s, r.exec, cfg.nodes[n]):
        return _stop(st, n)
    return st._replace(claim=_put(st.claim, s, NO_CLAIM), run=_put(st.run, n, RUNNER_IDLE))


def RunnerStop(cfg, st, n):
    r = st.run[n]
    if not (r.intr and r.pc not in ("idle", "stopped", "hung")):  # a hung runner takes no next step
        return None
    return _stop(st, n)


def RunnerExit(cfg, st, n):
    r = st.run[n]
    f = st.fin[n]
    if not (r.pc == "stopped" and not (f.pc != "idle" and f.exec == r.exec)):
        return None
    return st._replace(run=_put(st.run, n, RUNNER_IDLE))


# ---------------------------------------------------------------- cancellation

def CancelRequest(cfg, st, n, s):
    si_ = si(cfg, s)
    c = st.claim[si_]
    node = cfg.nodes[n]
    if not (st.fin[n].pc == "idle" and c.phase == "running" and c.ttl > 0):
        return None
    if cfg.process_local_routing and c.owner != node:
        return None
    run = st.run
    r = st.run[n]
    if c.owner == node and r.exec == c.exec and r.pc not in ("idle", "stopped"):
        run = _put(run, n, r._replace(intr=True))
    return st._replace(claim=_put(st.claim, si_, c._replace(phase="cancelling")),
                       fin=_put(st.fin, n, Fin("settle", s, c.exec, c.owner)), run=run)


def FinalizerReconcile(cfg, st, n):
    """The finalizer's span begins: its own supervision check, then the tools' reconciliation (an effect)."""
    f = st.fin[n]
    r = st.run[n]
    if f.pc != "settle" or (r.exec == f.exec and r.pc not in ("idle", "stopped")):
        return None  # the finalizer waits for its runner to stop
    if not cfg.hooks.finalizer_supervised(cfg, st, f):
        return st._replace(fin=_put(st.fin, n, FIN_IDLE))  # its own supervision check: stop, no effect
    return st._replace(effects=st.effects | {Effect(f.sess, f.exec, f.owner, cfg.nodes[n], "reconcile")},
                       fin=_put(st.fin, n, f._replace(pc="reconciling")))


def FinalizerSettle(cfg, st, n):
    """The fenced settlement after the reconciliation; a failed fence stops the finalizer, nothing written."""
    f = st.fin[n]
    r = st.run[n]
    if f.pc != "reconciling":
        return None
    s = si(cfg, f.sess)
    c = st.claim[s]
    if not (fenced(st, s, f.exec, f.owner) and c.phase == "cancelling"):
        return st._replace(fin=_put(st.fin, n, FIN_IDLE))
    a = c.asst
    mem, active = (r.mem, r.active) if r.exec == f.exec else (0, False)
    if cfg.hooks.restart_rejected(cfg, st, a, mem) or cfg.hooks.flush_raises(cfg, st, mem, active):
        return st  # the restart is rejected (the flush raises); it retries, live
    settle = cfg.hooks.settled_assistant(cfg, st, f, c, mem)  # the assistant it settles
    interrupt = cfg.hooks.interrupt_owed(cfg, st, settle, a, mem, active)
    # the durable failure reconciliation of every open tool call of the Step: never re-run
    log = with_calls(st.log, f.sess, "ToolFailed", a, f.owner, reconciled_calls(cfg, st, a))
    if cfg.hooks.restart_commits(cfg, st, a, mem):
        log += (Event(f.sess, "Started", a, f.owner),)
    log += (Event(f.sess, "Interrupted", settle, f.owner),) if interrupt else ()
    return st._replace(claim=_put(st.claim, s, c._replace(phase="cancelled")), log=log,
                       fin=_put(st.fin, n, f._replace(pc="clear")))


def FinalizerClear(cfg, st, n):
    f = st.fin[n]
    if f.pc != "clear":
        return None
    s = si(cfg, f.sess)
    if not (fenced(st, s, f.exec, f.owner) and st.claim[s].phase == "cancelled"):
        return st._replace(fin=_put(st.fin, n, FIN_IDLE))
    run = st.run if st.run[n].exec != f.exec else _put(st.run, n, RUNNER_IDLE)
    st = st._replace(claim=_put(st.claim, s, NO_CLAIM), cancelled=st.cancelled | {RecRow(f.exec, f.sess)},
                     fin=_put(st.fin, n, FIN_IDLE), run=run)
    if cfg.hooks.cancel_requeues(cfg, st):
        recovery = st.recovery if row_for_exec(st, f.exec) else st.recovery | {RecRow(f.exec, f.sess)}
        st = st._replace(recovery=recovery,
                         inputs=st.inputs | {continuation(f.sess, f.exec, cfg.hooks.continuation_gen(cfg, st, 0))})
    return st


# ---------------------------------------------------------------- lease keeping and time

def Heartbeat(cfg, st, n, s):
    si_ = si(cfg, s)
    c = st.claim[si_]
    if not (c.phase != "none" and c.owner == owner_id(cfg, n) and c.ttl < cfg.lease
            and cfg.hooks.heartbeat_accepts(cfg, st, c)
            and (active_on(st, n, c.exec) if n < len(cfg.nodes)
                 else st.rec[n - len(cfg.nodes)] in (Rec("converting", s, c.exec), Rec("reconciled", s, c.exec)))):
        return None
    return st._replace(claim=_put(st.claim, si_, c._replace(ttl=cfg.hooks.renewed_ttl(cfg, st, c))))


def Supervise(cfg, st, n):
    stop_run, stop_fin = run_stale(cfg, st, n), fin_stale(cfg, st, n)
    if not (stop_run or stop_fin):
        return None
    run = _put(st.run, n, st.run[n]._replace(pc="stopped")) if stop_run else st.run
    fin = _put(st.fin, n, FIN_IDLE) if stop_fin else st.fin
    return st._replace(run=run, fin=fin)


def Tick(cfg, st):
    """The clock advances; a tick that expires a working actor's lease is a pause (a fault)."""
    if not _clock_may_advance(cfg, st):
        return None
    paused = pausing(cfg, st)
    if paused and "pause" not in cfg.faults:
        return None
    return st._replace(claim=tuple(c._replace(ttl=c.ttl - 1) if _ticking(cfg, c) else c for c in st.claim),
                       faults=st.faults | {"pause"} if paused else st.faults)


# ---------------------------------------------------------------- recovery

def RecoveryScan(cfg, st, r, s):
    """A read: the worker remembers the window's row it will try (Session, execution, former owner)."""
    si_ = si(cfg, s)
    if not (st.rec[r].pc == "idle" and si_ in scan_window(cfg, st)):
        return None
    c = st.claim[si_]
    return st._replace(rec=_put(st.rec, r, Rec("scanned", s, c.exec, c.owner)))


def RecoveryTakeover(cfg, st, r):
    """The compare-and-swap on what the scan saw; a lost race changes nothing durable."""
    w = st.rec[r]
    if w.pc != "scanned":
        return None
    si_ = si(cfg, w.sess)
    c = st.claim[si_]
    if not cfg.hooks.takeover_matches(cfg, st, c, w):
        return st._replace(rec=_put(st.rec, r, REC_IDLE))
    if cfg.hooks.takeover_quarantines(cfg, st, c):
        return st._replace(claim=_put(st.claim, si_, c._replace(quar=True, why="invalid")),  # in place: the node owns it
                           rec=_put(st.rec, r, REC_IDLE))
    tries = min(c.tries + 1, cfg.max_tries)
    return st._replace(claim=_put(st.claim, si_, c._replace(owner=cfg.recoverers[r], ttl=cfg.lease,
                                                            phase=cfg.hooks.takeover_phase(cfg, st, c), tries=tries)),
                       rec=_put(st.rec, r, Rec("converting", w.sess, w.exec)))


def RecoveryReconcile(cfg, st, r):
    """Under its own exact, live claim the worker reconciles the execution's hosted tools (an effect, read
    from this move by NoOverlappingEffects: spec.invariants.recovery_effects_begun); a worker whose lease is
    gone begins none and leaves the lost lease to its conversion."""
    w = st.rec[r]
    if w.pc != "converting":
        return None
    return st._replace(rec=_put(st.rec, r, w._replace(pc="reconciled")))


def RecoveryConvert(cfg, st, r):
    """Finish cancellation-owned work, convert recovering work, quarantine malformed work; a conversion
    that lost its lease is released for a later takeover until the claim's attempts are used up."""
    w = st.rec[r]
    if w.pc != "reconciled":
        return None
    s = si(cfg, w.sess)
    c = st.claim[s]
    me = cfg.recoverers[r]
    if not fenced(st, s, w.exec, me):
        mine = c.exec == w.exec and c.owner == me and not c.quar
        if mine and cfg.hooks.may_retry(cfg, st, c):
            return st._replace(rec=_put(st.rec, r, REC_IDLE))  # released: a later takeover retries
        return st._replace(rec=_put(st.rec, r, w._replace(pc="quarantining", why="exhausted")))
    a = c.asst
    open_ = a != 0 and not completed(st, a)
    # every tool call of the Step with no recorded outcome: reconciled, never re-run
    reconciled = with_calls(st.log, w.sess, "ToolFailed", a, me, reconciled_calls(cfg, st, a))
    if cfg.hooks.finishes_cancellation(cfg, st, c):
        log = reconciled + ((Event(w.sess, "Interrupted", a, me),) if open_ else ())
        return st._replace(claim=_put(st.claim, s, NO_CLAIM), log=log, cancelled=st.cancelled | {RecRow(w.exec, w.sess)},
                           rec=_put(st.rec, r, REC_IDLE))
    conflict = cfg.hooks.conversion_conflict(cfg, st, w)
    if c.phase not in ("recovering", "unknown") or conflict:
        why = "malformed" if conflict else "invalid"
        return st._replace(rec=_put(st.rec, r, w._replace(pc="quarantining", why=why)))
    gen = cfg.hooks.continuation_gen(cfg, st, 0)
    return _conversion_commit(cfg, st, r, w, gen)._replace(rec=_put(st.rec, r, REC_IDLE))


def RecoveryQuarantine(cfg, st, r):
    w = st.rec[r]
    if w.pc != "quarantining":
        return None
    s = si(cfg, w.sess)
    c = st.claim[s]
    claim = st.claim
    if cfg.hooks.quarantine_matches(cfg, st, c, w, cfg.recoverers[r]):
        claim = _put(claim, s, c._replace(quar=True, why=w.why))
    return st._replace(claim=claim, rec=_put(st.rec, r, REC_IDLE))


# ---------------------------------------------------------------- faults

def Crash(cfg, st, n):
    """n indexes cfg.nodes then cfg.recoverers (a recovery worker is a process of its own)."""
    if "crash" not in cfg.faults:
        return None
    if n >= len(cfg.nodes):
        r = n - len(cfg.nodes)
        if st.rec[r].pc == "idle":
            return None
        return st._replace(rec=_put(st.rec, r, REC_IDLE), faults=st.faults | {"crash"})
    if st.run[n].pc == "idle" and st.fin[n].pc == "idle":
        return None
    return st._replace(run=_put(st.run, n, RUNNER_IDLE), fin=_put(st.fin, n, FIN_IDLE),
                       faults=st.faults | {"crash"})


def ListenerHangs(cfg, st, n):
    """A listener of a committed Step event never returns (Residual R2): the runner stays at its gate, hung
    (its return disabled, no interrupt observed) while its node's heartbeat keeps the lease live. `n`
    indexes cfg.nodes then cfg.recoverers, as for every fault."""
    if not (N.HANG in cfg.faults and n < len(cfg.nodes) and listener_gate(st, n)):
        return None
    return st._replace(run=_put(st.run, n, st.run[n]._replace(pc="hung")), faults=st.faults | {N.HANG})


def CorruptRecoveryRow(cfg, st, s, e):
    if "corrupt" not in cfg.faults or "corrupt" in st.faults:
        return None
    if not any(c.exec == e and cfg.sessions[k] != s for k, c in enumerate(st.claim)) or row_for_exec(st, e):
        return None
    return st._replace(recovery=st.recovery | {RecRow(e, s)}, faults=st.faults | {"corrupt"})


# ---------------------------------------------------------------- Next

def successors(cfg: Config, st: State) -> Iterator[tuple[str, tuple, State]]:
    """Yield (action name, parameters, next state) for every enabled action instance that changes state.

    Instances are tried in a fixed order; an actor is only offered the actions its pc can enable (each
    action still checks its own guard), which is what makes the explorer fast enough to matter."""
    out: list = []
    runner_fn = dict(RUNNER_STEPS)  # read at call time, so tests can swap in a mutant step

    def emit(name, params, nxt):
        if nxt is not None and nxt != st:
            out.append((name, params, nxt))

    inputs = sorted(st.inputs) if any(r.pc == "idle" for r in st.run) else ()
    for n, node in enumerate(cfg.nodes):
        r = st.run[n]
        if r.pc == "idle":
            for i in inputs:
                emit("Acquire", (node, i), Acquire(cfg, st, n, i))
                emit("PromoteContinuation", (node, i), PromoteContinuation(cfg, st, n, i))
        else:
            for name in _RUNNER_BY_PC[r.pc]:
                emit(name, (node,), runner_fn[name](cfg, st, n))
        if st.fin[n].pc == "idle":
            for s in cfg.sessions:
                emit("CancelRequest", (node, s), CancelRequest(cfg, st, n, s))
        elif st.fin[n].pc == "settle":
            emit("FinalizerReconcile", (node,), FinalizerReconcile(cfg, st, n))
        elif st.fin[n].pc == "reconciling":
            emit("FinalizerSettle", (node,), FinalizerSettle(cfg, st, n))
        else:
            emit("FinalizerClear", (node,), FinalizerClear(cfg, st, n))
        emit("Supervise", (node,), Supervise(cfg, st, n))
    # a heartbeat needs a lease below Lease: with Lease 1 an expired one, which the protocol's HeartbeatAccepts
    # refuses, so its instances are offered only with a longer lease or that hook switched
    if cfg.lease > 1 or cfg.hooks.heartbeat_accepts is not protocol_heartbeat_accepts:
        for k, who in enumerate(cfg.nodes + cfg.recoverers):
            for s in cfg.sessions:
                emit("Heartbeat", (who, s), Heartbeat(cfg, st, k, s))
    emit("Tick", (), Tick(cfg, st))
    for r, who in enumerate(cfg.recoverers):
        pc = st.rec[r].pc
        if pc == "idle":
            for s in cfg.sessions:
                emit("RecoveryScan", (who, s), RecoveryScan(cfg, st, r, s))
        elif pc == "scanned":
            emit("RecoveryTakeover", (who,), RecoveryTakeover(cfg, st, r))
        elif pc == "converting":
            emit("RecoveryReconcile", (who,), RecoveryReconcile(cfg, st, r))
        elif pc == "reconciled":
            emit("RecoveryConvert", (who,), RecoveryConvert(cfg, st, r))
            if N.ACK_LOST in cfg.faults:
                emit("RecoveryConvertAckLost", (who,), RecoveryConvertAckLost(cfg, st, r))
                emit("RecoveryConvertFails", (who,), RecoveryConvertFails(cfg, st, r))
        elif pc == "reconverting":
            emit("RecoveryReconvert", (who,), RecoveryReconvert(cfg, st, r))
        else:
            emit("RecoveryQuarantine", (who,), RecoveryQuarantine(cfg, st, r))
    if "crash" in cfg.faults:
        for k, who in enumerate(cfg.nodes + cfg.recoverers):
            emit("Crash", (who,), Crash(cfg, st, k))
    if "corrupt" in cfg.faults and "corrupt" not in st.faults:
        for s in cfg.sessions:
            for e in range(1, cfg.max_exec + 1):
                emit("CorruptRecoveryRow", (s, e), CorruptRecoveryRow(cfg, st, s, e))
    if N.FORGE in cfg.faults and N.FORGE not in st.faults:  # recovery's pending continuations, as it made them
        for k in sorted(i for i in st.inputs if i == continuation(i.sess, i.src, 0)):
            for f in N.CONTINUATION_FLAWS:
                emit("ForgeContinuation", (k.sess, k.src, f), ForgeContinuation(cfg, st, k.sess, k.src, f))
    if cfg.wake_rows:
        emit_wakes(cfg, st, emit)
    emit_inputs(cfg, st, emit)
    return iter(out)


RUNNER_STEPS = (
    ("Renew", Renew), ("Dispatch", Dispatch), ("OpenFragment", OpenFragment), ("PublishStepStarted", PublishStepStarted),
    ("StepStartedReturn", StepStartedReturn), ("HostedReconcile", HostedReconcile),
    ("HostedReconcileFails", HostedReconcileFails), ("ToolStart", ToolStart), ("ToolRun", ToolRun),
    ("PublishToolSuccess", PublishToolSuccess), ("ToolSuccessFails", ToolSuccessFails),
    ("StepStartedFails", StepStartedFails), ("StepEndedFails", StepEndedFails), ("MarkUnknown", MarkUnknown),
    ("PublishStepFailed", PublishStepFailed),
    ("StepFailedReturn", StepFailedReturn), ("PublishStepEnded", PublishStepEnded),
    ("StepEndedReturn", StepEndedReturn), ("ClearClaim", ClearClaim), ("RunnerStop", RunnerStop), ("RunnerExit", RunnerExit),
    ("ListenerHangs", ListenerHangs),
)

# which runner actions a pc can enable (RunnerStop: any busy pc once interrupted, but hung; RunnerExit:
# stopped; ListenerHangs: a listener gate)
_RUNNER_BY_PC = {
    "acquired": ("Renew", "RunnerStop"), "renewed": ("Dispatch", "RunnerStop"),
    "streaming": ("OpenFragment", "PublishStepStarted", "StepStartedFails", "RunnerStop"),
    "started": ("StepStartedReturn", "ListenerHangs", "RunnerStop"),
    "hosted": ("HostedReconcile", "HostedReconcileFails", "RunnerStop"),
    "stepping": ("ToolStart", "PublishStepFailed", "PublishStepEnded", "StepEndedFails", "RunnerStop"),
    "tool_started": ("ToolRun", "RunnerStop"), "tooling": ("PublishToolSuccess", "ToolSuccessFails", "RunnerStop"),
    "tool_failed": ("MarkUnknown", "RunnerStop"), "publish_failed": ("MarkUnknown", "RunnerStop"),
    "failed": ("StepFailedReturn", "ListenerHangs", "RunnerStop"), "ended": ("StepEndedReturn", "ListenerHangs", "RunnerStop"),
    "done": ("ClearClaim", "ListenerHangs", "RunnerStop"), "stopped": ("RunnerExit",), "hung": (),
}


assert {name for name, _ in RUNNER_STEPS} | {
    "Acquire", "PromoteContinuation", "CancelRequest", "FinalizerReconcile", "FinalizerSettle", "FinalizerClear",
    "Heartbeat", "Supervise", "Tick", "RecoveryScan", "RecoveryTakeover", "RecoveryReconcile", "RecoveryConvert", "RecoveryQuarantine", "Crash",
    "CorruptRecoveryRow", "ForgeContinuation", "RecoveryConvertAckLost", "RecoveryConvertFails", "RecoveryReconvert", "WakeArrive",
    "WakeScan", "WakeRead", "WakeReserve", "WakeServe", "WakeLost", "WakeSync", "WakeScanQueue", "WakeAcquire",
    "WakePromote", "Admit", "ExactRetry", "Resume", "Steer",
} == set(N.ACTIONS), "the twin's Next must cover the registry's actions exactly"


def apply(cfg: Config, st: State, name: str, params: tuple) -> State | None:
    """Apply one named action instance (used by replay): the successor with that label, or None."""
    for label, p, nxt in successors(cfg, st):
        if label == name and p == params:
            return nxt
    return None

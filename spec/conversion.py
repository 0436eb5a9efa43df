"""The conversion's writes and its retry after a lost commit acknowledgement (TLA+ ConversionCommit,
RecoveryConvertAckLost, RecoveryConvertFails, RecoveryReconvert), and the continuation's validation at promotion
with the fault it defends against (PromoteChecked, ForgeContinuation; spec/README.md decision 28), apart from
spec.model so that module stays readable; spec.model re-exports the actions and calls them from `successors`.
"""

from __future__ import annotations

from . import names as N
from .config import Config
from .state import (NO_CLAIM, REC_IDLE, Effect, Event, Input, Rec, RecRow, State, _acquire, _put, _runner_free,
                    _with_input, completed, continuation, fenced, has_continuation, has_row, reconciled_calls,
                    row_for_exec, si, step_of, with_calls)


def _conversion_commit(cfg: Config, st: State, r: int, w: Rec, gen: int, replay: bool = False) -> State:
    """TLA+ ConversionCommit: one conversion's writes, each keyed (the row by execution, the continuation by
    its id) or fenced by the claim (the settling Step.Interrupted, the claim's removal)."""
    s = si(cfg, w.sess)
    c = st.claim[s]
    me = cfg.recoverers[r]
    is_fenced = fenced(st, s, w.exec, me)
    a = c.asst
    # every tool call of the Step with no recorded outcome: reconciled (ToolFailed), never re-run
    calls = reconciled_calls(cfg, st, a) if is_fenced else ()
    rerun = bool(calls) and cfg.hooks.conversion_reruns(cfg, st)
    log = with_calls(st.log, w.sess, "ToolSucceeded" if rerun else "ToolFailed", a, me, calls)
    interrupt = is_fenced and a != 0 and not completed(st, a) and cfg.hooks.conversion_settles(cfg, st) \
        and (not replay or cfg.hooks.replay_settles(cfg, st))
    log += (Event(w.sess, "Interrupted", a, me),) if interrupt else ()
    effects = st.effects | {Effect(w.sess, w.exec, me, me, "tool", step_of(cfg, a), i) for i in calls} if rerun else st.effects
    recovery = st.recovery if row_for_exec(st, w.exec) else st.recovery | {RecRow(w.exec, w.sess)}
    k = continuation(w.sess, w.exec, gen)
    inputs = st.inputs if has_continuation(st, k) else st.inputs | {k}
    claim = _put(st.claim, s, NO_CLAIM) if is_fenced else st.claim
    return st._replace(claim=claim, log=log, recovery=recovery, inputs=inputs, effects=effects)


def RecoveryConvertFails(cfg, st, r):
    """The conversion's transaction does not commit (the connection is lost before its COMMIT reached the
    database): nothing durable changes, and the worker, seeing the same connection error as a lost
    acknowledgement, is left reconverting with only (Session, execution). Where the acknowledgement can be
    lost (RecoveryConvertAckLost's guard), the COMMIT can."""
    if N.ACK_LOST not in cfg.faults:
        return None
    w = st.rec[r]
    if w.pc != "reconciled":
        return None
    s = si(cfg, w.sess)
    c = st.claim[s]
    if not fenced(st, s, w.exec, cfg.recoverers[r]):
        return None
    if cfg.hooks.finishes_cancellation(cfg, st, c):
        return None
    if c.phase not in ("recovering", "unknown") or cfg.hooks.conversion_conflict(cfg, st, w):
        return None
    return st._replace(rec=_put(st.rec, r, Rec("reconverting", w.sess, w.exec)), faults=st.faults | {N.ACK_LOST})


def RecoveryConvertAckLost(cfg, st, r):
    """The conversion commits, its acknowledgement lost: the worker keeps only (Session, execution)."""
    if N.ACK_LOST not in cfg.faults:
        return None
    w = st.rec[r]
    if w.pc != "reconciled":
        return None
    s = si(cfg, w.sess)
    c = st.claim[s]
    if not fenced(st, s, w.exec, cfg.recoverers[r]):
        return None
    if cfg.hooks.finishes_cancellation(cfg, st, c):
        return None
    if c.phase not in ("recovering", "unknown") or cfg.hooks.conversion_conflict(cfg, st, w):
        return None
    nx = _conversion_commit(cfg, st, r, w, cfg.hooks.continuation_gen(cfg, st, 0))
    return nx._replace(rec=_put(st.rec, r, Rec("reconverting", w.sess, w.exec)), faults=st.faults | {N.ACK_LOST})


def RecoveryReconvert(cfg, st, r):
    """The retry with the same ids: its own committed work found, nothing changes; else the conversion's
    keyed and fenced writes are replayed (no re-validation: its own row would read as a conflict)."""
    w = st.rec[r]
    if w.pc != "reconverting":
        return None
    gen = cfg.hooks.continuation_gen(cfg, st, 1)
    if not (has_row(st, w.sess, w.exec) and has_continuation(st, continuation(w.sess, w.exec, gen))):
        st = _conversion_commit(cfg, st, r, w, gen, replay=True)
    return st._replace(rec=_put(st.rec, r, REC_IDLE))


def _promote_checked(cfg: Config, st: State, n: int, i: Input) -> State | None:
    """TLA+ PromoteChecked: the promotion's transaction validates the continuation row (ContinuationValid); a
    valid one is acquired, a flawed one refused and quarantined under the same conditions (the wake rows are
    the caller's)."""
    if cfg.hooks.continuation_valid(cfg, st, i):
        return _acquire(cfg, st, n, i, ordinary=False)
    s = si(cfg, i.sess)
    if not (_runner_free(st, n) and i in st.inputs and st.nextExec <= cfg.max_exec
            and cfg.hooks.claim_free(cfg, st, s, False)):
        return None
    return st._replace(inputs=_with_input(st, i, "quarantined"))


def ForgeContinuation(cfg, st, s, e, f):
    """An adversary (or a corrupt write) replaces recovery's pending continuation of (s, e) with a
    continuation-kind row of the one flaw f (names.CONTINUATION_FLAWS): one-shot (decision 28)."""
    if N.FORGE not in cfg.faults or N.FORGE in st.faults:
        return None
    k = continuation(s, e, 0)
    if k not in st.inputs:
        return None
    return st._replace(inputs=(st.inputs - {k}) | {k._replace(flaw=f)}, faults=st.faults | {N.FORGE})

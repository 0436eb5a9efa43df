"""Why a wake-scan action instance is not enabled (spec.guards' section "wake scans", kept apart to keep
that module readable): the first failing conjunct of its TLA+ guard, None when it holds."""

from __future__ import annotations

from . import model as M
from . import wakes as W


def _row(cfg, w) -> str | None:
    if not isinstance(w, int) or isinstance(w, bool) or not 1 <= w <= cfg.wake_rows:
        return f"{w} is not a wake row (1..WakeRows = 1..{cfg.wake_rows})"
    return None


def WakeArrive(cfg, st, w):
    if cfg.wakes_tied:
        return "wake rows are tied to their work (WakesTied): the syncer inserts them (WakeSync)"
    return _row(cfg, w) or (f"wake row {w} already has pending work" if st.wakes[w - 1].work else None)


def WakeSync(cfg, st, w):
    if not cfg.wakes_tied:
        return "wake rows are not tied to their work (WakesTied is off): work arrives by WakeArrive"
    if problem := _row(cfg, w):
        return problem
    if st.wakes[w - 1].work:
        return f"wake row {w} already has pending work"
    kind = "ordinary" if w == 1 else "recovery"
    if st.claim[0].phase != "none":
        return f"{cfg.sessions[0]} is claimed (the syncer wakes unclaimed Sessions only)"
    return None if W.wake_work(cfg, st, w) else f"no {kind} work of {cfg.sessions[0]} waits"


def _take(cfg, st, n, w, i, row):
    if not cfg.wakes_tied:
        return "wake rows are not tied to their work (WakesTied is off): a woken row is served by WakeServe"
    if problem := _row(cfg, w):
        return problem
    kind = "ordinary" if row == 1 else "recovery"
    if w != row:
        return f"wake row {w} is not the {kind} wake (row {row})"
    if st.wakes[w - 1].woken == "":
        return f"wake row {w} holds no reservation"
    if n not in cfg.nodes:
        return f"{n} is not a node"
    n = M.ni(cfg, n)
    if i.sess != cfg.sessions[0] or i.state != "pending":
        return f"input {i} is not a pending input of {cfg.sessions[0]}"
    if row == 1 and not (cfg.hooks.wake_selects(cfg, st, i) and M.in_order(cfg, st, i)):
        return f"the ordinary wake cannot take input {i}: ordinary selection does not pick it"
    if row == 2 and not (i.kind == "cont" and cfg.hooks.promotion_owned(cfg, st, i)):
        return f"the recovery wake cannot take input {i}: it is not a continuation recovery owns"
    if (W.WakeAcquire if row == 1 else W.WakePromote)(cfg, st, n, w, i) is None:
        return "the acquisition is not enabled (runner busy, claim held, input gone or ids exhausted)"
    return None


def WakeAcquire(cfg, st, n, w, i):
    return _take(cfg, st, n, w, i, 1)


def WakePromote(cfg, st, n, w, i):
    return _take(cfg, st, n, w, i, 2)


def WakeScan(cfg, st):
    if cfg.wake_rows == 0:
        return "wake scans are not modelled (WakeRows = 0)"
    if cfg.wakes_tied:
        return "tied wake rows: each kind's queue is scanned apart (WakeScanQueue)"
    if cfg.wakers > 1:
        return f"with {cfg.wakers} wakers a scan is a read and a reservation (WakeRead, WakeReserve)"
    fresh, again = M.wake_plan(cfg, st)
    return None if fresh or again else "no wake row waits unreserved (nothing to plan)"


def WakeScanQueue(cfg, st, w):
    if not cfg.wakes_tied:
        return "wake rows are not tied to their work (WakesTied is off): one scan reads every row (WakeScan)"
    if problem := _row(cfg, w):
        return problem
    x = st.wakes[w - 1]
    if not x.work:
        return f"wake row {w} has no pending work"
    return f"wake row {w} is reserved already" if x.woken else None


def _waker(cfg, k) -> str | None:
    if cfg.wakers <= 1:
        return "one waker: its scan is one action (WakeScan)"
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= cfg.wakers:
        return f"{k} is not a waker (1..Wakers = 1..{cfg.wakers})"
    return None


def WakeRead(cfg, st, k):
    if problem := _waker(cfg, k):
        return problem
    if st.waker[k - 1]:
        return f"waker {k} holds a plan it has not reserved yet"
    fresh, again = M.wake_plan(cfg, st)
    return None if fresh or again else "no wake row waits unreserved (nothing to plan)"


def WakeReserve(cfg, st, k):
    return _waker(cfg, k) or (None if st.waker[k - 1] else f"waker {k} has read no plan")


def _woken(cfg, st, w):
    return _row(cfg, w) or (f"wake row {w} holds no reservation" if st.wakes[w - 1].woken == "" else None)


def WakeServe(cfg, st, w):
    if cfg.wakes_tied:
        return "wake rows are tied to their work (WakesTied): a woken row is served by WakeAcquire or WakePromote"
    return _woken(cfg, st, w)


def WakeLost(cfg, st, w):
    if problem := _woken(cfg, st, w):
        return problem
    if cfg.wakes_tied and W.WakeLost(cfg, st, w) is None:
        return f"wake row {w}'s redrive has work to take (a tied row lapses only when it finds none)"
    return None

"""Why a wake-scan action instance is not enabled (spec.guards' section "wake scans", kept apart to keep
that module readable): the first failing conjunct of its TLA+ guard, None when it holds."""

from __future__ import annotations

from . import model as M


def _row(cfg, w) -> str | None:
    if not isinstance(w, int) or isinstance(w, bool) or not 1 <= w <= cfg.wake_rows:
        return f"{w} is not a wake row (1..WakeRows = 1..{cfg.wake_rows})"
    return None


def WakeArrive(cfg, st, w):
    return _row(cfg, w) or (f"wake row {w} already has pending work" if st.wakes[w - 1].work else None)


def WakeScan(cfg, st):
    if cfg.wake_rows == 0:
        return "wake scans are not modelled (WakeRows = 0)"
    if cfg.wakers > 1:
        return f"with {cfg.wakers} wakers a scan is a read and a reservation (WakeRead, WakeReserve)"
    fresh, again = M.wake_plan(cfg, st)
    return None if fresh or again else "no wake row waits unreserved (nothing to plan)"


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


WakeServe = WakeLost = _woken

"""The wake scan's plan (TLA+ FreshRow, RetriedRow, PlanFresh, PlanRetried, NewRound): which rows one scan
reserves, as impl/wakes.py's plan_batch plans them. Read by the wake actions (spec/wakes.py) and their
guards; spec.model re-exports it."""

from __future__ import annotations

from .config import Config
from .state import State

def fresh_row(st: State, w: int) -> bool:
    """Row w (1-based) has pending work, no reservation, and was never woken."""
    x = st.wakes[w - 1]
    return x.work and x.woken == "" and x.tries == 0


def retried_row(st: State, w: int) -> bool:
    """Row w has pending work, no reservation, and was woken before (a retry)."""
    x = st.wakes[w - 1]
    return x.work and x.woken == "" and x.tries > 0


def rotate(cfg: Config, t: int) -> int:
    return 1 if t >= cfg.max_wake_tries else t + 1


def wake_plan(cfg: Config, st: State) -> tuple[list[int], list[int]]:
    """TLA+ PlanFresh, PlanRetried: the rows one wake scan reserves, as plan_batch plans them."""
    rows = range(1, cfg.wake_rows + 1)
    fresh = [w for w in rows if fresh_row(st, w)]
    retried = [w for w in rows if retried_row(st, w)]
    first = fresh[:cfg.hooks.fresh_slots(cfg, st)]
    unturned = retried if new_round(cfg, st) else [w for w in retried if not st.wakes[w - 1].turned]
    order = unturned + [w for w in retried if w not in unturned]  # those whose turn has not come first
    again = order[:cfg.wake_batch - len(first)]
    return fresh[:cfg.wake_batch - len(again)], again


def new_round(cfg: Config, st: State) -> bool:
    """TLA+ ~RetryRounds \\/ NewRound: every waiting retried row was woken in the current round (or the
    rounds are off, the wake-retry-oldest-first defect), so every one may take a retry slot, oldest first."""
    rows = range(1, cfg.wake_rows + 1)
    return not cfg.hooks.retry_rounds(cfg, st) or all(st.wakes[w - 1].turned for w in rows if retried_row(st, w))

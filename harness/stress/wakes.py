"""The wake rows in a commit history, checked apart from the Sessions (harness/stress/checker.py keeps
those per Session): the wake-row table is one, shared by every Session and every waker.

A wake action's commit (WakeArrive, WakeScan, WakeRead, WakeReserve, WakeServe, WakeLost) must be the
twin's action on the folded wake rows (the ordinary wake queue's row of rank w is the twin's row w: the scan's oldest-first
order) yielding the rows recorded after it, and change nothing else; every other commit must leave the
wake rows as they were. With racing wakers (Wakers > 1: a stress run's node processes, one waker each) a
waker's read keeps its plan in memory until its reservation: the twin's plan after the read is folded, and
the plan recorded with the waker's next step (its memory before it) must be that one. Each wake commit's edge is checked against the action invariants (WakePlanShared:
a scan with fresh and retried rows waiting reserves one of each). FreshWorkKeepsCapacity and
RetryAdvances speak of infinite behaviours (findings.UNEVALUATED); what a bounded history shows of them
is WakePlanShared on every scan.
"""

from __future__ import annotations

from spec import invariants as I
from spec import model as M
from spec.actions import apply_direct

from harness import registry as R
from harness.conformance.diff import diff
from harness.stress.records import Commit, fmt

ACTIONS = (R.WAKE_ARRIVE, R.WAKE_SCAN, R.WAKE_READ, R.WAKE_RESERVE, R.WAKE_SERVE, R.WAKE_LOST)
PLANNED = (R.WAKE_READ, R.WAKE_RESERVE)  # a waker's two steps (Wakers > 1), its plan recorded as memory
_WAKES = frozenset({M.State._fields.index("wakes")})


class WakeCheck:
    """The folded wake rows and the check of each commit against them (findings go to `checker.find`)."""

    def __init__(self, checker):
        self.checker = checker
        self.cfg = checker.cfg
        self.rows: list = []  # the recorded wake-row table: [kind, item, rank, attempts, reserved]
        self.base = M.init(self.cfg)  # the rest of a state the wake invariants read nothing of
        self.plans = self.base.waker  # each waker's plan as the twin has it after that waker's last step

    def twin(self, rows: list, c: Commit) -> tuple:
        """The twin's wake rows of a recorded table (a row outside 1..WakeRows, or two of one rank, is a
        finding: the history names a row the twin has no place for)."""
        out = [M.WAKE_IDLE] * self.cfg.wake_rows
        for kind, item, rank, attempts, reserved, *turned in rows:  # turned: recorded since issue 31 item 3
            if kind != self.checker.words.ordinary:
                continue
            if not 1 <= rank <= self.cfg.wake_rows or out[rank - 1] != M.WAKE_IDLE:
                self.checker.find(c.row, "record", [], None, f"wake row {item} of rank {rank} has no twin row "
                                  f"(1..WakeRows = 1..{self.cfg.wake_rows}, one row each)")
                continue
            out[rank - 1] = M.Wake(True, attempts, reserved or "", bool(turned and turned[0]))
        return tuple(out)

    def check(self, c: Commit) -> None:
        """Check one commit's effect on the wake rows, then fold it."""
        if c.action in ACTIONS and c.params is not None:
            self._step(c)
        elif c.wakes is not None and c.wakes != self.rows:
            self.checker.find(c.row, "transition", [], c.focus, f"{c.action} changed the wake rows, which only a "
                              "wake action changes")
        if c.wakes is not None:
            self.rows = c.wakes

    def _step(self, c: Commit) -> None:
        ch = self.checker
        pre = self.base._replace(wakes=self.twin(self.rows, c), waker=self.plans)
        post = self.base._replace(wakes=self.twin(self.rows if c.wakes is None else c.wakes, c), waker=self.plans)
        if c.action in PLANNED:  # the waker's memory before its step: the plan its read kept (none before a read)
            k = c.params[0]
            if not 1 <= k <= len(self.plans):
                ch.find(c.row, "record", [], None, f"{c.action}({k}): the run has {len(self.plans)} racing wakers")
                return
            recorded = c.plans.get(k, frozenset())
            if recorded != self.plans[k - 1]:
                ch.find(c.row, "memory", [], None, f"waker {k}'s plan before {c.action}: recorded "
                        f"{sorted(recorded)}, the twin's {sorted(self.plans[k - 1])}")
        outside = [name for name, moved in (("claims", c.claims != ch.claims), ("events", c.events),
                                            ("inputs", c.inputs), ("recovery rows", c.recovery),
                                            ("cancelled executions", c.cancelled),
                                            ("execution sequence", c.exec_mark != ch.exec_mark)) if moved]
        if outside:
            ch.find(c.row, "transition", [], None, f"{c.action} wrote outside the wake rows: " + ", ".join(outside))
        nxt = apply_direct(self.cfg, pre, c.action, c.params)
        if nxt is not None:  # a waker's plan is its memory: the twin's, which its next step's record is held to
            post = post._replace(waker=nxt.waker)
            self.plans = nxt.waker
        if nxt is None:
            if post.wakes != pre.wakes:
                ch.find(c.row, "transition", [], None, f"{c.action}{fmt(c.params)} is not enabled in the twin, "
                        "yet the commit changed the wake rows")
        else:
            bad = diff(nxt, post, self.cfg)
            if bad:
                ch.find(c.row, "transition", [], None, f"{c.action}{fmt(c.params)} yields different wake rows: "
                        + "; ".join(str(d) for d in bad[:8]))
        broken = I.check_state(self.cfg, post, _WAKES) + I.check_edge(self.cfg, pre, post)
        if broken:
            ch.find(c.row, "invariant", broken, None, f"after {c.action}{fmt(c.params)}: " + ", ".join(broken))

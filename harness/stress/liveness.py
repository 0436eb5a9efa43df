"""Bounded liveness on a stress history: after the last fault, every Session with pending input is served
within k leases.

The spec's liveness properties (PendingInputsEventuallyServed, SessionsEventuallyAvailable) speak of
infinite behaviours under fairness and eventually no faults; a bounded run can check their bounded form
on its tail. Walking the commit history (impl/history.py) in order, a Session **waits** while it has a
pending input (a prompt or a continuation in state `pending`) and its claim is not quarantined (held
for an operator: an end, not a wait); a wait is **served** by the commit that takes one of its pending
inputs (Acquire, PromoteContinuation, a Steer: the input leaves `pending`). Time is measured in leases,
from the later of the wait's start and the end of the last fault (`after`), on the commits' wall clock
(`clock="wall"`: a node's skewed clock does not move it) or on their clock readings (`clock="now"`: a
deterministic history's manual clock). `k` is the longest served wait; a wait still open at `end` that
is longer than `bound` leases is a **stranded** Session, and a wait served after more than `bound` is
served **late**: each a failure that names the Session.

The wake rows' reservations the same way (the twin's WakeServe and WakeLost, fair and the environment's: a
reserved row is eventually served or lapses): a reservation is open from the commit that reserves a row
to the one that clears it (its redrive served it, or it was released, by its waker or, when its waker died
with it, by a later scan's lapsed release); one still held `bound` leases after the later of its start and
the last fault is a **stranded reservation**, a failure naming the row.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LivenessReport:
    bound: float  # leases
    after: float | None  # the last fault's end, in the history's time (None: no fault)
    k: float = 0.0  # the longest served wait after the last fault, in leases
    k_session: str | None = None
    served: int = 0  # waits served after the last fault
    stranded: list[tuple[str, float]] = field(default_factory=list)  # (Session, leases waited so far)
    late: list[tuple[str, float]] = field(default_factory=list)  # served, but after more than the bound
    waiting: list[tuple[str, float]] = field(default_factory=list)  # open at the end, within the bound
    reservations: int = 0  # wake reservations ended after the last fault
    held: list[tuple[str, float]] = field(default_factory=list)  # (wake row, leases) held past the bound

    @property
    def ok(self) -> bool:
        return not self.stranded and not self.late and not self.held

    @property
    def failures(self) -> list[tuple[str, float]]:
        return self.stranded + self.late + self.held

    def lines(self) -> list[str]:
        after = "no fault" if self.after is None else "the last fault"
        out = [f"liveness      after {after}: {self.served:,} waits served, the longest k = {self.k:.1f} leases"
               + (f" (Session {self.k_session})" if self.k_session else "") + f"; bound {self.bound:g} leases"]
        for s, w in self.late[:8]:
            out.append(f"    - served late: Session {s} waited {w:.1f} leases (bound {self.bound:g})")
        for s, w in self.stranded:
            out.append(f"    - stranded: Session {s} has had pending input for {w:.1f} leases, unserved "
                       f"(bound {self.bound:g})")
        if self.waiting:
            out.append("    still waiting at the end, within the bound: "
                       + ", ".join(f"{s} {w:.1f}" for s, w in self.waiting[:8]))
        for row, w in self.held[:8]:
            out.append(f"    - wake reservation held: row {row} stayed reserved for {w:.1f} leases, neither served "
                       f"nor released (bound {self.bound:g})")
        return out


class Liveness:
    """Fed the history's rows in seq order (`feed`), then `finish(end)`."""

    def __init__(self, lease: float, bound: float, after: float | None, clock: str = "wall"):
        self.lease, self.bound, self.after, self.clock = lease, bound, after, clock
        self.state: dict[int, tuple[str, str]] = {}  # input id -> (Session, state)
        self.pending: dict[str, set[int]] = {}  # Session -> its pending inputs
        self.quarantined: set[str] = set()
        self.since: dict[str, float] = {}  # Session -> when its open wait began
        self.report = LivenessReport(bound, after)
        self.last = None
        self.reserved: dict[str, float] = {}  # wake row (kind/item) -> when its reservation began

    def time(self, row: dict) -> float:
        return row[self.clock]

    def feed(self, row: dict) -> None:
        t = self.time(row)
        self.last = t if self.last is None else max(self.last, t)
        served = set()
        for iid, s, _kind, _src, state, *_ in row["delta"].get("inputs", ()):
            old = self.state.get(iid)
            self.state[iid] = (s, state)
            if state == "pending":
                self.pending.setdefault(s, set()).add(iid)
            else:
                self.pending.get(s, set()).discard(iid)
                if old is not None and old[1] == "pending":
                    served.add(s)
        self.quarantined = {c[0] for c in row["claims"] if c[6] is not None}
        if "wakes" in row["delta"]:  # the whole wake-row table, when the commit changed it
            self._reservations({f"{kind}/{item}" for kind, item, _rank, _tries, reserved, *_ in row["delta"]["wakes"]
                                if reserved}, t)
        for s in set(self.pending) | set(self.since):
            if s in served and s in self.since:
                self._served(s, t)
            waiting = bool(self.pending.get(s)) and s not in self.quarantined
            if not waiting:
                self.since.pop(s, None)
            elif s not in self.since:
                self.since[s] = t

    def _reservations(self, now_reserved: set, t: float) -> None:
        for w in set(self.reserved) - now_reserved:  # served or released
            start = self.reserved.pop(w)
            if self.after is None or t >= self.after:
                self.report.reservations += 1
                self._held(w, start, t)
        for w in now_reserved - set(self.reserved):
            self.reserved[w] = t

    def _held(self, w: str, start: float, t: float) -> None:
        held = max(0.0, (t - (start if self.after is None else max(start, self.after))) / self.lease)
        if held > self.bound:
            self.report.held.append((w, held))

    def _wait(self, s: str, t: float) -> float:
        start = self.since.pop(s)
        if self.after is not None:
            start = max(start, self.after)
        return max(0.0, (t - start) / self.lease)

    def _served(self, s: str, t: float) -> None:
        if self.after is not None and t < self.after:
            self.since.pop(s)
            return
        w = self._wait(s, t)
        rep = self.report
        rep.served += 1
        if w > self.bound:
            rep.late.append((s, w))
        if w > rep.k:
            rep.k, rep.k_session = w, s

    def finish(self, end: float | None = None) -> LivenessReport:
        """The waits still open at `end` (default: the last commit's time)."""
        end = self.last if end is None else end
        rep = self.report
        for s in sorted(self.since):
            w = self._wait(s, end) if end is not None else 0.0
            (rep.stranded if w > self.bound else rep.waiting).append((s, w))
        for w, start in sorted(self.reserved.items()):
            if end is not None:
                self._held(w, start, end)
        return rep


def check_rows(rows, lease: float, bound: float, after: float | None = None, end: float | None = None,
               clock: str = "wall") -> LivenessReport:
    """The check on decoded history rows (impl/history.py `read_rows`)."""
    live = Liveness(lease, bound, after, clock)
    for row in rows:
        live.feed(row)
    return live.finish(end)

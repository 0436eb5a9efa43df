"""The physical checks of a stress run, on its node processes' effect logs (`effects-<node>.jsonl`).

What commits nothing is not in the commit history: each provider dispatch and each finalizer step is
appended by its node (binding/stress/node.py, for the bundled server) with its clock readings and wall-clock interval.
`check_effects` reads them all after the run:

- NoPhysicalReplay: a dispatch under the live lease its own renewal set (no renewal of its own is a
  violation; a dispatch past that lease, by the node's clock as the call physically began, is a
  TimelyDispatch breach: a pause between renewal and dispatch);
- supervision: a finalizer step committed on an expired lease of its exact claim is a violation of
  NoOverlappingEffects; one fenced off, or one begun after its claim was lost, is a breach (a pause);
- effect intervals per Session (with recovery's, from the history check): an overlap of two owners'
  effects on one Session is a breach (a stalled process: a pause the twin allows only as a fault).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from harness import registry as R


@dataclass
class EffectReport:
    violations: list[str] = field(default_factory=list)
    breaches: Counter = field(default_factory=Counter)  # environment assumption breaches, by kind
    counts: Counter = field(default_factory=Counter)  # effect records read, by kind (dispatch, fin)
    where: list = field(default_factory=list)  # (breach key, owners, wall t0, wall t1): for attribution


def read_effects(run_dir: Path):
    """Every effect record of the run's nodes (a line cut by SIGKILL mid-write is skipped)."""
    for path in sorted(run_dir.glob("effects-*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                yield json.loads(line)
            except ValueError:
                continue


def check_effects(run_dir: Path, lease_ticks: int, recovery_intervals) -> EffectReport:
    """The physical checks above; `recovery_intervals`: (session, execution, worker, t0, t1) from the
    history check (`checker.Checker.recovery_intervals`)."""
    rep = EffectReport()
    intervals = defaultdict(list)  # session -> (t0, t1, execution, owner, kind)
    for e in read_effects(run_dir):
        rep.counts[e["k"]] += 1
        if e["k"] == "dispatch":
            _note(rep, e, _dispatch(rep, e, lease_ticks))
            intervals[e["s"]].append((e["t0"], e["t1"], e["e"], e["o"], "dispatch"))
        elif e["k"] == "fin":
            _note(rep, e, _finalizer_step(rep, e))
            intervals[e["s"]].append((e["t0"], e["t1"], e["e"], e["o"], "finalizer"))
    for s, e, r, t0, t1 in recovery_intervals:
        intervals[s].append((t0, t1, e, r, "recovery"))
    pairs = [p for items in intervals.values() for p in _overlap_pairs(items)]
    if pairs:
        key = f"{R.SYNCHRONIZED_CLOCKS} (a paused process acted past its lease: effects of two owners overlapped on a Session, in wall time)"
        rep.breaches[key] += len(pairs)
        rep.where += [(key, (a[3], b[3]), min(a[0], b[0]), max(a[1], b[1])) for a, b in pairs]
    return rep


def _note(rep: EffectReport, e: dict, key: str | None) -> None:
    if key is not None:
        rep.where.append((key, (e["o"],), e["t0"], e["t1"]))


def _dispatch(rep: EffectReport, e: dict, lease_ticks: int) -> str | None:
    """Check one dispatch; the key of the breach it is, if one."""
    if e.get("renewed") is None:
        rep.violations.append(f"{R.NO_PHYSICAL_REPLAY}: {e['o']} dispatched execution {e['e']} of {e['s']} "
                              "with no renewal of its own")
    elif max(e["now"], e.get("phys", e["now"])) >= e["renewed"] + lease_ticks:  # as the call physically began
        key = f"{R.TIMELY_DISPATCH} (a pause between renewal and provider dispatch outlived the lease)"
        rep.breaches[key] += 1
        return key
    return None


def _finalizer_step(rep: EffectReport, e: dict) -> str | None:
    """Check one finalizer step; the key of the breach it is, if one."""
    seen = e.get("seen")
    exact = seen is not None and seen[0] == e["e"] and seen[1] == e["o"]
    if exact and e["now"] >= seen[2] and e.get("ok"):
        rep.violations.append(
            f"{R.NO_OVERLAPPING_EFFECTS}: finalizer of {e['o']} committed {e['action']} for execution "
            f"{e['e']} of {e['s']} at clock {e['now']}, its lease expired at {seen[2]}")
    elif exact and e["now"] >= seen[2]:
        key = f"{R.SYNCHRONIZED_CLOCKS} (a finalizer stepped on an expired lease; the fence refused it)"
        rep.breaches[key] += 1
        return key
    elif not exact:
        key = f"{R.SYNCHRONIZED_CLOCKS} (a paused finalizer resumed after losing its claim)"
        rep.breaches[key] += 1
        return key
    return None


def _overlap_pairs(items: list[tuple]) -> list[tuple]:
    """Pairs of intervals of different (execution, owner) that overlap in wall time."""
    items = sorted(items)
    out = []
    for k, a in enumerate(items):
        for b in items[k + 1:]:
            if b[0] >= a[1]:
                break
            if (a[2], a[3]) != (b[2], b[3]):
                out.append((a, b))
    return out

"""What the gate's stages hand to its reports: a StageResult per stage, carrying one Check per sub-check.

One shape for every report, so that the summary table, the JSON report (harness/reports/report.py), the
JUnit file (junit.py) and the GitHub Actions annotations (github.py) say the same thing. A check that
failed says where, when it can: `file` and `line` point at the trace step that failed or at the TLA+
line defining the violated invariant (harness/reports/locate.py finds them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

PASS, FAIL, SKIP = "pass", "fail", "skip"
TARGET_SECONDS = 300  # the gate's time budget on 2 cores; the summary says whether it was met


@dataclass
class Check:
    """One sub-check of a stage: a configuration and engine, a trace, a kill-matrix defect."""
    name: str
    status: str
    detail: str = ""
    seconds: float = 0.0
    kind: str = ""  # on a failure, what failed (InvariantViolation, ReplayFailure, ...): JUnit's `type`
    file: str | None = None  # where the failure points (relative to the working directory when inside it)
    line: int | None = None
    reused: bool = False  # the result of an earlier run with the same inputs (harness/reports/tlcruns.py)


@dataclass
class StageResult:
    name: str
    status: str
    detail: str = ""
    seconds: float = 0.0
    checks: list[Check] = field(default_factory=list)
    kind: str = ""  # on a failure of the stage as a whole (no failing check says why): JUnit's `type`
    file: str | None = None
    line: int | None = None
    reused: bool = False  # earlier gate runs' results gave some of it (its checks say which; twin = TLC: TLC's side)


def target_line(total: float, target: float = TARGET_SECONDS) -> str:
    """`target 300 s: met`, or `target 300 s: missed by N s` (N rounded up: 300.2 s misses by 1 s)."""
    if total <= target:
        return f"target {target:.0f} s: met"
    missed = int(-(-(total - target) // 1))
    return f"target {target:.0f} s: missed by {missed} s"

"""The gate's fence-branch check: the table harness/engines/fences.py counts, printed, and its verdict."""

from __future__ import annotations

from harness.engines import fences
from harness.reports.results import FAIL, PASS, Check


def fence_branches(tallies) -> Check:
    """Which branch of each fenced action's fence the configurations reach, printed as a table; it fails when
    a branch names.FENCE_UNREACHABLE does not explain has no edge, or one it lists has."""
    cells = fences.table(tallies)
    print("\n".join(["      fence branches (edges, first configuration; - : names.FENCE_UNREACHABLE says why)"]
                    + fences.render(cells)), flush=True)
    wrong = fences.problems(cells)
    live = sum(1 for k, _ in cells.values() if k)
    detail = "; ".join(wrong) if wrong else (f"{live} of {len(cells)} branches live, "
                                             f"{len(cells) - live} explained in names.FENCE_UNREACHABLE")
    return Check("explorer fence branches", FAIL if wrong else PASS, detail)

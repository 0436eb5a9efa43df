"""Which named boundaries an edge may fire: only those that follow its action (spec/boundary_names.py,
`Boundary.follows`). A failpoint fired in the wrong unit holds a replay's actor where its trace does not mean
(a race reproduced at the wrong place), and tells of a code path that took the wrong branch: replay and the
exhaustive walk fail an edge that fires one. Not where the twin itself runs a defect: a defect may fold two
units into one (resume-drains-without-request acquires inside Resume), so its edge fires the other's boundary.
"""

from __future__ import annotations

from spec import names as N


def stray(action: str, fired) -> list[str]:
    """The boundaries in `fired` (names, in order) that an edge of `action` must not fire."""
    return [b for b in fired if action not in N.BOUNDARIES[b].follows]


def problem(action: str, fired) -> str | None:
    """One line when the edge fired a boundary of another action, naming what each follows; else None."""
    bad = stray(action, fired)
    if not bad:
        return None
    return "fired " + ", ".join(f"{b} (which follows {' or '.join(N.BOUNDARIES[b].follows)})" for b in bad)

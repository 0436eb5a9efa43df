"""Fence branches: for each fenced action, which of its fence's branches the gate's configurations reach.

A fenced action reads its actor's claim by identity (Session, execution, owner) before it writes, and the
code then goes one of three ways: the claim is still its exact, live claim (`held`), it is its own claim
with the lease run out (`expired`), or another execution or owner holds the row, or no one does
(`replaced`: a successor, a takeover, a release). A check is only as strong as the branches its
configurations reach: the reviews' overlap bugs live in `replaced` (issue 30, "every fence branch of
every fenced action is live"). The branch is read off the state before the edge, with the identity the
actor works under; a takeover's identity is the owner its scan saw, so its `expired` branch is the one
where its compare-and-swap matches.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from spec import model as M
from spec import names as N

from harness.registry import RECOVERY_TAKEOVER

HELD, EXPIRED, REPLACED = "held", "expired", "replaced"
BRANCHES = (HELD, EXPIRED, REPLACED)


def identity(cfg: M.Config, st: M.State, action: str, params: tuple) -> tuple[str, int, str] | None:
    """(Session, execution, owner) the actor of `action` works under, before it acts."""
    actor = N.ACTIONS[action].actor
    if actor == "runner":
        n = M.ni(cfg, params[0])
        r = st.run[n]
        return r.sess, r.exec, cfg.nodes[n]
    if actor == "finalizer":
        f = st.fin[M.ni(cfg, params[0])]
        return f.sess, f.exec, f.owner
    if actor == "recovery":
        r = cfg.recoverers.index(params[0])
        w = st.rec[r]
        return w.sess, w.exec, (w.seen if action == RECOVERY_TAKEOVER else cfg.recoverers[r])
    return None


def branch(cfg: M.Config, st: M.State, action: str, params: tuple) -> str | None:
    """The fence branch `action` takes from `st`, or None for an action with no fence."""
    if action not in N.FENCED_ACTIONS:
        return None
    sess, exe, owner = identity(cfg, st, action, params)
    c = st.claim[M.si(cfg, sess)]
    if c.phase == "none" or c.exec != exe or c.owner != owner:
        return REPLACED
    return HELD if c.ttl > 0 else EXPIRED


def tally(cfg: M.Config, graph) -> Counter:
    """Edges per (action, branch) in an explored graph (one kept with its edges)."""
    counts: Counter = Counter()
    for i, out in enumerate(graph.succ):
        st = graph.states[i]
        for name, params, _ in out:
            b = branch(cfg, st, name, params)
            if b is not None:
                counts[name, b] += 1
    return counts


def table(tallies: Iterable[tuple[str, Counter]]) -> dict[tuple[str, str], tuple[int, str]]:
    """Every (fenced action, branch): its edges summed over the configurations, and the first that has any."""
    cells = {(a, b): (0, "") for a in N.FENCED_ACTIONS for b in BRANCHES}
    for name, counts in tallies:
        for key, k in counts.items():
            total, first = cells[key]
            cells[key] = (total + k, first or name)
    return cells


def dead(cells: dict) -> list[tuple[str, str]]:
    """The branches no configuration reaches, less those the protocol itself rules out (names.FENCE_UNREACHABLE)."""
    return [key for key, (k, _) in cells.items() if k == 0 and key not in N.FENCE_UNREACHABLE]


def stale(cells: dict) -> list[tuple[str, str]]:
    """Branches names.FENCE_UNREACHABLE says no configuration reaches, which one now does."""
    return [key for key in N.FENCE_UNREACHABLE if cells.get(key, (0, ""))[0] > 0]


def problems(cells: dict) -> list[str]:
    return ([f"{a} {b}: no gate configuration reaches it" for a, b in dead(cells)]
            + [f"{a} {b}: reached on {cells[a, b][1]}, yet names.FENCE_UNREACHABLE says not" for a, b in stale(cells)])


def render(cells: dict) -> list[str]:
    """The table the gate prints: edges per branch and the first configuration with any; `-` for a branch
    names.FENCE_UNREACHABLE explains, `NONE` for one it does not."""
    width = max(map(len, N.FENCED_ACTIONS))
    lines = [f"  {'fenced action':<{width}}  " + "  ".join(f"{b:<20}" for b in BRANCHES)]
    for a in N.FENCED_ACTIONS:
        row = []
        for b in BRANCHES:
            k, first = cells[a, b]
            row.append(f"{k:,} ({first})" if k else "-" if (a, b) in N.FENCE_UNREACHABLE else "NONE")
        lines.append(f"  {a:<{width}}  " + "  ".join(f"{c:<20}" for c in row))
    return lines

"""Symmetry: the permutations of Nodes (and of Sessions) that map reachable states to reachable states,
and a canonical form of a state under them (TLC's `SYMMETRY Permutations(Nodes) \\cup ...`).

Why it is sound here: every node runs the same code with the same constants, and no action, guard or
invariant orders nodes or names one; every Session likewise gets the same prompts and constants, and
what orders Sessions' work orders it by execution id (the scan window, the oldest row first), never by
the Session's name. So permuting the names in a state (and the positions of the per-node and
per-Session tuples) gives a state that is reachable exactly when the first one is, whose successors are
the permuted successors, and which satisfies the same state and action invariants. Recoverers are not
permuted (a model has one, or two in `workers`, where permuting them would be sound too but is not
asked of TLC). Liveness is another matter: TLC warns that symmetry can hide a liveness violation (a
fair cycle in the quotient need not be one in the graph), so the engines refuse liveness with symmetry.

The canonical fingerprint of a state is the least hash over its orbit; the canonical representative is
the orbit's state with that hash. Both are the same for every state of an orbit.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from .config import Config
from .state import Claim, Effect, Event, Fin, Input, Rec, RecRow, Runner, State

SCOPES = ("nodes", "sessions")  # what a symmetry may permute: Nodes alone, or Nodes and Sessions


class Perm(NamedTuple):
    names: dict  # node and Session names to their images
    nodes: tuple[int, ...]  # new run[j] / fin[j] is the old one at nodes[j]
    sessions: tuple[int, ...]  # new claim[j] is the old one at sessions[j]


def perms(cfg: Config, scope: str = "nodes") -> list[Perm]:
    """Every permutation of Nodes (and, with scope "sessions", of Sessions too), identity first."""
    if scope not in SCOPES:
        raise ValueError(f"unknown symmetry {scope!r}; known: {', '.join(SCOPES)}")
    if scope == "sessions" and cfg.left_claims:
        raise ValueError(f"symmetry 'sessions' is refused with left_claims: a Session whose claim is left at "
                         f"Init is not like the others")
    n, s = range(len(cfg.nodes)), range(len(cfg.sessions))
    out = []
    for np in itertools.permutations(n):
        for sp in itertools.permutations(s) if scope == "sessions" else [tuple(s)]:
            names = {cfg.nodes[i]: cfg.nodes[np[i]] for i in n} | {cfg.sessions[i]: cfg.sessions[sp[i]] for i in s}
            out.append(Perm(names, tuple(np.index(j) for j in n), tuple(sp.index(j) for j in s)))
    return out


def permute(st: State, p: Perm) -> State:
    """The state with every node and Session name replaced by its image, per-node and per-Session tuples
    reordered to match."""
    f = p.names.get
    return State(
        claim=tuple(_claim(st.claim[i], f) for i in p.sessions),
        nextExec=st.nextExec,
        log=tuple(Event(f(e[0], e[0]), e[1], e[2], f(e[3], e[3]), e[4]) for e in st.log),
        recovery=frozenset(RecRow(r[0], f(r[1], r[1])) for r in st.recovery),
        inputs=frozenset(Input(f(i[0], i[0]), *i[1:]) for i in st.inputs),
        run=tuple(_runner(st.run[i], f) for i in p.nodes),
        fin=tuple(Fin(x[0], f(x[1], x[1]), x[2], f(x[3], x[3])) for x in (st.fin[i] for i in p.nodes)),
        rec=tuple(Rec(w[0], f(w[1], w[1]), w[2], f(w[3], w[3]), w[4]) for w in st.rec),
        cancelled=frozenset(RecRow(r[0], f(r[1], r[1])) for r in st.cancelled),
        faults=st.faults,
        effects=frozenset(Effect(f(e[0], e[0]), e[1], f(e[2], e[2]), f(e[3], e[3]), e[4], e[5], e[6]) for e in st.effects),
        wakes=st.wakes,
        waker=st.waker,
    )


def _claim(c: Claim, f) -> Claim:
    return Claim(c[0], f(c[1], c[1]), *c[2:])


def _runner(r: Runner, f) -> Runner:
    return Runner(r[0], f(r[1], r[1]), *r[2:])


def fingerprint(st: State, group: list[Perm]) -> int:
    """The least hash over the state's orbit (`group`: from `perms`, identity first)."""
    return min(hash(permute(st, p)) if k else hash(st) for k, p in enumerate(group))


def canonical(st: State, group: list[Perm]) -> State:
    """The orbit's representative: its state with the least hash."""
    return min((permute(st, p) if k else st for k, p in enumerate(group)), key=hash)

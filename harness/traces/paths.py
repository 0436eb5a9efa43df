"""The shapes every engine and trace shares: a step of a path, a reachable graph, a violation.

They live apart from the explorer so that traces, liveness and the conformance drivers can use them
without importing a model checker.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec import model as M


@dataclass
class Step:
    action: str | None  # None for the initial state
    params: tuple
    state: M.State


@dataclass
class Violation:
    invariants: list[str]
    steps: list[Step]
    loop: int | None = None  # for a lasso: the index of the step the last step returns to


@dataclass
class Graph:
    """The reachable state graph: ids are BFS order; succ[i] = [(action, params, j), ...]."""

    states: list[M.State]
    parent: list[int]
    via: list[tuple[str, tuple] | None]
    depth: list[int]
    succ: list[list[tuple[str, tuple, int]]] | None


def tree_ids(graph: Graph, j: int) -> list[int]:
    """The spanning tree's state ids from Init to j."""
    ids = []
    while j >= 0:
        ids.append(j)
        j = graph.parent[j]
    return ids[::-1]


def path_to(graph: Graph, i: int) -> list[Step]:
    out = []
    for k in tree_ids(graph, i):
        via = graph.via[k]
        out.append(Step(via[0] if via else None, via[1] if via else (), graph.states[k]))
    return out

"""Breadth-first search of the twin: every reachable state, every invariant, shortest counterexamples.

Safety: state invariants on every state, action invariants on every edge; the first violating depth gives
a shortest counterexample. Liveness (P ~> Q under weak fairness of every fair action instance) is
checked on the finished graph by `harness.engines.liveness`.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from spec import invariants as I
from spec import model as M
from spec import names as N

from harness.traces.paths import Graph, Step, Violation, path_to

PROGRESS_EVERY = 1000  # expanded states between two calls of `progress`


@dataclass
class Result:
    cfg: M.Config
    distinct: int = 0
    generated: int = 0
    depth: int = 0
    seconds: float = 0.0
    violation: Violation | None = None
    liveness_checked: list[str] = field(default_factory=list)
    complete: bool = True
    graph: Graph | None = None
    peak_rss_mib: float | None = None  # harness.engines.shards: the processes' peak RSS

    @property
    def ok(self) -> bool:
        return self.violation is None and self.complete


def explore(cfg: M.Config, *, liveness: bool = True, keep_edges: bool | None = None,
            max_states: int | None = None, progress: Callable[..., None] | None = None,
            stop_on_violation: bool = True, check: bool = True, successors=None, only=None) -> Result:
    """Explore `cfg`. `check=False` only builds the graph; `successors` swaps in another Next (mutants).
    `only` (names) checks just those safety invariants, as TLC's `only` does.
    `progress(distinct=, generated=, depth=)` is called every PROGRESS_EVERY expanded states (a count,
    not a clock: the caller's reporter throttles), once more when the search ends, and with `phase=`
    before each liveness property is checked."""
    next_states = successors or M.successors
    keep = liveness if keep_edges is None else keep_edges
    t0 = time.perf_counter()
    res = Result(cfg)
    init = M.init(cfg)
    ids: dict[M.State, int] = {init: 0}
    graph = Graph([init], [-1], [None], [0], [] if keep else None)
    bad = I.check_state(cfg, init) if check else []
    if bad:
        res.violation = Violation(bad, path_to(graph, 0))
    queue = deque([0])
    while queue and res.violation is None:
        i = queue.popleft()
        st = graph.states[i]
        out = []
        for name, params, nx in next_states(cfg, st):
            res.generated += 1
            delta = I.changed(st, nx) if check else None
            j = ids.get(nx)
            if j is None:
                j = len(graph.states)
                ids[nx] = j
                graph.states.append(nx)
                graph.parent.append(i)
                graph.via.append((name, params))
                graph.depth.append(graph.depth[i] + 1)
                queue.append(j)
                bad = I.check_state(cfg, nx, delta) if check else []
                bad = bad if only is None else [b for b in bad if b in only]
                if bad:
                    res.violation = Violation(bad, path_to(graph, j))
            bad_edge = I.check_edge(cfg, st, nx, delta) if check else []
            bad_edge = bad_edge if only is None else [b for b in bad_edge if b in only]
            if bad_edge and res.violation is None:
                steps = path_to(graph, i) + [Step(name, params, nx)]
                res.violation = Violation(bad_edge, steps)
            if keep:
                out.append((name, params, j))
            if res.violation is not None and stop_on_violation:
                break
        if keep:
            graph.succ.append(out)
        if max_states and len(graph.states) >= max_states:
            res.complete = False
            break
        if progress and not (i + 1) % PROGRESS_EVERY:
            progress(distinct=len(graph.states), generated=res.generated, depth=graph.depth[-1])
    res.distinct = len(graph.states)
    res.depth = max(graph.depth)
    if keep:
        while len(graph.succ) < len(graph.states):  # states left unexpanded after a stop
            graph.succ.append([])
    res.graph = graph
    if progress:
        progress(distinct=res.distinct, generated=res.generated, depth=res.depth)
    if liveness and check and res.violation is None and res.complete:
        from harness.engines.liveness import check_leads_to
        for name in N.LIVENESS:
            if progress:
                progress(phase=f"liveness: {name}")
            res.liveness_checked.append(name)
            v = check_leads_to(cfg, graph, name)
            if v is not None:
                res.violation = v
                break
    res.seconds = time.perf_counter() - t0
    return res

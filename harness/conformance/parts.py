"""The exhaustive walk split over processes: the spanning tree cut into parts of similar work.

Why: one walk is one Python process on one world; on two cores two walks on two worlds (two in-memory
databases of the bundled server, or two driver processes) take half the time. Each reachable state and edge still belongs to exactly one part: the *top* part
walks the states above the cuts (and checks every edge out of them, the edges into the cut subtrees'
roots included); each other part is one cut subtree, reached along its tree path from Init (those edges
are the top part's to check) and walked whole. Parts run on forked processes that inherit the graph.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import time

from spec import model as M

from harness.traces.paths import Graph

PARTS_PER_WORKER = 8
MIN_PART_EDGES = 2_000  # a part costs a path from Init and a restore: fewer, larger parts on a small graph
SHARD_PARTS = 64  # `--shard K/N` (harness/shard.py) deals out parts cut for this many, whatever the machine

_JOB: dict = {}  # set before the pool forks: the graph and the walk's arguments, inherited, never pickled


def subtree_work(graph: Graph) -> list[int]:
    """Edges out of each state's spanning subtree (ids are BFS order: a child's id exceeds its parent's)."""
    work = [len(s) for s in graph.succ]
    for j in range(len(work) - 1, 0, -1):
        work[graph.parent[j]] += work[j]
    return work


def cut(graph: Graph, parts: int) -> tuple[set[int], list[int]]:
    """(top states, roots of the cut subtrees): the heaviest subtree is cut below its root while it holds
    more than 1/`parts` of the work (a BFS tree is bushy near Init, so a few cuts make many parts; the
    processes take the parts heaviest first, so the small ones fill the gaps at the end)."""
    work = subtree_work(graph)
    children: dict[int, list[int]] = {}
    for j in range(1, len(graph.parent)):
        children.setdefault(graph.parent[j], []).append(j)
    top: set[int] = set()
    roots = [0]
    while True:
        heavy = max(roots, key=lambda r: work[r])
        if heavy not in children or work[heavy] * parts <= work[0]:
            break
        roots.remove(heavy)
        top.add(heavy)
        roots += children[heavy]
    roots.sort(key=lambda r: -work[r])
    return top, roots


def shard_cut(graph: Graph) -> tuple[set[int], list[int]]:
    """The cut `--shard` deals out: the same on every machine (it depends on the graph alone)."""
    return cut(graph, max(1, min(SHARD_PARTS, sum(len(s) for s in graph.succ) // MIN_PART_EDGES)))


def shard_units(graph: Graph) -> list[tuple[int | None, int]]:
    """(part, its edges) for each part of `shard_cut`: None is the top part (the whole graph when nothing
    is cut), else a cut subtree's root; the edges add up to the graph's."""
    top, roots = shard_cut(graph)
    if not top:
        return [(None, sum(len(s) for s in graph.succ))]
    work = subtree_work(graph)
    return [(None, sum(len(graph.succ[i]) for i in top))] + [(r, work[r]) for r in roots]


_REUSE: dict = {}  # per worker process: its server and world, restored to Init for each part


def _run(part):
    cfg, graph, kw, walk_part = _JOB["cfg"], _JOB["graph"], _JOB["kw"], _JOB["walk_part"]
    top = _JOB["top"]
    # a server per worker (a database, a driver process), started by its first part (never the parent's)
    kw = {**kw, "server": _REUSE.setdefault("server", kw["server"].fresh())}
    if part is None:
        return walk_part(cfg, graph, inside=top.__contains__, reuse=_REUSE, **kw)
    return walk_part(cfg, graph, start=part, reuse=_REUSE, **kw)


def walk_parts(cfg: M.Config, graph: Graph, walk_part, rep, *, server, mutant, workers: int, progress=None,
               only=None):
    """The walk over `workers` processes, each part walked by `walk_part` (harness.conformance.conform's,
    handed in so this module needs nothing of the walk's); `rep`, an empty Report, becomes the sum of the
    parts' (the first failure by path length, when several parts fail). `only`: a shard's parts of
    `shard_units`, walked instead of the whole graph."""
    t0 = time.perf_counter()
    edges = sum(len(s) for s in graph.succ)
    if only is None:
        top, roots = cut(graph, max(workers, min(workers * PARTS_PER_WORKER, edges // MIN_PART_EDGES)))
        jobs = [None] + (roots if top else [])  # nothing cut: the top part is the whole graph
    else:
        top, _roots = shard_cut(graph)
        jobs = list(only)
    _JOB.update(cfg=cfg, graph=graph, walk_part=walk_part, top=top if top else set(range(len(graph.states))),
                kw=dict(server=server, mutant=mutant))
    ctx = multiprocessing.get_context("fork")
    try:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            futures = [pool.submit(_run, j) for j in jobs]
            for done, fut in enumerate(concurrent.futures.as_completed(futures), start=1):
                if fut.cancelled():
                    continue
                part = fut.result()
                rep.states += part.states
                rep.edges += part.edges
                rep.probes += part.probes
                rep.restores += part.restores
                rep.actions.update(part.actions)
                rep.boundaries.update(part.boundaries)
                rep.timing.update(part.timing)
                rep.savepoint = part.savepoint
                if part.failure and (rep.failure is None or len(part.failure.steps) < len(rep.failure.steps)):
                    rep.failure = part.failure
                    for f in futures:
                        f.cancel()
                if progress:
                    progress(edges=rep.edges, states=rep.states, parts=done, of=len(jobs))
    finally:
        _JOB.clear()
    rep.seconds = time.perf_counter() - t0
    return rep

"""Exhaustive conformance: a system under test driven along every edge of the twin's reachable graph.

Why: lockstep samples paths and replay follows paths someone wrote; the twin's whole reachable graph is
known (harness.engines.explore builds it, and it equals TLC's), so on a bounded configuration the
server can be made to take every labelled edge of it and refuse every attempt the twin does not
enable, in every reachable state.

The walk is depth first along the explorer's BFS spanning tree: at each state it saves the server's
world (the port's Savepoints, harness.port: the bundled server's database and every actor's memory,
binding.savepoints; a driver's save, or its path replayed from Init, harness.driver.points), and for each
enabled action instance applies it on both sides, compares the mapped state with the twin's
(mapping.diff), checks every action invariant on the mapped edge, and restores; a tree edge leads on to a
state not yet visited (so each reachable state is visited once, each labelled edge checked once), where
every state invariant is checked and every refusal probe (every_refusal) must be refused with
nothing changed. The first failure ends the walk; its path is the spanning tree's, so the shortest from
Init to the failing edge.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from spec import invariants as I
from spec import model as M

from harness import registry as R
from harness.traces.paths import Graph, Step, path_to, tree_ids
from harness.port import DivergenceError, Saves, Savepoints, Server, World
from harness.conformance import boundaries
from harness.conformance.diff import diff, render_diff
from harness.conformance.lockstep import refusals
from harness.conformance.probes import problems as probe_problems

PROGRESS_EVERY = 500  # checked edges between two calls of `progress`


def every_refusal(cfg: M.Config, st: M.State, enabled) -> list[tuple[str, tuple]]:
    """The walk's probes: lockstep's `refusals` and recovery workers' heartbeats (the random walks' budgets were
    sized on `refusals`' pool, and a larger one moved their derandomized draws off several defects)."""
    taken = {(a, p) for a, p, _n in enabled}
    return refusals(cfg, st, enabled) + [(R.HEARTBEAT, (r, s)) for r in cfg.recoverers for s in cfg.sessions
                                         if (R.HEARTBEAT, (r, s)) not in taken]


@dataclass
class Failure:
    kind: str  # divergence | safety | error
    invariants: list[str]
    message: str
    steps: list[Step]  # Init first, up to and including the failing edge (or the state a probe failed in)
    probe: tuple | None = None  # (action, params): an attempt the twin refuses that the implementation took


@dataclass
class Report:
    """What one walk covered, of what the twin's graph holds."""

    cfg: M.Config
    states_total: int
    edges_total: int
    states: int = 0  # visited (mapped and checked)
    edges: int = 0  # labelled edges taken and checked
    probes: int = 0  # refusal probes refused with nothing changed
    restores: int = 0  # savepoints restored (each edge but a state's first starts from one)
    actions: Counter = field(default_factory=Counter)  # edges checked, per action
    boundaries: Counter = field(default_factory=Counter)  # named boundaries the checked edges passed
    seconds: float = 0.0
    timing: Counter = field(default_factory=Counter)  # seconds per part: apply, map, check, save, restore, probe
    failure: Failure | None = None
    savepoint: str = ""  # how the world was saved (the port's Savepoints.kind)
    mutant: frozenset | None = None

    @property
    def complete(self) -> bool:
        return self.failure is None and self.states == self.states_total and self.edges == self.edges_total

    @property
    def edges_per_s(self) -> float:
        return self.edges / self.seconds if self.seconds else 0.0


def graph_of(cfg: M.Config) -> Graph:
    """The twin's whole reachable graph with its labelled edges (no invariant checks: the gate's)."""
    from harness.engines.explore import explore
    return explore(cfg, liveness=False, keep_edges=True, check=False).graph


class _Stop(Exception):
    """The walk found a failure (Report.failure holds it)."""


def walk(cfg: M.Config, *, server: Server, graph: Graph | None = None, mutant=None, progress=None,
         workers: int = 1, only=None) -> Report:
    """Walk `cfg`'s reachable graph on `server` (harness.port; it must offer Saves). `mutant`: the defects
    the server runs with when they differ from the twin's (a code-only mutant must be caught).
    `progress(edges=, states=)` every PROGRESS_EVERY edges (one worker) or after each part (several).
    `workers` > 1 splits the spanning tree into parts walked by that many processes
    (harness.conformance.parts), each starting its worlds on a server of its own (`server.fresh()`: a
    database, or a driver process, per worker); ValueError where the server cannot (`check_workers`).
    `only`: a shard's parts (harness.conformance.parts.shard_units). Never raises for the server's
    failure: the Report carries it."""
    graph = graph or graph_of(cfg)
    mutant = None if mutant is None else frozenset(mutant)
    server.check_workers(workers)
    if workers > 1 or only is not None:
        from harness.conformance.parts import walk_parts
        return walk_parts(cfg, graph, walk_part, new_report(cfg, graph, mutant), mutant=mutant, workers=workers,
                          progress=progress, server=server, only=only)
    return walk_part(cfg, graph, server=server, mutant=mutant, progress=progress)


def new_report(cfg: M.Config, graph: Graph, mutant) -> Report:
    return Report(cfg, len(graph.states), sum(len(s) for s in graph.succ), mutant=mutant)


def walk_part(cfg: M.Config, graph: Graph, *, server: Server, mutant=None, progress=None, start: int = 0,
              inside=None, reuse: dict | None = None) -> Report:
    """One part of the walk: from the tree path's end at `start` (Init by default), every state below it
    in the spanning tree for which `inside(j)` holds (all by default), and every edge out of those.
    `reuse`: a dict kept between parts in one process; its world is restored to Init instead of being
    started again (16 ms a part on the bundled server)."""
    rep = new_report(cfg, graph, mutant)
    t0 = time.perf_counter()
    try:
        if reuse is not None and "world" in reuse:
            world, points = reuse["world"], reuse["points"]
            points.restore(reuse["init"])
        else:
            world = server.start(cfg, mutant=mutant)
            points = savepoints(server, world, graph)
            if reuse is not None:
                reuse.update(world=world, points=points, init=points.save_at(0, INIT_DEPTH))
        _Walk(cfg, graph, world, rep, progress, points).run(start, inside)
    except _Stop:
        pass
    finally:
        rep.seconds = time.perf_counter() - t0
    return rep


INIT_DEPTH = -1  # the depth Init's point is saved under between parts (the walk's own frames are 0 and up)


def savepoints(server: Server, world: World, graph: Graph) -> Savepoints:
    if not isinstance(server, Saves):
        raise TypeError(f"the exhaustive walk restores worlds: {server.label} offers no save and restore")
    return server.points(world, graph)


class _Walk:
    def __init__(self, cfg, graph: Graph, sched: World, rep: Report, progress, points: Savepoints):
        """`sched`: the port's World (the bundled Scheduler, a driver's SutScheduler); `points`: its
        Savepoints."""
        self.cfg, self.graph, self.sched, self.rep, self.progress = cfg, graph, sched, rep, progress
        self.points = points
        rep.savepoint = self.points.kind
        self.clock = time.perf_counter

    def run(self, start: int = 0, inside=None) -> None:
        g, rep = self.graph, self.rep
        via = None
        path = tree_ids(g, start)
        for i, j in zip(path, path[1:]):
            name, params = g.via[j]
            self._edge(i, name, params, j, count=False)
            via = (i, name, params)
        t = self.clock()
        impl = self.sched.state()
        rep.timing["map"] += self.clock() - t
        if start == 0:
            self._compare_init(impl)
        self._arrive(start, impl, via)
        # a frame: state id, its savepoint (after its probes; only where a second edge will need it), next edge
        stack = [[start, self._save_for(start, 0), 0]]
        while stack:
            frame = stack[-1]
            i, point, k = frame
            succ = g.succ[i]
            if k == len(succ):
                stack.pop()
                continue
            frame[2] = k + 1
            if k:  # the first edge starts where the probes left the implementation; the others from the savepoint
                t = self.clock()
                self.points.restore(point)
                rep.timing["restore"] += self.clock() - t
                rep.restores += 1
            name, params, j = succ[k]
            impl = self._edge(i, name, params, j)
            if j and g.parent[j] == i and g.via[j] == (name, params) and (inside is None or inside(j)):
                self._arrive(j, impl, (i, name, params))  # the tree edge: a state not yet visited
                stack.append([j, self._save_for(j, len(stack)), 0])

    def _save_for(self, i: int, depth: int):
        return self._save(i, depth) if len(self.graph.succ[i]) > 1 else None

    def _compare_init(self, impl: M.State) -> None:
        delta = diff(self.graph.states[0], impl, self.cfg)
        if delta:
            self._fail_at(0, "divergence", [], "\n".join(["at Init:"] + render_diff(delta, "  ")))

    def _save(self, i: int, depth: int):
        t = self.clock()
        point = self.points.save_at(i, depth)
        self.rep.timing["save"] += self.clock() - t
        return point

    def _edge(self, i: int, name: str, params: tuple, j: int, count: bool = True) -> M.State:
        """Take edge i -(name, params)-> j on the implementation and check it."""
        rep, nxt, clock = self.rep, self.graph.states[j], self.clock
        hits = self.sched.hits
        mark = len(hits)
        t = clock()
        try:
            self.sched.apply(name, params, nxt)
        except DivergenceError as exc:
            self._fail(i, name, params, "divergence", [], f"{name}{params}: {exc}")
        except Exception as exc:  # noqa: BLE001 - the implementation crashed: still a trace
            self._fail(i, name, params, "error", [], f"{name}{params} raised {type(exc).__name__}: {exc}")
        t1 = clock()
        impl = self.sched.state()
        t2 = clock()
        delta = diff(nxt, impl, self.cfg)
        bad = I.check_edge(self.cfg, self.graph.states[i], impl)
        if delta:  # a mapped state unlike the twin's is checked here (an equal one where it is first visited)
            bad = I.check_state(self.cfg, impl) + bad
        stray = None if self.cfg.defects else boundaries.problem(name, [h for h, _ in hits[mark:]])
        t3 = clock()
        rep.timing["apply"] += t1 - t
        rep.timing["map"] += t2 - t1
        rep.timing["check"] += t3 - t2
        if bad or delta or stray:
            lines = [f"after {name}{params}:"] + [f"  invariant violated: {b}" for b in bad] + render_diff(delta, "  ") \
                + ([f"  the implementation {stray}"] if stray else [])
            self._fail(i, name, params, "safety" if bad else "divergence", bad, "\n".join(lines))
        if not count:  # an edge on the way to a part's first state: another part checks it
            return impl
        rep.edges += 1
        rep.actions[name] += 1
        rep.boundaries.update(h for h, _ in hits[mark:])
        if self.progress and not rep.edges % PROGRESS_EVERY:
            self.progress(edges=rep.edges, states=rep.states)
        return impl

    def _arrive(self, j: int, impl: M.State, via) -> None:
        """A state visited for the first time: its state invariants, then its refusal probes."""
        cfg, st, rep = self.cfg, self.graph.states[j], self.rep
        t = self.clock()
        bad = I.check_state(cfg, impl)
        if bad:
            lines = [f"invariant violated: {b}" for b in bad]
            if via is None:
                self._fail_at(j, "safety", bad, "at Init:\n  " + "\n  ".join(lines))
            self._fail(*via, "safety", bad, f"after {via[1]}{via[2]}:\n  " + "\n  ".join(lines))
        rep.timing["check"] += self.clock() - t
        rep.states += 1
        t = self.clock()
        enabled = [(a, p, None) for a, p, _j in self.graph.succ[j]]
        points = self.points
        probes = every_refusal(cfg, st, enabled)
        # a driver that carries out many attempts in one request (harness.driver.client): every result at
        # once, each read in order below as if it had been attempted alone
        batch = getattr(self.sched, "attempt_all", None)
        results = batch(probes) if batch is not None and probes else None
        for k, (name, params) in enumerate(probes):
            try:
                if results is not None:
                    if isinstance(results[k], Exception):
                        raise results[k]
                    answer, got = results[k]
                else:
                    mark = points.mark()
                    answer = self.sched.attempt(name, params)
                    # nothing written, the clock unmoved: the server's world still maps to `st` but for the
                    # actors' memory (its Savepoints say so, binding.savepoints), else it is read whole
                    got = points.unchanged(mark, st) if mark is not None else None
                    if got is None:
                        got = self.sched.state()
            except Exception as exc:  # noqa: BLE001 - a crash on a refused attempt is a failure too
                self._fail_at(j, "error", [], f"probe {name}{params} raised {type(exc).__name__}: {exc}",
                              probe=(name, params))
            lines = probe_problems(cfg, st, name, params, answer, got)
            if lines:
                self._fail_at(j, "divergence", [], "probe: " + "\n".join(lines), probe=(name, params))
            rep.probes += 1
        rep.timing["probe"] += self.clock() - t

    def _fail(self, i, name, params, kind, invariants, message):
        nxt = M.apply(self.cfg, self.graph.states[i], name, params)
        steps = path_to(self.graph, i) + [Step(name, params, nxt)]
        self.rep.failure = Failure(kind, list(invariants), message, steps)
        raise _Stop

    def _fail_at(self, j, kind, invariants, message, probe=None):
        self.rep.failure = Failure(kind, list(invariants), message, path_to(self.graph, j), probe)
        raise _Stop

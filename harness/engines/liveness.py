"""P ~> Q on a finished state graph, under weak fairness of every fair action instance, on behaviours whose
faults cease (each property's premise names the steps that eventually stop: spec.invariants.CEASING).

A behaviour violates P ~> Q iff from a reachable P /\\ ~Q state it can stay in ~Q forever, fairly. Within
the ~Q subgraph, a maximal strongly connected component C (a single state stuttering counts) of the edges
that are not ceasing steps (faults may come before the suffix, never in it) hosts such a fair suffix iff every fair action instance that is enabled in all of C's states is taken on some edge
inside C; for weak fairness the maximal components suffice, since a larger component only has more
edges and more states where an action is disabled.

The same weak-fairness condition (`neglected`) serves two detectors: `check_leads_to` on a finished
graph (the explorer's), and `fair_lasso` on one run's own path (harness.conformance.lockstep's). They
differ in what they see, not in what fair means: a run knows only the states and edges it walked, so it
asks whether the cycle it closed is fair, not whether a maximal component of a graph it never built is.
"""

from __future__ import annotations

from collections import deque

from spec import invariants as I
from spec import model as M
from spec import names as N

from harness.traces.paths import Graph, Step, Violation, path_to


def _fair(name: str) -> bool:
    return N.ACTIONS[name].fair


def fair_enabled(edges, paused: bool = False) -> set[tuple[str, tuple]]:
    """The weakly fair action instances among a state's `(action, params, successor)` edges; in a state
    where a tick would expire a working actor's lease (`paused`, spec.model.pausing) the Tick is a pause,
    a fault, and not fair (TLA+ WF_vars(CalmTick))."""
    return {(a, pa) for a, pa, _w in edges if _fair(a) and not (paused and a == I.TICK)}


def paused_flags(cfg: M.Config, states) -> list[bool]:
    return [M.pausing(cfg, st) for st in states]


def neglected(enabled, taken) -> set[tuple[str, tuple]]:
    """The fair instances enabled in every one of some states (`enabled`: one set per state, from
    `fair_enabled`) and never among `taken`. A behaviour that stays in those states forever, taking
    exactly `taken`, is weakly fair iff this is empty (a single state stuttering: `taken` is empty)."""
    return set.intersection(*map(set, enabled)) - set(taken)


def fair_lasso(steps: list[Step], enabled: list, j: int, end: int, leads_to, cfg: M.Config) -> str | None:
    """On one run's path, whose state `end` equals its state `j`: the name of the first leads-to
    property (`leads_to`: (name, premise, goal) triples) that repeating steps j+1..end forever violates,
    or None. It does when the cycle is weakly fair (every fair instance enabled at all of states
    j..end-1, `enabled[k]` their edges, is taken in it), its goal is false from some point at or before
    j through `end`, and its premise held somewhere on that stretch; its cycle takes no step the
    property's premise says ceases (I.CEASING: faults recurring forever are outside the premise)."""
    cycle = range(j, end)  # states j..end-1; steps[end].state == steps[j].state
    paused = {k: M.pausing(cfg, steps[k].state) for k in cycle}
    taken = {(steps[k].action, steps[k].params) for k in range(j + 1, end + 1)
             if not (paused[k - 1] and steps[k].action == I.TICK)}
    if neglected([fair_enabled(enabled[k], paused[k]) for k in cycle], taken):
        return None
    kinds = {I.step_kind(steps[k].action, paused[k - 1]) for k in range(j + 1, end + 1)}
    for name, p, q in leads_to:
        if kinds & I.CEASING[name]:
            continue
        start = end  # the longest suffix of the path on which the goal is false
        while start > 0 and not q(steps[start - 1].state):
            start -= 1
        if q(steps[end].state) or start > j:
            continue
        if any(p(steps[k].state) for k in range(start, end + 1)):
            return name
    return None


def _sccs(nodes: list[int], succ) -> list[list[int]]:
    """Tarjan's algorithm, iterative. `succ(v)` yields successor ids inside the subgraph."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ(w))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def check_leads_to(cfg: M.Config, graph: Graph, name: str) -> Violation | None:
    paused = paused_flags(cfg, graph.states)
    calm = _without(graph, paused, I.CEASING[name])
    for _sess, p, q in I.leads_to(name, cfg):
        v = _check_one(graph, p, q, name, paused, calm)
        if v is not None:
            return v
    return None


def _without(graph: Graph, paused: list[bool], ceasing: frozenset[str]) -> list:
    """The successor lists without the ceasing steps: the edges a violating cycle may use."""
    return [[e for e in edges if I.step_kind(e[0], paused[v]) not in ceasing] for v, edges in enumerate(graph.succ)]


def _check_one(graph: Graph, p, q, name: str, paused: list[bool], calm: list) -> Violation | None:
    states, succ = graph.states, graph.succ
    notq = [not q(st) for st in states]
    sources = [i for i, st in enumerate(states) if notq[i] and p(st)]
    if not sources:
        return None
    # the ~Q subgraph reachable from the sources
    seen = set(sources)
    frontier = deque(sources)
    while frontier:
        v = frontier.popleft()
        for _a, _p, w in succ[v]:
            if notq[w] and w not in seen:
                seen.add(w)
                frontier.append(w)
    inner = lambda v: (w for _a, _p, w in calm[v] if w in seen)
    fair_states: set[int] = set()
    for comp in _sccs(sorted(seen), inner):
        members = set(comp)
        taken = {(a, pa) for v in comp for a, pa, w in calm[v] if w in members and _fair(a)}
        if not neglected([fair_enabled(succ[v], paused[v]) for v in comp], taken):
            fair_states |= members
    if not fair_states:
        return None
    return _lasso(graph, sources, seen, fair_states, name, calm, paused)


def _lasso(graph: Graph, sources, seen, fair_states, name, calm, paused) -> Violation:
    succ = graph.succ
    order = sorted(sources, key=lambda i: graph.depth[i])
    parent: dict[int, tuple[int, str, tuple] | None] = {s: None for s in order}
    frontier = deque(order)
    hit = None
    while frontier:
        v = frontier.popleft()
        if v in fair_states:
            hit = v
            break
        for a, pa, w in succ[v]:
            if w in seen and w not in parent:
                parent[w] = (v, a, pa)
                frontier.append(w)
    tail: list[Step] = []
    v = hit
    while parent[v] is not None:
        u, a, pa = parent[v]
        tail.append(Step(a, pa, graph.states[v]))
        v = u
    steps = path_to(graph, v) + list(reversed(tail))
    loop_at = len(steps) - 1
    fair_cycle = _fair_cycle(graph, hit, seen, calm, paused)
    if fair_cycle:
        return Violation([name], steps + fair_cycle, loop=loop_at)
    # no fair action is enabled at `hit`: any cycle through it is fair; close the shortest one
    back: dict[int, tuple[int, str, tuple] | None] = {}
    frontier = deque()
    for a, pa, w in calm[hit]:
        if w in fair_states and w not in back:
            back[w] = (hit, a, pa)
            frontier.append(w)
    while frontier and hit not in back:
        v = frontier.popleft()
        for a, pa, w in calm[v]:
            if w in fair_states and w not in back:
                back[w] = (v, a, pa)
                frontier.append(w)
    if hit in back:
        cyc = []
        v = hit
        while True:
            u, a, pa = back[v]
            cyc.append(Step(a, pa, graph.states[v]))
            v = u
            if v == hit:
                break
        steps += list(reversed(cyc))
    return Violation([name], steps, loop=loop_at)


def _path(calm, src: int, dst: int, comp: set[int]) -> list[tuple[str, tuple, int]]:
    """Shortest path src -> dst inside comp over the `calm` edges, as (action, params, state id) edges;
    empty when src == dst."""
    if src == dst:
        return []
    parent = {src: None}
    frontier = deque([src])
    while frontier and dst not in parent:
        v = frontier.popleft()
        for a, pa, w in calm[v]:
            if w in comp and w not in parent:
                parent[w] = (v, a, pa)
                frontier.append(w)
    out, v = [], dst
    while parent[v] is not None:
        u, a, pa = parent[v]
        out.append((a, pa, v))
        v = u
    return list(reversed(out))


def _component(calm, hit: int, seen: set[int]) -> set[int]:
    """The strongly connected component of `hit` inside the ~Q subgraph `seen`, over the `calm` edges."""
    fwd = {hit}
    frontier = deque([hit])
    while frontier:
        v = frontier.popleft()
        for _a, _p, w in calm[v]:
            if w in seen and w not in fwd:
                fwd.add(w)
                frontier.append(w)
    pred: dict[int, list[int]] = {}
    for v in fwd:
        for _a, _p, w in calm[v]:
            if w in fwd:
                pred.setdefault(w, []).append(v)
    comp = {hit}
    frontier = deque([hit])
    while frontier:
        v = frontier.popleft()
        for u in pred.get(v, ()):
            if u not in comp:
                comp.add(u)
                frontier.append(u)
    return comp


def _fair_cycle(graph: Graph, hit: int, seen: set[int], calm, paused) -> list[Step]:
    """A cycle from `hit` back to it inside its fair component that is itself weakly fair: every fair
    action instance enabled on all the states it visits is taken on it. (A shortest cycle need not be:
    it can loop on Tick and Heartbeat while RecoveryConvert stays enabled, and would then replay just the
    same without the defect.) Starting from stuttering at `hit`, each unfair instance X gets a detour
    through a state where X is disabled or through an X edge; the component being fair, one exists, and
    each detour settles X for good. Empty: stuttering at `hit` is already fair."""
    comp = _component(calm, hit, seen)
    enabled = lambda v: fair_enabled(graph.succ[v], paused[v])
    cycle: list[tuple[str, tuple, int]] = []
    visited, taken = {hit}, set()
    while True:
        need = neglected([enabled(v) for v in visited], taken)
        if not need:
            return [Step(a, pa, graph.states[w]) for a, pa, w in cycle]
        x = min(need, key=repr)
        off = next((u for u in sorted(comp) if x not in enabled(u)), None)
        if off is not None:
            detour = _path(calm, hit, off, comp) + _path(calm, off, hit, comp)
        else:
            v, w = next((v, w) for v in sorted(comp) for a, pa, w in calm[v] if (a, pa) == x and w in comp)
            detour = _path(calm, hit, v, comp) + [(x[0], x[1], w)] + _path(calm, w, hit, comp)
        cycle += detour
        visited |= {w for _a, _p, w in detour}
        taken |= {(a, pa) for a, pa, _w in detour}

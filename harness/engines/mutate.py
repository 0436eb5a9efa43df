"""Run guard mutants (harness.engines.guard_mutants) through the explorer: killed, or which check missed it.

Each mutant is explored on the configurations in turn, smallest first, every invariant and the liveness
properties on, until one notices (the mutant is killed: which invariants or property, on which
configuration, after how many states). A mutant no configuration notices survives; one whose state space
outgrows GROWTH times the configuration's own is stopped there and marked incomplete (neither killed nor
survived: a guard whose loss lets the model run away is not shown to be needed either). A mutant the twin
cannot even execute (an exception in the mutated action, e.g. a runner step at a pc it never meant to
see) is killed by that error, said as such.

Mutants run in worker processes (fork: each applies its mutant to its own copy of the twin), one task per
mutant, results in the mutants' order.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

from spec import configs
from spec import invariants as I
from spec import names as N

from harness.engines import guard_mutants as G
from harness.engines.explore import explore
from harness.engines.liveness import check_leads_to

GROWTH = 4  # a mutant's state space may grow to this many times its configuration's before it is stopped
KILLED, SURVIVED, INCOMPLETE = "killed", "survived", "incomplete"


@dataclass
class Verdict:
    id: str
    action: str
    kind: str
    where: str
    verdict: str = SURVIVED
    by: list[str] = field(default_factory=list)  # the invariants or property that noticed (or the error)
    config: str = ""  # where it was noticed (or, incomplete, where the state space ran away)
    states: int = 0  # states explored on that configuration
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


def gate_configs() -> tuple[str, ...]:
    """The gate's configurations (spec.configs: its five and the feature ones), as the gate checks them."""
    return configs.GATE_CONFIGS + configs.FEATURE_CONFIGS


@dataclass
class Baseline:
    """The unmutated twin's graph of one configuration: what the gate shows holding every check."""
    distinct: int
    fingerprint: tuple
    states: set
    edges: set  # hashes of labelled edges (state, action, parameters, state)
    order: list  # the states in BFS order


_BASELINE: dict[str, Baseline] = {}
_MASK = (1 << 64) - 1


def _edges(graph):
    s = graph.states
    return (hash((s[i], name, params, s[j])) for i, out in enumerate(graph.succ) for name, params, j in out)


def fingerprint(graph) -> tuple:
    """The labelled state graph as a value that does not depend on the order it was explored in: counts, and
    sums of the hashes of its states and of its labelled edges (hashes agree within one process tree)."""
    return (len(graph.states), sum(map(len, graph.succ)), sum(map(hash, graph.states)) & _MASK,
            sum(_edges(graph)) & _MASK)


def baseline(name: str) -> Baseline:
    """The configuration's unmutated graph, explored once per process (before the workers fork)."""
    if name not in _BASELINE:
        g = explore(configs.get(name), liveness=False, check=False, keep_edges=True).graph
        _BASELINE[name] = Baseline(len(g.states), fingerprint(g), set(g.states), set(_edges(g)), g.states)
    return _BASELINE[name]


def _new_violations(cfg, graph, base: Baseline) -> list[str]:
    """Every safety check that fails on what the mutant adds: states and labelled edges the unmutated graph
    has not (the rest passed every check in the gate), in the registry's order. Why not explore with checks
    on: most of a mutant's graph is the twin's own, and checking it again costs more than exploring it; and
    all of them, not the first, so the reviewer's map shows every invariant a mutant breaks."""
    s, bad = graph.states, set()
    for i, st in enumerate(s):
        if st not in base.states:
            bad.update(I.check_state(cfg, st))
        for name, params, j in graph.succ[i]:
            if hash((st, name, params, s[j])) not in base.edges:
                bad.update(I.check_edge(cfg, st, s[j], I.changed(st, s[j])))
    return [n for n in N.INVARIANTS if n in bad]


def _explore_one(v: Verdict, name: str, cap: int, mutant: G.Applied) -> bool:
    """Explore the applied (tolerant) mutant on `name`; True when it is killed there. Where the mutated
    action does what the twin's does at every state of the unmutated graph, the graphs are equal (by
    induction from Init): nothing can notice it there, and nothing is explored. Where it raises (it cannot
    run on a state its guard kept out: TLC stops with an error there too) it is killed by that error, and
    its graph is still explored without those steps, so the invariants it breaks on paths that never raise
    are recorded beside the error (the reviewer's map)."""
    cfg = configs.get(name)
    base = baseline(name)
    mutant.errors.clear()
    if all(mutant.same_at(cfg, st) for st in base.order) and not mutant.errors:
        return False
    res = explore(cfg, liveness=False, check=False, keep_edges=True, max_states=cap, successors=mutant.successors)
    errors = [f"error: {mutant.errors[0]}"] if mutant.errors else []
    if not errors and res.complete and fingerprint(res.graph) == base.fingerprint:
        return False
    bad = errors + _new_violations(cfg, res.graph, base)
    if not bad and res.complete:
        bad = [p for p in N.LIVENESS if check_leads_to(cfg, res.graph, p) is not None][:1]
    if bad:
        v.verdict, v.by, v.config, v.states = KILLED, list(bad), name, res.distinct
        return True
    if not res.complete and v.verdict == SURVIVED:
        v.verdict, v.config, v.states = INCOMPLETE, name, res.distinct
    return False


def run_one(m: G.Mutant, names: Iterable[str]) -> Verdict:
    """Explore `m` on each configuration, smallest first, until one kills it. A kill by the twin's error
    alone goes on to the next configurations until one also shows an invariant the mutant breaks where it
    does not raise (the reviewer's map wants the invariant: the smallest configuration, `wakes`, has no
    prompt, so a runner step's error is all it can show); none does: the first error stands."""
    v = Verdict(m.id, m.action, m.kind, m.where)
    t0 = time.perf_counter()
    caps = {name: GROWTH * baseline(name).distinct for name in names}
    error_only = None
    with G.applied(m, tolerant=True) as mutant:
        for name in sorted(caps, key=caps.get):
            if _explore_one(v, name, caps[name], mutant):
                if any(not b.startswith("error:") for b in v.by):
                    break
                error_only = error_only or (v.by, v.config, v.states)
                v.verdict = SURVIVED
    if v.verdict != KILLED and error_only:
        v.verdict, (v.by, v.config, v.states) = KILLED, error_only
    v.seconds = round(time.perf_counter() - t0, 3)
    return v


def _task(args) -> dict:
    mid, names = args
    by_id = {m.id: m for m in G.derive()}
    return run_one(by_id[mid], names).to_json()


def run(mutants: list[G.Mutant], names: Iterable[str], *, jobs: int = 0,
        done: Callable[[Verdict], None] | None = None) -> list[Verdict]:
    """Every mutant's verdict, in the mutants' order; `done` is called as each finishes (progress)."""
    names = tuple(names)
    jobs = jobs or min(len(mutants), os.cpu_count() or 1)
    out: dict[str, Verdict] = {}
    if jobs <= 1:
        for m in mutants:
            out[m.id] = run_one(m, names)
            done and done(out[m.id])
    else:
        for name in names:
            baseline(name)  # once, before the fork: every worker inherits them
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(jobs) as pool:
            for doc in pool.imap_unordered(_task, [(m.id, names) for m in mutants]):
                out[doc["id"]] = Verdict(**doc)
                done and done(out[doc["id"]])
    return [out[m.id] for m in mutants]

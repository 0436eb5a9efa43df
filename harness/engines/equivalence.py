"""Twin equivalence: TLC's full state graph and the twin's are the same graph.

States are compared in canonical form (harness.traces.tlavalue), edges by (source, action name, target);
self-loops are dropped on both sides (TLA+ stuttering). A difference is reported by example, so a
reviewer sees which guard or update disagrees.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from spec import model as M
from spec import symmetry as S

from harness.engines import tlc
from harness.engines.explore import explore
from harness.traces.tlavalue import twin_key


@dataclass
class Comparison:
    twin_states: int
    tlc_states: int
    twin_edges: int
    tlc_edges: int
    only_twin_states: list = field(default_factory=list)
    only_tlc_states: list = field(default_factory=list)
    only_twin_edges: list = field(default_factory=list)
    only_tlc_edges: list = field(default_factory=list)
    same_init: bool = True
    only_twin_labels: dict = field(default_factory=dict)  # action -> count of edges only the twin has
    only_tlc_labels: dict = field(default_factory=dict)

    @property
    def equal(self) -> bool:
        return (self.same_init and not self.only_twin_states and not self.only_tlc_states
                and not self.only_twin_edges and not self.only_tlc_edges)


def quotient(successors, group):
    """Next with each successor replaced by its orbit's representative: exploring it from Init (itself a
    representative, every Session and node alike at Init) gives the quotient graph."""
    return lambda cfg, st: ((a, p, S.canonical(nx, group)) for a, p, nx in successors(cfg, st))


def twin_graph(cfg: M.Config, successors=None, progress=None, symmetry: str | None = None):
    """(initial state, states, edges) of the twin, canonical, edges between positions in the list of
    states (as tlc.state_graph's). `successors` swaps in a mutant twin;
    `symmetry` (a scope of spec.symmetry): the quotient graph, states as orbit representatives."""
    succ = successors or M.successors
    if symmetry:
        succ = quotient(succ, S.perms(cfg, symmetry))
    res = explore(cfg, liveness=False, keep_edges=True, stop_on_violation=False, check=False,
                  successors=succ, progress=progress)
    return graph_keys(cfg, res.graph, progress)


def graph_keys(cfg: M.Config, g, progress=None):
    """`twin_graph`'s form of an explored graph (harness.engines.explore's, with its edges): a whole one,
    e.g. the gate's explorer check of a configuration that held, so the twin is not explored twice."""
    if progress:
        progress(phase="canonical form of every state")
    keys = [twin_key(cfg, st) for st in g.states]
    edges = {(i, a, j) for i, out in enumerate(g.succ) for a, _p, j in out if i != j}
    if progress:
        progress(phase="done")
    return 0, keys, edges


def compare(cfg: M.Config, *, successors=None, timeout: float | None = None, progress_twin=None,
            progress_tlc=None, symmetry: str | None = None, tlc_graph=None, twin=None) -> Comparison:
    """Both graphs of `cfg`; `progress_twin` and `progress_tlc` follow the two searches, which run at once.
    With `symmetry`, both quotient graphs (TLC's SYMMETRY; each side's states mapped to the twin's orbit
    representatives, edges between orbits). `tlc_graph`: TLC's side already under way elsewhere (the gate's
    check of `cfg`, which writes its graph as it checks: harness/reports/tlcruns.py), a function that
    waits for it and returns the graph as tlc.state_graph does. `twin`: the twin's side already built
    (graph_keys of a whole explored graph)."""
    # TLC runs on one core while the twin explores on the other
    finish = tlc_graph or tlc.start_state_graph(cfg, progress=progress_tlc, symmetry=symmetry)
    t_init, t_keys, t_edges = twin or twin_graph(cfg, successors, progress_twin, symmetry)
    c_init, c_keys, c_edges = finish(timeout)
    # one numbering of the states of both sides: each key hashed once, edges compared as numbers
    number: dict = {}
    t_ids = [number.setdefault(k, len(number)) for k in t_keys]
    c_ids = [number.setdefault(k, len(number)) for k in c_keys]
    key_of = list(number)
    t_states, c_states = set(t_ids), set(c_ids)
    t_init, c_init = t_ids[t_init], c_ids[c_init]
    t_edges = {(t_ids[i], a, t_ids[j]) for i, a, j in t_edges}
    c_edges = {(c_ids[i], a, c_ids[j]) for i, a, j in c_edges}
    only_t, only_c = t_edges - c_edges, c_edges - t_edges

    def keys(ids):
        return [key_of[i] for i in ids]

    def edges(es):
        return [(key_of[i], a, key_of[j]) for i, a, j in es]
    return Comparison(
        twin_states=len(t_states), tlc_states=len(c_states), twin_edges=len(t_edges), tlc_edges=len(c_edges),
        only_twin_labels=dict(Counter(a for _s, a, _d in only_t)), only_tlc_labels=dict(Counter(a for _s, a, _d in only_c)),
        only_twin_states=keys(list(t_states - c_states)[:3]), only_tlc_states=keys(list(c_states - t_states)[:3]),
        only_twin_edges=edges(list(only_t)[:3]), only_tlc_edges=edges(list(only_c)[:3]),
        same_init=t_init == c_init)

"""The kill matrix: every registry defect must be caught by some replay against the system under test.

Each committed trace in traces/ is replayed with each defect switched on; a defect that no committed trace
catches falls back to the explorer's counterexample for it (replayed with the defect on, as a trace). The
correct implementation must pass every committed trace. `rows()` is what the gate prints.
"""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass, field
from pathlib import Path

from spec import configs
from spec import names as N

from harness.traces import trace as T
from harness.engines.explore import explore
from harness.conformance.replay import TRACES, ReplayResult, committed_traces, replay_all, replay_through

EXPLORER = "explorer counterexample"


@dataclass
class Row:
    defect: str
    trace: str  # a committed trace path, or EXPLORER
    detected: bool
    violated: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def detects(defect: str, res: ReplayResult) -> bool:
    """The replay failed, and it says why: the defect's invariant, or a failed expectation of the trace."""
    if res.ok:
        return False
    return bool(set(res.violated) & set(N.DEFECTS[defect].violates)) or any(
        p.startswith("expect.") for p in res.problems)


_FOUND: dict[str, T.Trace] = {}


def _explore(defect: str) -> T.Trace:
    d = N.DEFECTS[defect]
    cfg = configs.get(d.config, [defect])
    liveness = any(N.INVARIANTS[v].kind == "liveness" for v in d.violates)
    res = explore(cfg, liveness=liveness)
    if res.violation is None:
        raise AssertionError(f"the explorer finds no counterexample for {defect} on {d.config}")
    v = res.violation
    return T.from_steps(cfg, v.steps, title=f"explore: {', '.join(v.invariants)} with {defect}", source="explore",
                        base=d.config, invariants=v.invariants, defect=defect, loop=v.loop)


def counterexample(defect: str) -> T.Trace:
    """The explorer's shortest counterexample for `defect` on its configuration, as a trace (cached)."""
    if defect not in _FOUND:
        _FOUND[defect] = _explore(defect)
    return _FOUND[defect]


def counterexamples(defects, workers: int = 2) -> dict[str, T.Trace]:
    """Several counterexamples at once; the liveness ones explore whole graphs, so they run in processes."""
    missing = [d for d in defects if d not in _FOUND]
    if len(missing) > 1 and workers > 1:
        with concurrent.futures.ProcessPoolExecutor(min(workers, len(missing))) as pool:
            _FOUND.update(zip(missing, pool.map(_explore, missing)))
    return {d: counterexample(d) for d in defects}


def rows(root: Path = TRACES, defects=None, progress=None, *, server, first: bool = False) -> list[Row]:
    """(defect, trace, detected?) for every defect against every committed trace, plus the explorer's
    counterexample for each defect no committed trace detects, replayed against `server` (harness.port),
    each defect switched on in it by `start`. `progress(done=, replays=)` after each defect (`done` of all
    of them). `first`: a defect's replays stop at the first trace that detects it, the traces written for
    it tried first (`_likely`): whether each defect is detected, not by how many traces (the gate's
    question; without `first`, the whole table)"""
    paths = committed_traces(root)
    traces = [(str(p), T.load(p)) for p in paths]
    out = []
    for k, defect in enumerate(defects or N.DEFECTS):
        if progress:
            progress(done=k, replays=len(out))
        mine = []
        order = sorted(traces, key=lambda t: _likely(defect, t[1])) if first else traces
        for name, tr in order:
            res = replay_through(tr, [defect], name, server)
            mine.append(Row(defect, name, detects(defect, res), res.violated, res.problems))
            if first and mine[-1].detected:
                break
        if not any(r.detected for r in mine):
            res = replay_through(counterexample(defect), None, EXPLORER, server)
            mine.append(Row(defect, EXPLORER, detects(defect, res), res.violated, res.problems))
        out += mine
    if progress:
        progress(done=len(defects or N.DEFECTS), replays=len(out))
    return out


def _likely(defect: str, tr: T.Trace) -> int:
    """`rows(first=True)`'s order of a defect's replays: the traces written for it, then those written
    for what it violates, then the rest (each group in the committed order)."""
    if tr.meta.defect == defect:
        return 0
    return 1 if set(tr.meta.invariants) & set(N.DEFECTS[defect].violates) else 2


def undetected(table: list[Row]) -> list[str]:
    return [d for d in dict.fromkeys(r.defect for r in table) if not any(r.detected for r in table if r.defect == d)]


def correct_failures(root: Path = TRACES, progress=None, *, server) -> list[ReplayResult]:
    """Committed traces that fail on the correct server (the gate wants none)."""
    return [r for r in replay_all(root, progress=progress, server=server) if not r.ok]


def render(table: list[Row]) -> str:
    lines = ["kill matrix (defect on -> replay against the implementation)"]
    for d in dict.fromkeys(r.defect for r in table):
        hits = [r for r in table if r.defect == d and r.detected]
        how = ", ".join(f"{Path(r.trace).name if r.trace != EXPLORER else r.trace} ({', '.join(r.violated) or 'expectation'})"
                        for r in hits)
        lines.append(f"  {d:34s} {'KILLED' if hits else 'SURVIVES'}  {how}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the exhaustive walk's column

@dataclass
class ConformRow:
    """A defect's code-only mutant under the exhaustive walk (harness.conformance.conform) on its
    configuration: caught or not, and by which edge (or refusal probe) after how many checked edges."""

    defect: str
    config: str
    caught: bool
    kind: str = ""  # divergence | safety | error
    invariants: list[str] = field(default_factory=list)
    edge: str = ""  # the failing edge, `Action(params)`, or `probe Action(params)` after the path
    depth: int = 0  # steps from Init to the failing edge (the spanning tree's: shortest)
    edges: int = 0  # edges checked before it
    seconds: float = 0.0


def conform_rows(defects=None, workers: int = 1, progress=None, *, server) -> list[ConformRow]:
    """The conform column: each defect switched on in the implementation only, the twin correct, its
    configuration walked until the first failure. `progress(done=)` after each defect."""
    from harness.conformance import conform as C
    from harness.conformance.replay import fmt_params
    graphs: dict[str, object] = {}
    out = []
    for k, defect in enumerate(defects or N.DEFECTS):
        name = N.DEFECTS[defect].config
        cfg = configs.get(name)
        if name not in graphs:
            graphs[name] = C.graph_of(cfg)
        rep = C.walk(cfg, server=server, graph=graphs[name], mutant=[defect], workers=workers)
        f = rep.failure
        row = ConformRow(defect, name, f is not None, edges=rep.edges, seconds=rep.seconds)
        if f is not None:
            last = f.steps[-1]
            row.kind, row.invariants, row.depth = f.kind, f.invariants, len(f.steps) - 1
            row.edge = (f"probe {f.probe[0]}({fmt_params(f.probe[1])})" if f.probe else
                        f"{last.action}({fmt_params(last.params)})")
        out.append(row)
        if progress:
            progress(done=k + 1)
    return out


def render_conform(table: list[ConformRow]) -> str:
    lines = ["kill matrix, conform column (code-only mutant, correct twin -> the first failing edge)"]
    for r in table:
        how = (f"{r.kind}{' ' + ', '.join(r.invariants) if r.invariants else ''} at {r.edge}, depth {r.depth}, "
               f"after {r.edges:,} edges ({r.seconds:.1f} s)") if r.caught else f"every edge passed ({r.edges:,})"
        lines.append(f"  {r.defect:38s} {r.config:9s} {'KILLED' if r.caught else 'SURVIVES'}  {how}")
    return "\n".join(lines)

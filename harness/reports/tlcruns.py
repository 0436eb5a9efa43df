"""The gate's TLC runs: one per configuration, shared by its twin = TLC and TLC stages, and reused between
gate runs when nothing TLC reads has changed.

Why: the twin = TLC stage needs TLC's state graph of `ci` and the TLC stage checks `ci`; TLC used to run
twice there (a dump, then the check), and a dot dump doubled TLC's time. Now the check writes the graph
as it goes (harness/engines/tlcgraph.py), the twin = TLC stage starts that run and the TLC stage takes
its outcome. A passing run's outcome (and graph) is stored under the sha256 of everything TLC reads
(harness/engines/tlccache.py: the cfg, every .tla module, the jar's pin, the Java binary, the options),
so a gate run whose spec and configurations did not change reuses it, and says so. A violation is never
stored: it is run again, and its counterexample written again.
"""

from __future__ import annotations

import os
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path

from spec import configs

from harness.engines import check, tlc, tlccache, tlcgraph

GRAPH_CONFIGS = ("ci",)  # the configurations the gate's twin = TLC stage compares; their checks write the graph
# Two checks at a time, one TLC worker each and the JVM's first compiler only (tlc.QUICK_JIT), beside the
# gate's own stages: on two cores that wasted least. Measured on a loaded machine, CPU seconds: `ci` safety
# 25.5 with one worker; the whole TLC stage with two workers per check, one check at a time, 343. The check
# whose graph twin = TLC compares (`ci`, the longest: the last stages wait for it alone) keeps two workers
# and both compilers (GRAPH_WORKERS): with one worker, idle, it ran 185 s and the gate waited 42 s for it
PARALLEL = 2
WORKERS = 1
GRAPH_WORKERS = 2
RESULT_FORMAT = "outcome-1"  # in the key: a change to what is stored misses every stored outcome
_KEPT = ("verdict", "distinct", "generated", "depth", "seconds", "invariants", "liveness")


class GraphUnavailable(RuntimeError):
    """TLC's check stopped before writing the whole graph (a violation, an error): nothing to compare."""


@dataclass
class Run:
    outcome: check.Outcome
    graph: Path | None = None  # TLC's state graph (tlcgraph's file) when the configuration writes one


class TlcRuns:
    """The gate run's TLC checks by configuration name. `store`: the directory of outcomes kept between
    gate runs (None: nothing reused or stored, `--no-reuse`). `graphs`: the configurations whose checks
    write their state graph (the gate's: GRAPH_CONFIGS; the test suite's: every one it compares).

    The checks run PARALLEL at a time on threads of their own, in the order they are asked for, so the
    gate can ask for all of them first (`prefetch`) and run its Python stages meanwhile: TLC's JVMs and the
    twin share the two cores instead of taking turns. Each check is asked for once; a second ask waits."""

    def __init__(self, out_dir: Path | None, store: Path | None = None, graphs: tuple[str, ...] | None = None,
                 *, parallel: int = PARALLEL, workers: int = WORKERS, graph_workers: int = GRAPH_WORKERS):
        self.out_dir, self.store = out_dir, store
        self.graphs = GRAPH_CONFIGS if graphs is None else graphs
        self.workers = workers  # TLC's -workers of each check
        self.graph_workers = graph_workers  # of a check that writes its graph (the gate's `ci`: two)
        self._futures: dict[tuple[str, bool], Future] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="tlc")
        self._tmp = tempfile.TemporaryDirectory(prefix="claimcheck-gate-tlc-")

    def submit(self, name: str, *, liveness: bool, progress=None, task=None) -> Future:
        """`name`'s check, queued behind those asked for before (or the one already asked for).
        `progress`: a callable taking counts; `task`: instead, a function of no argument that opens a
        progress task when the check starts (one opened at queueing would count the wait as TLC's)."""
        with self._lock:
            f = self._futures.get((name, liveness))
            if f is None:
                f = self._pool.submit(self._checked_with, name, liveness, progress, task)
                self._futures[(name, liveness)] = f
            return f

    def prefetch(self, runs, task=None) -> None:
        """Queue every `(name, liveness)` of `runs` now; `task(name)`: the progress task of one check."""
        for name, liveness in runs:
            self.submit(name, liveness=liveness, task=(lambda n=name: task(n)) if task else None)

    def get(self, name: str, *, liveness: bool, progress=None, task=None) -> Run:
        """`name`'s check: run now (after those queued before it), or the one already asked for, or
        reused. A run that crashed is reported again to each asker, never run again."""
        return self.submit(name, liveness=liveness, progress=progress, task=task).result()

    def start(self, name: str, *, liveness: bool = True, progress=None, task=None):
        """`submit`, then a function that waits for the check and reads TLC's graph in twin terms (as
        tlc.state_graph returns it), or raises GraphUnavailable when the check did not pass."""
        future = self.submit(name, liveness=liveness, progress=progress, task=task)

        def finish(timeout: float | None = None):
            try:
                run = future.result(timeout)
            except FutureTimeout:
                raise TimeoutError(f"TLC did not finish {name} within {timeout:.0f} s") from None
            o = run.outcome
            if o.verdict != "ok" or run.graph is None:
                why = ", ".join(o.violated) or (o.reason.splitlines() or [o.verdict])[0]
                raise GraphUnavailable(f"TLC's check of {name} ended {o.verdict.upper()} ({why}) before its graph was "
                                       "whole: see the TLC stage")
            return tlcgraph.read(run.graph)
        return finish

    def close(self) -> None:
        """Drop the checks not started yet (a gate stopped early); the one running ends on its own."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _checked_with(self, name, liveness, progress, task):
        if task is None:
            return self._checked(name, liveness, progress)
        with task() as t:
            return self._checked(name, liveness, t)

    def _digest(self, name: str, liveness: bool) -> str:
        text = configs.to_tlc_cfg(configs.get(name), liveness=liveness)
        graph = tlcgraph.FORMAT if name in self.graphs else "no graph"
        return tlccache.key(text, tlc.MODULES, tlc.JAR_SHA256,
                            (tlccache.java_identity(tlc.find_java()), self._workers(name, liveness), graph, RESULT_FORMAT))

    def _checked(self, name: str, liveness: bool, progress) -> Run:
        """The stored outcome, else a run stored when it passes. The entry stays locked while TLC runs, so a
        second gate or test worker asking for the same check waits for this one and reuses it."""
        if self.store is None:
            return self._run(name, liveness, progress)
        try:
            entry = tlccache.open_entry(self._digest(name, liveness), self.store)
        except tlc.TlcUnavailable:
            return self._run(name, liveness, progress)  # the run reports it
        try:
            return self._reused(name, entry) or self._run(name, liveness, progress, entry)
        finally:
            entry.release()
            if str(self.store) != os.environ.get(tlccache.ENV):  # the test suite's directory goes as a whole
                tlccache.prune(self.store)

    def _reused(self, name: str, entry: tlccache.Entry) -> Run | None:
        want_graph = name in self.graphs
        if entry.result is None or (want_graph and entry.path is None):
            return None
        graph = None
        if want_graph:  # a copy: a later prune or a concurrent gate must not pull it away mid-read
            graph = Path(self._tmp.name) / f"{name}.graph"
            graph.write_bytes(entry.path.read_bytes())
        kept = {k: entry.result[k] for k in _KEPT}
        return Run(check.Outcome("tlc", name, configs.get(name), reused=True, **kept), graph)

    def _workers(self, name: str, liveness: bool) -> int:
        """A graph check with liveness keeps GRAPH_WORKERS: TLC's liveness check on C1 alone ran 2-3x longer in
        the loaded test suite (`rows` 24 -> 65 s, `heartbeat` 18 -> 53 s: docs/figures.md)."""
        if name not in self.graphs:
            return self.workers
        return max(self.workers, GRAPH_WORKERS if liveness else self.graph_workers)

    def _run(self, name: str, liveness: bool, progress, entry: tlccache.Entry | None = None) -> Run:
        graph = Path(self._tmp.name) / f"{name}.graph" if name in self.graphs else None
        workers = self._workers(name, liveness)
        o = check.run_tlc(configs.get(name), name, liveness=liveness, out_dir=self.out_dir, progress=progress,
                          workers=workers, graph=graph, quick_jit=workers == 1)
        if o.verdict == "ok" and entry is not None:
            entry.store(graph, {k: getattr(o, k) for k in _KEPT})
        return Run(o, graph if o.verdict == "ok" else None)

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
from dataclasses import dataclass
from pathlib import Path

from spec import configs

from harness.engines import check, tlc, tlccache, tlcgraph

GRAPH_CONFIGS = ("ci",)  # the configurations the gate's twin = TLC stage compares; their checks write the graph
WORKERS = 2
RESULT_FORMAT = "outcome-1"  # in the key: a change to what is stored misses every stored outcome
_KEPT = ("verdict", "distinct", "generated", "depth", "seconds", "invariants", "liveness")


class GraphUnavailable(RuntimeError):
    """TLC's check stopped before writing the whole graph (a violation, an error): nothing to compare."""


@dataclass
class Run:
    outcome: check.Outcome
    graph: Path | None = None  # TLC's state graph (tlcgraph's file) when the configuration writes one
    shared: bool = False  # handed out before: this gate run's other stage ran it


class TlcRuns:
    """The gate run's TLC checks by configuration name. `store`: the directory of outcomes kept between
    gate runs (None: nothing reused or stored, `--no-reuse`). `graphs`: the configurations whose checks
    write their state graph (the gate's: GRAPH_CONFIGS; the test suite's: every one it compares)."""

    def __init__(self, out_dir: Path | None, store: Path | None = None, graphs: tuple[str, ...] | None = None):
        self.out_dir, self.store = out_dir, store
        self.graphs = GRAPH_CONFIGS if graphs is None else graphs
        self._runs: dict[tuple[str, bool], Run | Exception] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="claimcheck-gate-tlc-")

    def get(self, name: str, *, liveness: bool, progress=None) -> Run:
        """`name`'s check, run now, taken from this gate run's other stage (`shared`), or reused."""
        run = self._runs.get((name, liveness))
        if isinstance(run, Exception):
            raise run  # the run crashed for the other stage: reported again, not run again
        if run is not None:
            run.shared = True
            return run
        try:
            run = self._checked(name, liveness, progress)
        except Exception as exc:
            self._runs[(name, liveness)] = exc
            raise
        self._runs[(name, liveness)] = run
        return run

    def start(self, name: str, *, liveness: bool = True, progress=None):
        """`get` in a background thread; returns a function that waits for it and reads TLC's graph in twin
        terms (as tlc.state_graph returns it), or raises GraphUnavailable when the check did not pass."""
        done: dict = {}
        worker = threading.Thread(target=lambda: done.update(run=self._guarded(name, liveness, progress)),
                                  name=f"tlc-{name}", daemon=True)
        worker.start()

        def finish(timeout: float | None = None):
            worker.join(timeout)
            run = done.get("run")
            if isinstance(run, BaseException):
                raise run
            if run is None:
                raise TimeoutError(f"TLC did not finish {name} within {timeout:.0f} s")
            o = run.outcome
            if o.verdict != "ok" or run.graph is None:
                why = ", ".join(o.violated) or (o.reason.splitlines() or [o.verdict])[0]
                raise GraphUnavailable(f"TLC's check of {name} ended {o.verdict.upper()} ({why}) before its graph was "
                                       "whole: see the TLC stage")
            return tlcgraph.read(run.graph)
        return finish

    def _guarded(self, name, liveness, progress):
        try:
            return self.get(name, liveness=liveness, progress=progress)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting stage, which reports it
            return exc

    def _digest(self, name: str, liveness: bool) -> str:
        text = configs.to_tlc_cfg(configs.get(name), liveness=liveness)
        graph = tlcgraph.FORMAT if name in self.graphs else "no graph"
        return tlccache.key(text, tlc.MODULES, tlc.JAR_SHA256,
                            (tlccache.java_identity(tlc.find_java()), WORKERS, graph, RESULT_FORMAT))

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

    def _run(self, name: str, liveness: bool, progress, entry: tlccache.Entry | None = None) -> Run:
        graph = Path(self._tmp.name) / f"{name}.graph" if name in self.graphs else None
        o = check.run_tlc(configs.get(name), name, liveness=liveness, out_dir=self.out_dir, progress=progress,
                          graph=graph)
        if o.verdict == "ok" and entry is not None:
            entry.store(graph, {k: getattr(o, k) for k in _KEPT})
        return Run(o, graph if o.verdict == "ok" else None)

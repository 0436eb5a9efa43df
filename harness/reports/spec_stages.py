"""The gate's stages that check the spec itself (SANY, the explorer, twin = TLC, TLC, Apalache): they read
no server, so a gate `--sut` runs them as without it; harness/reports/gate.py orders and runs them with
the server's stages."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from spec import configs

from harness.reports import locate
from harness.reports.results import FAIL, PASS, SKIP, Check, StageResult

if TYPE_CHECKING:
    from harness.reports.gate import Gate


def stage_parse(g: Gate) -> StageResult:
    """SANY parses every module in spec/ (the protocol, the abstract protocol, the refinement, the MC
    modules), each on its own."""
    from harness.engines import tlc
    try:
        java, jar = tlc.find_java(), tlc.find_jar()
    except tlc.TlcUnavailable as exc:
        return StageResult("parse", SKIP, str(exc))
    for module in tlc.MODULES:
        proc = subprocess.run([java, "-cp", str(jar), "tla2sany.SANY", module.name], cwd=module.parent,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            out = (proc.stdout + proc.stderr).strip()
            lines = out.splitlines() or ["(no output)"]
            where = re.search(r"line (\d+), col", out)
            return StageResult("parse", FAIL, f"{module.name}: {lines[-1]}", kind="ParseError", file=locate.spec_file(module),
                               line=int(where.group(1)) if where else None)
    return StageResult("parse", PASS, "SANY parsed " + ", ".join(m.name for m in tlc.MODULES))


def stage_equivalence(g: Gate) -> StageResult:
    """The twin's graph of `ci` against the one TLC writes while it checks `ci` (the TLC stage then takes
    that run's outcome: harness/reports/tlcruns.py)."""
    from harness.engines import tlc
    from harness.engines.equivalence import compare
    from harness.reports.tlcruns import GRAPH_CONFIGS, GraphUnavailable
    try:
        tlc.find_jar(), tlc.find_java()
    except tlc.TlcUnavailable as exc:
        return StageResult("twin = TLC", SKIP, str(exc))
    (name,) = GRAPH_CONFIGS
    twin_side = g.twin_sides.pop(name, None)  # the explorer stage's graph, when its check held
    with g.progress.task(f"twin = TLC: twin {name}") as twin:
        try:  # TLC's side: the TLC stage's check of `name`, queued first (run_gate), or queued now
            c = compare(configs.get(name), progress_twin=twin, twin=twin_side,
                        tlc_graph=g.tlc.start(name, task=lambda: g.progress.task(f"TLC {name}")))
        except GraphUnavailable as exc:
            return StageResult("twin = TLC", FAIL, str(exc), kind="GraphUnavailable")
    reused = g.tlc.get(name, liveness=True).outcome.reused
    how = " (TLC's side reused from an earlier gate run)" if reused else ""
    if not c.equal:
        return StageResult("twin = TLC", FAIL, f"graphs differ: twin {c.twin_states:,}/{c.twin_edges:,}, "
                                               f"TLC {c.tlc_states:,}/{c.tlc_edges:,}{how}", kind="GraphsDiffer",
                           reused=reused)
    detail = (f"{name}: {c.twin_states:,} states, {c.twin_edges:,} labelled edges on both sides{how}"
              + ("; the twin's side is the explorer stage's graph" if twin_side else ""))
    return StageResult("twin = TLC", PASS, detail, reused=reused)


def _model_check(g: Gate, engine: str) -> StageResult:
    """Every gate and feature configuration, every invariant.  The explorer checks the liveness properties
    on all of them; TLC on the gate's, and on the feature configurations safety and the refinement only
    (their liveness in TLC costs a minute, so the test suite checks it: tests/engines/test_defect_table.py)."""
    from harness.engines.check import run_python
    from harness.engines.equivalence import graph_keys
    from harness.reports.tlcruns import GRAPH_CONFIGS
    label = "TLC" if engine == "tlc" else "explorer"
    names = configs.GATE_CONFIGS + configs.FEATURE_CONFIGS
    parts, checks, status, outcomes = [], [], PASS, []
    if engine == "tlc" and not g.serial:
        prefetch_tlc(g)  # queued already when run_gate runs this stage (a caller of the stage alone: now)
    for k, name in enumerate(names):
        liveness = engine == "python" or name in tlc_liveness(g.serial)
        if engine == "python":
            kept = [] if name in GRAPH_CONFIGS and not g.serial else None
            with g.progress.task(f"{label} {name}") as task:
                o, how = run_python(configs.get(name), name, liveness=liveness, out_dir=g.out_dir, progress=task,
                                    keep=kept), ""
                if kept and o.verdict == "ok":  # whole: twin = TLC compares it instead of exploring again
                    g.twin_sides[name] = graph_keys(configs.get(name), kept[0].graph, task)
        else:  # the one TLC run of this configuration (tlcruns): run in the background, or reused
            o = g.tlc.get(name, liveness=liveness, task=lambda n=name: g.progress.task(f"TLC {n}")).outcome
            how = ", reused" if o.reused else ", run by twin = TLC" if name in g.tlc.graphs else ""
        outcomes.append(o)
        checks.append(_model_check_result(f"{label} {name}", o))
        if o.verdict == "skipped":
            checks += [Check(f"{label} {rest}", SKIP, f"not run: {o.reason}") for rest in names[k + 1:]]
            return StageResult(label, SKIP, o.reason, checks=checks)
        if o.verdict != "ok":
            status = FAIL
            parts.append(f"{name}: {o.verdict.upper()} {', '.join(o.violated) or o.reason}"
                         + (f" (trace {o.trace_path})" if o.trace_path else ""))
        else:
            parts.append(f"{name}: {o.distinct:,} states in {o.seconds:.0f} s{how}" + ("" if liveness else ", safety"))
    if engine == "python":
        from harness.reports.fences import fence_branches
        fence = fence_branches([(c.config_name, c.fences) for c in outcomes if c.fences is not None])
        checks.append(fence)
        status = FAIL if fence.status == FAIL else status
        parts.append(f"fence branches: {fence.detail}")
    if engine == "tlc":
        what = (f"; every invariant, the liveness properties on {', '.join(tlc_liveness(g.serial))} (the explorer "
                "checks them everywhere), and the refinement of SessionLifecycle")
    else:
        what = "; every invariant and the liveness properties"
    return StageResult(label, status, "; ".join(parts) + what, checks=checks, reused=any(c.reused for c in checks))


def _model_check_result(name: str, o) -> Check:
    """One configuration on one engine; a violation points at the TLA+ line defining what it violated."""
    status = {"ok": PASS, "skipped": SKIP}.get(o.verdict, FAIL)
    detail = o.reason or ", ".join(o.violated)
    if status != FAIL:
        return Check(name, status, detail, o.seconds, reused=o.reused)
    if o.trace_path:
        detail += f" (trace {locate.relpath(o.trace_path)})"
    where = next((w for w in (locate.tla_definition(v) for v in o.violated) if w), (None, None))
    return Check(name, FAIL, detail, o.seconds, kind="InvariantViolation" if o.verdict == "violation" else "EngineError",
                 file=where[0], line=where[1])


def tlc_liveness(serial: bool = False) -> tuple[str, ...]:
    """The configurations whose TLC check includes the liveness properties: `ci`, whose graph twin = TLC
    shows equal to the explorer's (so both engines' liveness verdicts are over one graph). The other gate
    configurations' TLC liveness runs in the test suite (tests/engines/test_equivalence.py: `rows` and
    `heartbeat` in every run, `steps` nightly), the explorer's in the gate: on two cores it cost the gate
    about 24 CPU-s of its 300 (issue 34 item 2). `serial`: the
    layout before it, liveness on every gate configuration."""
    from harness.reports.tlcruns import GRAPH_CONFIGS
    return configs.GATE_CONFIGS if serial else GRAPH_CONFIGS


def tlc_checks(serial: bool = False) -> list[tuple[str, bool]]:
    """The TLC stage's checks, `(configuration, liveness)`, in the order they run: `ci` first, whose graph
    twin = TLC compares, then the gate's, then the feature configurations; liveness: tlc_liveness."""
    live = tlc_liveness(serial)
    return [(n, n in live) for n in configs.GATE_CONFIGS + configs.FEATURE_CONFIGS]


def prefetch_tlc(g: Gate) -> None:
    """Queue every TLC check of the TLC stage on its background thread (harness/reports/tlcruns.py)."""
    g.tlc.prefetch(tlc_checks(g.serial), task=lambda name: g.progress.task(f"TLC {name}"))


def stage_tlc(g: Gate) -> StageResult:
    return _model_check(g, "tlc")


def stage_explorer(g: Gate) -> StageResult:
    return _model_check(g, "python")


def stage_apalache(g: Gate) -> StageResult:
    from harness.engines import apalache
    missing = apalache.untyped_variables()
    if missing:
        return StageResult("Apalache", FAIL, f"variables without an @type annotation: {', '.join(missing)}",
                           kind="UntypedVariables", file=locate.spec_file())
    try:
        with g.progress.task("Apalache"):  # no counts: elapsed time, and a heartbeat line in a log
            results = apalache.run_all(g.apalache, configs.get("ci"))
    except apalache.ApalacheUnavailable as exc:
        return StageResult("Apalache", SKIP, f"{exc}; every VARIABLE has an @type annotation (checked)")
    parts, checks = [], []
    status = PASS
    for r in results:
        parts.append(f"{r.command} {r.meaning}")
        checks.append(Check(f"Apalache {r.command}", PASS if r.verdict == "ok" else FAIL, r.meaning,
                            kind="" if r.verdict == "ok" else "ApalacheFailure"))
        if r.verdict != "ok":
            status = FAIL
            saved = [str(_save_apalache_trace(t, g.out_dir)) for t in r.traces]
            if saved:
                parts.append("traces: " + ", ".join(saved))
            parts += [f"not replayable by the twin: {e}" for e in r.import_errors]
    return StageResult("Apalache", status, "; ".join(parts), checks=checks)


def _save_apalache_trace(tr, out_dir: Path):
    """An Apalache counterexample (already imported from ITF) under traces/found/."""
    from harness.traces import trace as T
    return T.save(tr, T.found_path(out_dir, "apalache"))

"""`claimcheck gate`: every check, in order, with a progress line per stage and a summary table.

Stages pass, fail, or are skipped with a reason (a skip is never a pass: the summary names each skipped
stage, and `--strict` turns skips into failures, except those of the stages named by `--allow-skip`,
which stay skips and are named as allowed, and a stage not applicable to the server by design: the kill
matrix of a server without defect switches, harness/reports/switchless.py). Exit 0 only when every stage that ran passed (and, under
`--strict`, none but an allowed one was skipped).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from spec import configs
from spec import names as N

from harness.reports import locate
from harness.reports import switchless as S
from harness.progress import QUIET, Reporter
from harness.reports.results import FAIL, PASS, SKIP, TARGET_SECONDS, Check, StageResult, target_line


@dataclass
class Stage:
    name: str
    run: Callable[["Gate"], StageResult]


class Gate:
    def __init__(self, out_dir: Path, *, server, quick: bool = False, apalache: str | None = None,
                 progress: Reporter | None = None, reuse: Path | None = None, serial: bool = False):
        """`server`: the system under test (harness.port: the bundled server, or one behind a driver) that
        the traces, lockstep, conformance and kill matrix stages drive. `reuse`: the directory of TLC
        outcomes kept between gate runs (None: every TLC check runs now). `serial`: the layout before
        issue 34 (`claimcheck bench --gate` measures both): each TLC check in its stage's turn with two
        workers, twin = TLC exploring the twin itself, the whole kill matrix (SERIAL_ORDER)."""
        from harness.reports.tlcruns import TlcRuns
        self.out_dir = out_dir
        self.serial = serial
        # one TLC run per configuration, shared by twin = TLC and TLC
        self.tlc = TlcRuns(out_dir, reuse, **({"parallel": 1, "workers": 2} if serial else {}))
        self.server = server
        self.progress = progress or QUIET  # live progress of the long stages (harness.progress)
        self.quick = quick
        self.apalache = apalache
        self.results: list[StageResult] = []
        self.coverage: dict = {}  # what the conformance stage walked (harness.reports.switchless reads it)
        self.twin_sides: dict = {}  # the explorer stage's graphs of GRAPH_CONFIGS, for twin = TLC to compare


# ---------------------------------------------------------------- stages

from harness.reports.spec_stages import (prefetch_tlc, stage_apalache, stage_equivalence,  # noqa: E402
                                         stage_explorer, stage_parse, stage_tlc, tlc_checks)

def stage_traces(g: Gate) -> StageResult:
    from harness.conformance.replay import committed_traces, replay_through
    from harness.traces import trace as T
    results, checks = [], []
    paths = committed_traces()
    with g.progress.task("traces", unit="traces", key="done", total=len(paths)) as task:
        for path in paths:
            t0 = time.perf_counter()
            r = replay_through(T.load(path), None, str(path), g.server)
            results.append(r)
            checks.append(_replay_check(r, time.perf_counter() - t0))
            task(done=len(results), steps=sum(x.consumed for x in results))
    if not results:
        return StageResult("traces", FAIL, "no trace in traces/: a replay stage that replays nothing proves nothing",
                           kind="NoTraces")
    bad = [r for r in results if not r.ok]
    if bad:
        return StageResult("traces", FAIL, "; ".join(f"{Path(r.name).name}: {', '.join(r.problems[:2])}" for r in bad),
                           checks=checks)
    steps = sum(r.consumed for r in results)
    return StageResult("traces", PASS, f"{len(results)} traces, {steps} steps replayed against {_whom(g)}, "
                                       "in lockstep with the twin", checks=checks)


def _whom(g: Gate) -> str:
    """What the stages drive, for their details: the bundled implementation or the driver's server."""
    return f"the server behind `{g.server.command}`" if g.server.command else "the implementation"


def _replay_check(r, seconds: float) -> Check:
    """A committed trace's replay; a failure points at the line of its failing step in the trace file."""
    name = f"replay {Path(r.name).name}"
    if r.ok:
        return Check(name, PASS, "", seconds)
    k = locate.failing_step(r.problems, [s.index for s in r.steps if s.violated])
    return Check(name, FAIL, "; ".join(r.problems[:3]), seconds,
                 kind="InvariantViolation" if r.violated else "ReplayFailure",
                 file=locate.relpath(r.name), line=locate.trace_step_line(r.name, k) if k else None)


def lockstep_configs() -> list[str]:
    """The gate's configurations lockstep drives: those the conformance stage does not walk whole (a
    random walk of a configuration whose every state, edge and refusal is walked adds nothing)."""
    from harness.conformance import exhaustive as X
    return [n for n in configs.GATE_CONFIGS if n not in X.PROFILES["ci"]]


def stage_lockstep(g: Gate) -> StageResult:
    """Hypothesis drives the implementation from the twin (ci profile) on each gate configuration the
    conformance stage does not walk whole; a failure is saved as a trace with the replay command that
    reproduces it."""
    from harness.conformance import fuzz
    from harness.conformance import lockstep
    parts, status, checks = [], PASS, []
    whole = [n for n in configs.GATE_CONFIGS if n not in lockstep_configs()]
    if whole:
        parts.append(f"{', '.join(whole)}: walked whole by the conformance stage instead")
    for name in lockstep_configs():
        cfg = configs.get(name)
        with g.progress.task(f"lockstep {name}", unit="steps", key="steps") as task:
            o = lockstep.run(cfg, server=g.server, profile="ci", progress=task)
        cov = o.coverage
        if o.found is None and o.hypothesis_error is None:
            checks.append(Check(f"lockstep {name}", PASS, "", o.seconds))
            parts.append(f"{name}: {cov.examples} examples, {cov.steps:,} steps, "
                         f"{len(cov.states):,} distinct states, {len(cov.edges):,} distinct edges, "
                         f"{len(cov.boundaries)}/{len(N.BOUNDARIES)} boundaries")
            continue
        status = FAIL
        check = Check(f"lockstep {name}", FAIL, "", o.seconds, kind="HypothesisError")
        if o.found is not None:
            path = fuzz.write_trace(o, name, g.out_dir)
            why = f"{o.found.kind} {', '.join(o.found.invariants)}: {fuzz.replay_command(path, cfg, g.server)}"
            # the counterexample breaks at its last step
            check.kind, check.file = "InvariantViolation", locate.relpath(path)
            check.line = locate.trace_step_line(path, locate.trace_steps(path)) or None
        else:
            why = f"Hypothesis error: {o.hypothesis_error}"
        check.detail = why
        checks.append(check)
        parts.append(f"{name}: {why}")
    return StageResult("lockstep", status, "; ".join(parts), checks=checks)


def stage_conformance(g: Gate) -> StageResult:
    """The exhaustive walk (harness.conformance.conform, profile ci: small configurations that together
    enable every registry action and pass every boundary), two workers on the bundled server (a database
    in memory each), one on a driver: every reachable state, labelled edge and refusal probe; a failure is
    saved as a trace."""
    from harness.conformance import conform as C
    from harness.conformance import exhaustive as X
    parts, status, checks = [], PASS, []
    actions, boundaries = set(), set()
    g.coverage = cov = {"actions": actions, "boundaries": boundaries, "edges": 0, "probes": 0}
    for label in X.PROFILES["ci"]:
        cfg, base = X.resolve(label)
        with g.progress.task(f"conform {base}", unit="edges", key="edges") as task:
            rep = C.walk(cfg, server=g.server, workers=1 if g.server.command else 2, progress=task)
        actions |= set(rep.actions)
        boundaries |= set(rep.boundaries)
        cov["edges"] += rep.edges
        cov["probes"] += rep.probes
        if rep.complete:
            checks.append(Check(f"conform {base}", PASS, X.summary(rep), rep.seconds))
            parts.append(f"{base}: {rep.edges:,} edges")
            continue
        status = FAIL
        check = Check(f"conform {base}", FAIL, X.summary(rep), rep.seconds, kind="Incomplete")
        if rep.failure is not None:
            path = X.write_trace(rep, base, g.out_dir)
            f = rep.failure
            check.kind, check.file = "InvariantViolation" if f.invariants else "Divergence", locate.relpath(path)
            check.line = locate.trace_step_line(path, locate.trace_steps(path)) or None
            check.detail = f"{f.kind} {', '.join(f.invariants)}: {X.replay_command(path, cfg, g.server)}"
        checks.append(check)
        parts.append(f"{base}: {check.detail}")
    missing = [a for a in N.ACTIONS if a not in actions] + [b for b in N.BOUNDARIES if b not in boundaries]
    if missing and status == PASS:
        status = FAIL
        parts.append(f"never taken or passed: {', '.join(missing)}")
    head = (f"every state, edge and refusal probe of {len(checks)} configurations; {len(actions)}/{len(N.ACTIONS)} "
            f"actions, {len(boundaries)}/{len(N.BOUNDARIES)} boundaries")
    return StageResult("conformance", status, head + "; " + "; ".join(parts), checks=checks)


def stage_kill_matrix(g: Gate) -> StageResult:
    """Every defect the server can switch on (harness.reports.switchless: none, not applicable)."""
    from harness.conformance import killmatrix as K
    from harness.conformance.replay import committed_traces
    skip = S.not_applicable(g, _whom(g))
    if skip is not None:
        return skip
    defects = S.partial(g)
    with g.progress.task("kill matrix", unit="defects", key="done", total=len(defects)) as task:
        table = K.rows(defects=defects, progress=task, server=g.server, first=not g.serial)
    missed = K.undetected(table)
    with g.progress.task("kill matrix: correct implementation", unit="traces", key="done",
                         total=len(committed_traces())) as task:
        correct = K.correct_failures(progress=task, server=g.server)
    checks = [_kill_check(d, [r for r in table if r.defect == d]) for d in dict.fromkeys(r.defect for r in table)]
    checks.append(Check("correct implementation: every trace passes", FAIL if correct else PASS,
                        ", ".join(Path(r.name).name for r in correct), kind="ReplayFailure" if correct else ""))
    if missed or correct:
        detail = (f"defects no check detects: {', '.join(missed)}" if missed else "") + (
            f"; traces failing on the correct implementation: {', '.join(r.name for r in correct)}" if correct else "")
        return StageResult("kill matrix", FAIL, detail.strip("; "), checks=checks)
    killed = len(dict.fromkeys(r.defect for r in table))
    unswitched = len(N.DEFECTS) - len(defects)
    return StageResult("kill matrix", PASS, f"all {killed} registry defects {_whom(g)} can switch on detected by a "
                                            f"trace replayed against it; the correct one passes every trace"
                       + (f" ({unswitched} registry defects it has no switch for not run)" if unswitched else ""),
                       checks=checks)


def _kill_check(defect: str, rows) -> Check:
    """One defect of the kill matrix; one that survives points at the TLA+ line that switches it on."""
    hits = [r for r in rows if r.detected]
    if hits:
        how = ", ".join(f"{Path(r.trace).name} ({', '.join(r.violated) or 'expectation'})" for r in hits)
        return Check(f"kill {defect}", PASS, f"detected by {how}")
    line = locate.tla_defect_line(defect)
    return Check(f"kill {defect}", FAIL, f"no check detects {defect} (replayed against {len(rows)} traces)",
                 kind="UndetectedDefect", file=locate.spec_file(locate.MC_SPEC) if line else None, line=line)


# TLC's checks run in the background from the start (run_gate), so the stages that need TLC come after
# those that run in claimcheck's own process and report what TLC did meanwhile; the explorer's graph of
# `ci` is the twin's side of twin = TLC
STAGES = [
    Stage("parse", stage_parse),
    Stage("explorer", stage_explorer),
    Stage("traces", stage_traces),
    Stage("lockstep", stage_lockstep),
    Stage("conformance", stage_conformance),
    Stage("kill matrix", stage_kill_matrix),
    Stage("twin = TLC", stage_equivalence),
    Stage("TLC", stage_tlc),
    Stage("Apalache", stage_apalache),
]
# the order before TLC ran in the background (Gate(serial=True))
SERIAL_ORDER = ["parse", "twin = TLC", "TLC", "explorer", "traces", "lockstep", "conformance", "kill matrix",
                "Apalache"]


# ---------------------------------------------------------------- running and reporting

def run_gate(g: Gate, stages=None) -> list[StageResult]:
    stages = stages or STAGES
    if g.serial:
        stages = sorted(stages, key=lambda s: SERIAL_ORDER.index(s.name))
    total = len(stages)
    if any(s.run is stage_tlc for s in stages) and not g.serial:
        prefetch_tlc(g)
        print(f"TLC checks {len(tlc_checks())} configurations in the background, two at a time, from now on; "
              "its stage reports them when the stages before it are done", flush=True)
    for k, stage in enumerate(stages, start=1):
        print(f"[{k}/{total}] {stage.name} …", flush=True)
        t0 = time.perf_counter()
        try:
            r = stage.run(g)
        except Exception as exc:  # noqa: BLE001 - a crashing stage is a failed stage, reported, not raised
            r = StageResult(stage.name, FAIL, f"{type(exc).__name__}: {exc}", kind=type(exc).__name__)
        r.name = stage.name
        r.seconds = time.perf_counter() - t0
        r.checks = [c if isinstance(c, Check) else Check(**c) for c in r.checks]  # a stage may hand dicts
        mark = {PASS: "ok", FAIL: "FAILED", SKIP: "skipped"}[r.status]
        print(f"      {mark} in {r.seconds:.1f} s: {r.detail}", flush=True)
        g.results.append(r)
    return g.results


def summary(results: list[StageResult], *, strict: bool = False, allowed=()) -> str:
    allowed = {_key(a) for a in allowed}
    width = max(len(r.name) for r in results)
    total = sum(r.seconds for r in results)
    lines = ["", f"{'stage':<{width}}  {'result':<7}  {'time':>7}  share", "-" * (width + 32)]
    for r in results:
        share = 100 * r.seconds / total if total else 0
        lines.append(f"{r.name:<{width}}  {r.status.upper():<7}  {r.seconds:6.1f}s  {share:4.0f}%"
                     + (f"  {_reused(r)}" if r.reused else ""))
    lines.append("-" * (width + 32))
    passed = sum(r.status == PASS for r in results)
    failed = sum(r.status == FAIL for r in results)
    skipped = sum(r.status == SKIP for r in results)
    lines.append(f"{'total':<{width}}  {'':<7}  {total:6.1f}s   (2 cores; {target_line(total, TARGET_SECONDS)})")
    lines.append(f"gate: {passed} passed, {failed} failed, {skipped} skipped")
    for r in results:
        if r.status == SKIP:
            how = ("not chosen (--stage)" if r.kind == "NotChosen" else S.SUMMARY if r.kind == S.NOT_APPLICABLE
                   else "allowed by --allow-skip" if _key(r.name) in allowed
                   else "fails the gate (--strict)" if strict else "not a pass")
            lines.append(f"gate: skipped {r.name}: {how}")
            if r.kind == S.NOT_APPLICABLE:
                lines.append(f"gate: instead of the {r.name}: {r.detail.split('Measured without switches: ')[-1]}")
    reused = [f"{r.name} ({_reused(r)})" for r in results if r.reused]
    if reused:
        lines.append("gate: reused from an earlier gate run with the same spec, configurations, TLC and Java "
                     f"(--no-reuse runs them): {', '.join(reused)}")
    lines.append("gate: stage times: " + ", ".join(f"{r.name} {r.seconds:.1f} s" for r in results if r.kind != "NotChosen")
                 + f"; total {total:.1f} s")
    return "\n".join(lines)


def _reused(r: StageResult) -> str:
    """What of a stage was reused: `reused` (all of it, or its TLC side), or `3/10 reused` of its checks."""
    if not r.checks:
        return "TLC's side reused" if r.name == "twin = TLC" else "reused"
    k = sum(c.reused for c in r.checks)
    return "reused" if k == len(r.checks) else f"{k}/{len(r.checks)} reused"


def _key(stage_name: str) -> str:
    """How `--allow-skip` names a stage: its name in lower case (`apalache`, `tlc`, `twin = tlc`)."""
    return stage_name.strip().lower()


def stage_keys() -> list[str]:
    return [_key(s.name) for s in STAGES]


def refused_skips(results: list[StageResult], strict: bool, allowed=()) -> list[str]:
    """The stages whose skip fails the gate: under `strict`, every skipped stage not in `allowed`."""
    allowed = {_key(a) for a in allowed}
    return [r.name for r in results if strict and r.status == SKIP and _key(r.name) not in allowed
            and r.kind != S.NOT_APPLICABLE]


def verdict_ok(results: list[StageResult], strict: bool = False, allowed=()) -> bool:
    return all(r.status != FAIL for r in results) and not refused_skips(results, strict, allowed)


def write_json(results: list[StageResult], path: Path, *, strict: bool = False, allowed=()) -> None:
    """The JSON report, as harness/reports/report.py defines it (docs/report.schema.json)."""
    from harness.reports import report
    report.write_json(report.build(results, ok=verdict_ok(results, strict, allowed), strict=strict,
                                   allowed_skips={_key(a) for a in allowed}), path)


def write_junit(results: list[StageResult], path: Path) -> None:
    """The JUnit report, one testcase per check (harness/reports/junit.py)."""
    from harness.reports import junit
    junit.write_junit(results, path)


def chosen_stages(keys) -> tuple[list[Stage], list[str]]:
    """`--stage KEY...`: the stages in the gate's order, those not chosen replaced by a skip that says so
    (a skip, never a pass; the user chose it, so --strict allows it), and the keys of those skipped."""
    if not keys:
        return STAGES, []
    keys = {_key(k) for k in keys}
    out, left = [], []
    for s in STAGES:
        if _key(s.name) in keys:
            out.append(s)
        else:
            left.append(_key(s.name))
            out.append(Stage(s.name, lambda g, name=s.name: StageResult(name, SKIP, "not chosen (--stage)",
                                                                       kind="NotChosen")))
    return out, left


def main_gate(args, server) -> int:
    """`server`: the system under test the stages drive (harness.port; chosen by harness.cli: the bundled
    server, or the one behind `--sut`, already greeted)."""
    strict = bool(getattr(args, "strict", False))
    stages, unchosen = chosen_stages(getattr(args, "stage", None))
    allowed = tuple(getattr(args, "allow_skip", None) or ()) + tuple(unchosen)
    print("claimcheck gate: " + ", ".join(s.name for s in STAGES)
          + (f" (only {', '.join(s.name for s in STAGES if _key(s.name) not in unchosen)}: --stage)" if unchosen else ""))
    from harness.engines import tlccache
    reuse = None if getattr(args, "no_reuse", False) else tlccache.default_directory()
    with Reporter() as progress:
        g = Gate(Path(args.out), server=server, apalache=getattr(args, "apalache", None), progress=progress,
                 reuse=reuse)
        try:
            results = run_gate(g, stages)
        finally:
            g.tlc.close()
    print(summary(results, strict=strict, allowed=allowed))
    if args.json:
        write_json(results, Path(args.json), strict=strict, allowed=allowed)
    if args.junit:
        write_junit(results, Path(args.junit))
    from harness.reports import github
    github.report(results, verdict_ok(results, strict, allowed))
    failed = any(r.status == FAIL for r in results)
    refused = refused_skips(results, strict, allowed)
    if refused:
        print(f"gate: --strict: skipped {', '.join(refused)} counts as a failure"
              + (f" (only {', '.join(allowed)} may be skipped)" if allowed else ""), file=sys.stderr)
        return 1
    return 1 if failed else 0

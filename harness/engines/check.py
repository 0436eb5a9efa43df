"""`claimcheck check`: model-check one configuration with one engine; one outcome shape for both.

A violation always becomes a trace file (harness.traces.trace), whichever engine found it, so that every
counterexample can be replayed and explained the same way.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from spec import model as M
from spec import names as N

from harness.traces import trace as T
from harness.traces.paths import Step
from harness.engines import fences
from harness.engines.explore import explore


@dataclass
class Outcome:
    engine: str
    config_name: str
    cfg: M.Config
    verdict: str  # ok | violation | skipped | error
    distinct: int = 0
    generated: int = 0
    depth: int = 0
    seconds: float = 0.0
    invariants: list[str] = field(default_factory=list)
    liveness: bool = False
    violated: list[str] = field(default_factory=list)
    length: int | None = None  # counterexample steps
    trace_path: Path | None = None
    reason: str = ""
    distributed: bool = False  # TLC's distributed mode (tlc_distributed): safety only
    not_checked: str = ""  # what the mode does not check, said in the report (never as passed)
    reused: bool = False  # a stored passing outcome of the same inputs (harness/reports/tlcruns.py), not run now
    fences: Counter | None = None  # the explorer's edges per (fenced action, branch): harness/engines/fences.py


def _checked(liveness: bool, engine: str = "python") -> list[str]:
    """What a run checks; TLC also checks the refinement of SessionLifecycle (the twin does not)."""
    return (list(N.STATE_INVARIANTS) + list(N.ACTION_INVARIANTS) + (list(N.LIVENESS) if liveness else [])
            + ([N.REFINEMENT] if engine == "tlc" else []))


def _label(cfg: M.Config, config_name: str) -> str:
    return "-".join([config_name] + sorted(cfg.defects)) or config_name


def run_python(cfg: M.Config, config_name: str, *, liveness: bool, out_dir: Path | None,
               progress=None, keep: list | None = None) -> Outcome:
    """`keep`: a list the explorer's result is appended to (the gate compares its graph with TLC's)."""
    res = explore(cfg, liveness=liveness, keep_edges=liveness or keep is not None, progress=progress)
    if keep is not None:
        keep.append(res)
    o = Outcome("python", config_name, cfg, "ok", res.distinct, res.generated, res.depth, res.seconds,
                _checked(liveness), liveness)
    if res.graph is not None and res.graph.succ is not None:
        o.fences = fences.tally(cfg, res.graph)
    if res.violation:
        o.verdict = "violation"
        o.violated = res.violation.invariants
        o.length = len(res.violation.steps) - 1
        o.trace_path = _write(cfg, config_name, res.violation.steps, o.violated, "explore",
                              res.violation.loop, out_dir)
    return o


def steps_from_tlc(cfg: M.Config, tlc_steps) -> list[Step]:
    """TLC prints action names, not parameters: recover each step's parameters from the twin's successors."""
    out = [Step(None, (), tlc_steps[0].state)]
    for k, s in enumerate(tlc_steps[1:], start=1):
        prev = out[-1].state
        match = [p for a, p, nx in M.successors(cfg, prev) if a == s.action and nx == s.state]
        if not match:
            raise RuntimeError(f"TLC's step {k} ({s.action}) is not a twin step: the spec and the twin disagree")
        out.append(Step(s.action, match[0], s.state))
    return out


def run_tlc(cfg: M.Config, config_name: str, *, liveness: bool, out_dir: Path | None, workers: int = 2,
            progress=None, distributed: bool = False, graph: Path | None = None, quick_jit: bool = False) -> Outcome:
    """TLC on `cfg`; `distributed`: TLC's own distributed mode (a server and `workers` worker processes on
    loopback), which checks safety only: liveness is then off and the outcome says it was not checked.
    `graph`: the same run also writes TLC's state graph there (harness/engines/tlcgraph.py). `quick_jit`:
    the JVM's first compiler only (tlc.jvm), for a check too short to repay the second's work."""
    from harness.engines import tlc, tlc_distributed
    t0 = time.perf_counter()
    liveness = liveness and not distributed
    unchecked = tlc_distributed.NOT_CHECKED if distributed else ""
    try:
        if distributed:
            res = tlc_distributed.run(cfg, workers=workers, progress=progress)
        else:
            res = tlc.run(cfg, liveness=liveness, workers=workers, progress=progress, graph=graph, quick_jit=quick_jit)
    except tlc.TlcUnavailable as exc:
        return Outcome("tlc", config_name, cfg, "skipped", reason=str(exc), invariants=_checked(liveness, "tlc"),
                       liveness=liveness, distributed=distributed, not_checked=unchecked)
    except tlc_distributed.DistributedFailure as exc:
        return Outcome("tlc", config_name, cfg, "error", reason=f"TLC's distributed mode failed: {exc}",
                       invariants=_checked(liveness, "tlc"), liveness=liveness, distributed=True, not_checked=unchecked)
    o = Outcome("tlc", config_name, cfg, res.verdict, res.distinct, res.generated, max(res.depth - 1, 0),
                time.perf_counter() - t0, _checked(liveness, "tlc"), liveness, distributed=distributed,
                not_checked=unchecked)
    if res.verdict == "error":
        o.reason = "TLC failed:\n" + "\n".join(res.output.strip().splitlines()[-15:])
        return o
    if res.verdict == "violation":
        names = [v for v in res.violated if v != "<temporal>"] or tlc.liveness_names(cfg, res) or ["<temporal>"]
        o.violated = names
        steps = steps_from_tlc(cfg, res.steps)
        o.length = len(steps) - 1
        o.trace_path = _write(cfg, config_name, steps, names, "tlc", res.loop, out_dir)
    return o


def _write(cfg, config_name, steps, violated, source, loop, out_dir) -> Path | None:
    if out_dir is None:
        return None
    defect = next(iter(sorted(cfg.defects)), None)
    title = f"{source}: {', '.join(violated)} on {config_name}" + (f" with {defect}" if defect else "")
    tr = T.from_steps(cfg, steps, title=title, source=source, base=config_name, invariants=violated,
                      defect=defect, loop=loop)
    return T.save(tr, T.found_path(out_dir, f"{source}-{_label(cfg, config_name)}"))


def profile_runs(profile: str, engine: str) -> list[tuple[str, bool]]:
    """`claimcheck check --profile`: (configuration, liveness) for each configuration a profile checks.
    `ci`: the gate's (liveness on its five; TLC checks the feature configurations' safety and refinement,
    the explorer their liveness too); `deep`: every registered configuration but `deep` itself (the
    bench's: an hour in TLC), liveness on every one but `configs.SAFETY_ONLY`'s."""
    from spec import configs
    if profile == "ci":
        return [(n, engine == "python" or n in configs.GATE_CONFIGS) for n in configs.GATE_CONFIGS + configs.FEATURE_CONFIGS]
    return [(n, n not in configs.SAFETY_ONLY) for n in configs.CONFIGS if n != "deep"]


CHECK_PROFILES = ("ci", "deep")


@dataclass
class Witness:
    """One row of the defect table: a defect on (or an assumption off) and what each engine found."""

    kind: str  # defect | assumption
    name: str
    config_name: str
    expected: tuple[str, ...]
    outcomes: dict[str, Outcome] = field(default_factory=dict)

    def detected(self, engine: str) -> bool:
        o = self.outcomes.get(engine)
        return o is not None and o.verdict == "violation" and bool(set(o.violated) & set(self.expected))


def witnesses() -> list[Witness]:
    rows = [Witness("defect", d.name, d.config, d.violates) for d in N.DEFECTS.values()]
    rows += [Witness("assumption", a.name, a.config, a.protects) for a in N.ASSUMPTIONS.values()]
    return rows


def witness_config(w: Witness) -> M.Config:
    from spec import configs
    if w.kind == "defect":
        return configs.get(w.config_name, defects=[w.name])
    return configs.get(w.config_name, assumptions_off=[w.name])


def defect_table(engines=("python", "tlc"), out_dir: Path | None = None) -> list[Witness]:
    """Run every witness on every engine (liveness on: some defects only break liveness)."""
    rows = witnesses()
    for w in rows:
        cfg = witness_config(w)
        for engine in engines:
            run = run_python if engine == "python" else run_tlc
            w.outcomes[engine] = run(cfg, w.config_name, liveness=True, out_dir=out_dir)
    return rows

"""Fake gate results shaped as a real run's: every stage, with the sub-checks the real stages carry
(2 configurations per engine, 6 traces, 10 kill-matrix defects and the correct implementation's check)."""

from __future__ import annotations

from argparse import Namespace

from spec import configs
from spec import names as N

from harness.reports import gate
from harness.reports.results import FAIL, PASS, SKIP, Check, StageResult
from serverkit import BUNDLED

TRACES = ["cross-session-recovery-collision.json", "memory-before-publish.json", "silent-quarantine-noop.json",
          "step-failed-duplicate-interrupt.json", "step-started-window.json", "unsupervised-cancel-heartbeat.json"]


def results(*, failing_trace: str | None = None, seconds: float = 10.0) -> list[StageResult]:
    traces = [Check(f"replay {t}", PASS, "", 0.5) for t in TRACES]
    status = PASS
    if failing_trace:
        k = TRACES.index(failing_trace)
        traces[k] = Check(f"replay {failing_trace}", FAIL, "step 5 PublishStepStarted(n1): MemoryFollowsDurable "
                          "violated", 0.5, "InvariantViolation", f"traces/{failing_trace}", 77)
        status = FAIL
    kills = [Check(f"kill {d}", PASS, "detected by x.json") for d in N.DEFECTS]
    kills.append(Check("correct implementation: every trace passes", PASS))
    return [
        StageResult("parse", PASS, "SANY parsed SessionExecution.tla", seconds),
        StageResult("twin = TLC", PASS, "ci: 1 states", seconds),
        StageResult("TLC", PASS, "ok", seconds,
                    [Check(f"TLC {c}", PASS, "", seconds / 2) for c in configs.GATE_CONFIGS + configs.FEATURE_CONFIGS]),
        StageResult("explorer", PASS, "ok", seconds,
                    [Check(f"explorer {c}", PASS, "", seconds / 2) for c in configs.GATE_CONFIGS + configs.FEATURE_CONFIGS]),
        StageResult("traces", status, "6 traces", seconds, traces),
        StageResult("lockstep", PASS, "ok", seconds, [Check(f"lockstep {c}", PASS) for c in configs.GATE_CONFIGS]),
        StageResult("kill matrix", PASS, "all detected", seconds, kills),
        StageResult("Apalache", SKIP, "apalache-mc not found", 0.0),
    ]


def run_gate(monkeypatch, tmp_path, stage_results, **extra) -> int:
    monkeypatch.setattr(gate, "STAGES", [gate.Stage(r.name, lambda g, r=r: r) for r in stage_results])
    args = Namespace(out=str(tmp_path / "found"), json=str(tmp_path / "g.json"), junit=str(tmp_path / "g.xml"),
                     strict=False, apalache=None, **extra)
    return gate.main_gate(args, BUNDLED)

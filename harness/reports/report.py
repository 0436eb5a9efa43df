"""The gate's JSON report (`claimcheck gate --json PATH`), as pydantic models.

The models are the report's definition: `write_json` builds the report through them, and
`json_schema()` is the JSON Schema committed as docs/report.schema.json (regenerate it with
`python -m harness.reports.report > docs/report.schema.json`; a test fails when the two differ).
`schema_version` changes whenever a field is removed or changes meaning; new optional fields keep it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from harness.reports.results import TARGET_SECONDS, StageResult

SCHEMA_VERSION = 1
Status = Literal["pass", "fail", "skip"]


def tool_version() -> str:
    """claimcheck's version from its package metadata ("unknown" when run from a tree not installed)."""
    try:
        return metadata.version("claimcheck")
    except metadata.PackageNotFoundError:
        return "unknown"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckReport(_Strict):
    """One sub-check: a configuration on an engine, a trace, a kill-matrix defect, ..."""
    name: str = Field(description="e.g. `TLC ci`, `replay step-started-window.json`, `kill renew-after-expiry`")
    status: Status
    detail: str = Field(description="what was found; on a failure, why")
    seconds: float = Field(ge=0)
    kind: str = Field(description="on a failure, what failed (InvariantViolation, ReplayFailure, UndetectedDefect, "
                                  "...); empty otherwise")
    file: str | None = Field(description="where a failure points: a trace file or the TLA+ spec")
    line: int | None = Field(ge=1, description="the line in `file`: a trace step, or an invariant's definition")
    reused: bool = Field(default=False, description="taken from an earlier gate run with the same inputs (the "
                                                    "sha256 of the spec's modules, the configuration, TLC's pin, "
                                                    "Java and the options) instead of run now; a stage: some of it")


class StageReport(CheckReport):
    """One gate stage, in the order they ran; `checks` are its sub-checks (empty for a single check)."""
    name: str = Field(description="parse, explorer, traces, lockstep, conformance, kill matrix, twin = TLC, TLC, Apalache")
    checks: list[CheckReport]


class GateReport(_Strict):
    """The report of one `claimcheck gate` run."""
    model_config = ConfigDict(extra="forbid", title="claimcheck gate report",
                              json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema"})
    schema_version: Literal[1] = Field(description="this report format's version")
    tool_version: str = Field(description="claimcheck's version (package metadata)")
    timestamp: AwareDatetime = Field(description="when the report was written, UTC, ISO 8601")
    ok: bool = Field(description="the gate's verdict: every stage that ran passed (and, with strict, no refused skip)")
    strict: bool
    allowed_skips: list[str] = Field(description="the stages --allow-skip named (lower case)")
    total_seconds: float = Field(ge=0)
    target_seconds: float = Field(description="the time budget the gate aims for (2 cores)")
    target_met: bool
    stages: list[StageReport]


def build(results: list[StageResult], *, ok: bool, strict: bool, allowed_skips, now: datetime | None = None) -> GateReport:
    total = sum(r.seconds for r in results)
    return GateReport(schema_version=SCHEMA_VERSION, tool_version=tool_version(),
                      timestamp=(now or datetime.now(timezone.utc)).replace(microsecond=0),
                      ok=ok, strict=strict, allowed_skips=sorted(allowed_skips), total_seconds=round(total, 3),
                      target_seconds=TARGET_SECONDS, target_met=total <= TARGET_SECONDS,
                      stages=[StageReport.model_validate(asdict(r)) for r in results])


def write_json(report: GateReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.model_dump_json(indent=2) + "\n")


def json_schema() -> dict:
    return GateReport.model_json_schema()


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2) + "\n"


if __name__ == "__main__":
    sys.stdout.write(schema_text())

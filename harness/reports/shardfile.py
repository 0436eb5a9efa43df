"""A sharded run's result file: what `conform`, `replay` and `check --profile` write with `--json PATH`, and
`claimcheck merge` reads (harness/reports/merge.py).

Why a file of its own, not the gate's report: a shard holds part of a run, so besides its checks it carries
the run's whole plan (harness/shard.py: every unit and the shard that takes it), which shard it is, and per
check what it covered in the plan's measure (edges, traces, configurations) and the counts that add up over
shards (states, edges, probes, actions taken, boundaries passed). An unsharded run writes the same file as
shard 1/1, so a merge of it is the run's own report. Format (version 1):

    {"format": "claimcheck-shard", "version": 1, "tool_version": "...", "command": "conform",
     "shard": "2/3", "plan": {"run", "measure", "units", "weights", "n", "shard_of"},
     "results": [{"name", "units", "status", "detail", "seconds", "kind", "file", "line",
                  "covered", "counts": {...}, "totals": {...}}]}
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness import shard as S
from harness.reports.results import PASS
from harness.traces.inputfile import InputError

FORMAT = "claimcheck-shard"
VERSION = 1


@dataclass
class Result:
    """One check's share in one shard."""
    name: str  # `conform ci`, `replay x.json`, `TLC sessions`
    units: list[str]  # the plan's units it covers
    status: str = PASS
    detail: str = ""
    seconds: float = 0.0
    covered: int = 0  # in the plan's measure
    counts: dict = field(default_factory=dict)  # adds up over shards: numbers, and {name: number} maps
    totals: dict = field(default_factory=dict)  # the check's whole (every shard says the same)
    kind: str = ""
    file: str | None = None
    line: int | None = None


@dataclass
class ShardFile:
    path: str
    command: str
    shard: S.Shard
    plan: S.Plan
    results: list[Result]
    tool_version: str = ""


def write(path: Path, command: str, shard: S.Shard, plan: S.Plan, results: list[Result]) -> None:
    from harness.reports.report import tool_version
    doc = {"format": FORMAT, "version": VERSION, "tool_version": tool_version(), "command": command,
           "shard": str(shard), "plan": plan.to_json(), "results": [asdict(r) for r in results]}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")


def read(path: str | Path) -> ShardFile:
    """A shard file, or InputError naming the file and what is wrong (exit 2, one line)."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"{path}: not a claimcheck shard file (no \"format\": \"{FORMAT}\"; written by conform, "
                         "replay or check --profile with --json)")
    if doc.get("version") != VERSION:
        raise InputError(f"{path}: shard file version {doc.get('version')!r}, this claimcheck reads {VERSION}")
    try:
        plan = S.from_json(doc["plan"])
        shard = S.parse(str(doc["shard"]))
        results = [Result(**r) for r in doc["results"]]
        if shard.n != plan.n or len(plan.units) != len(plan.weights) or len(plan.units) != len(plan.shard_of):
            raise ValueError("its shard and plan disagree")
        return ShardFile(str(path), str(doc["command"]), shard, plan, results, str(doc.get("tool_version", "")))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: a malformed shard file: {exc}") from None

"""`claimcheck merge SHARD.json ...`: the shards of one or more runs combined into one report, one JUnit
file and one coverage figure per run, which reaches 100% only over all of its shards.

Why: a CI matrix runs a command as N jobs (`--shard K/N`, harness/shard.py), each leaving a shard file
(harness/reports/shardfile.py); the merge job must say what the run as a whole says. Files are grouped by
run (the command and the options that chose its units); within a run the shards must share one plan (or
they were not cut from the same run: bad input), no shard may come twice (bad input), and every shard
1..N must be there: a missing one is a failure, named with the units it held. A check split over shards
(a configuration's walk, in parts) adds its shards' counts and passes only when every one of its units
was covered and every part passed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from harness.reports.results import FAIL, PASS, SKIP, Check, StageResult
from harness.reports.shardfile import Result, ShardFile
from harness.traces.inputfile import InputError


@dataclass
class Merged:
    """One run, merged."""
    run: str
    command: str
    measure: str
    shards: int
    found: list[int]
    missing: list[int]
    covered: int
    total: int
    stage: StageResult
    checks: list[Result] = field(default_factory=list)  # the merged checks, in plan order

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.total if self.total else 100.0

    @property
    def ok(self) -> bool:
        return not self.missing and self.covered == self.total and self.stage.status == PASS

    def coverage_line(self) -> str:
        return (f"{self.covered:,} of {self.total:,} {self.measure} ({_pct(self.covered, self.total)}), "
                f"{len(self.found)} of {self.shards} shards")


def _pct(covered: int, total: int) -> str:
    """100.0% only when all is covered: a figure just short of it never rounds up to 100.0%."""
    if total == 0 or covered == total:
        return "100.0%"
    return f"{min(100.0 * covered / total, 99.9):.1f}%"


def merge(files: list[ShardFile]) -> list[Merged]:
    """Every run among `files`, merged; InputError when shards of a run disagree on its plan or repeat."""
    runs: dict[str, list[ShardFile]] = {}
    for f in files:
        runs.setdefault(f.plan.run, []).append(f)
    return [_merge_run(group) for group in runs.values()]


def _merge_run(group: list[ShardFile]) -> Merged:
    plan = group[0].plan
    seen: dict[int, str] = {}
    for f in group:
        if f.plan != plan:
            raise InputError(f"{f.path}: its plan of `{plan.run}` differs from {group[0].path}'s (another version of "
                             "the spec, the code or the options): shards of one run only")
        if f.shard.k in seen:
            raise InputError(f"{f.path}: shard {f.shard} of `{plan.run}` given twice (also {seen[f.shard.k]})")
        seen[f.shard.k] = f.path
    missing = [k for k in range(1, plan.n + 1) if k not in seen]
    merged = _checks([r for f in sorted(group, key=lambda f: f.shard.k) for r in f.results], plan)
    checks = [Check(r.name, r.status, r.detail, r.seconds, kind=r.kind, file=r.file, line=r.line) for r in merged]
    for k in missing:
        units = [u for u, s in zip(plan.units, plan.shard_of) if s == k]
        weight = sum(w for w, s in zip(plan.weights, plan.shard_of) if s == k)
        checks.append(Check(f"shard {k}/{plan.n}", FAIL, f"missing: its {len(units)} units ({weight:,} {plan.measure}) "
                            f"were not run or not merged: {', '.join(units[:8])}" + (" ..." if len(units) > 8 else ""),
                            kind="ShardMissing"))
    covered, total = sum(r.covered for r in merged), sum(plan.weights)
    status = FAIL if missing or covered != total or any(c.status == FAIL for c in checks) else (
        SKIP if checks and all(c.status == SKIP for c in checks) else PASS)
    detail = (f"{covered:,} of {total:,} {plan.measure} ({_pct(covered, total)}) over {len(seen)} of {plan.n} shards"
              + (f"; missing shard{'s' if len(missing) > 1 else ''} {', '.join(f'{k}/{plan.n}' for k in missing)}"
                 if missing else ""))
    stage = StageResult(plan.run, status, detail, sum(c.seconds for c in checks), checks=checks)
    return Merged(plan.run, group[0].command, plan.measure, plan.n, sorted(seen), missing, covered, total, stage, merged)


def _checks(results: list[Result], plan) -> list[Result]:
    """The shards' results merged by check name, in the plan's order of their first unit."""
    order = {u: i for i, u in enumerate(plan.units)}
    by_name: dict[str, list[Result]] = {}
    for r in results:
        by_name.setdefault(r.name, []).append(r)
    out = [_one(name, parts, plan) for name, parts in by_name.items()]
    return sorted(out, key=lambda r: min((order.get(u, len(order)) for u in r.units), default=len(order)))


def _one(name: str, parts: list[Result], plan) -> Result:
    """One check from its parts: counts added, whole only when every unit it spans in the plan was covered."""
    units = [u for p in parts for u in p.units]
    counts: dict = {}
    for p in parts:
        for key, value in p.counts.items():
            if isinstance(value, dict):
                counts[key] = dict(Counter(counts.get(key, {})) + Counter(value))
            else:
                counts[key] = counts.get(key, 0) + value
    totals = parts[0].totals
    r = Result(name, units, PASS, "", sum(p.seconds for p in parts), sum(p.covered for p in parts), counts, totals)
    failed = [p for p in parts if p.status == FAIL]
    whole = not totals or all(counts.get(k) == v for k, v in totals.items())
    if failed:
        r.status, r.kind, r.file, r.line = FAIL, failed[0].kind, failed[0].file, failed[0].line
        r.detail = "; ".join(p.detail for p in failed)
    elif all(p.status == SKIP for p in parts):
        r.status, r.detail = SKIP, parts[0].detail
    elif not whole:
        r.status, r.kind = FAIL, "ShardMissing"
        r.detail = describe(counts, totals) + ": not whole, a shard holding its other parts is missing"
    else:
        r.detail = describe(counts, totals) if len(parts) > 1 or totals else parts[0].detail
    return r


def describe(counts: dict, totals: dict) -> str:
    """`states 1,691 of 1,691, edges 3,374 of 3,374, probes 5,012`: each total, then the other numbers."""
    parts = [f"{k} {counts.get(k, 0):,} of {v:,}" for k, v in totals.items()]
    parts += [f"{k} {v:,}" for k, v in counts.items() if k not in totals and isinstance(v, int)]
    return ", ".join(parts)


# ---------------------------------------------------------------- the merged report

def report(runs: list[Merged]) -> dict:
    """The merged JSON report: per run its shards, coverage and checks (each check as the gate's report has
    it: docs/report.schema.json's StageReport), and the counts each check added up."""
    from dataclasses import asdict
    from datetime import datetime, timezone

    from harness.reports.report import StageReport, tool_version
    return {"kind": "claimcheck merge", "schema_version": 1, "tool_version": tool_version(),
            "timestamp": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
            "ok": bool(runs) and all(m.ok for m in runs),
            "runs": [{"run": m.run, "command": m.command, "measure": m.measure, "shards": m.shards,
                      "found": m.found, "missing": m.missing, "covered": m.covered, "total": m.total,
                      "coverage_percent": round(m.percent, 3), "ok": m.ok,
                      "stage": StageReport.model_validate(asdict(m.stage)).model_dump(mode="json"),
                      "counts": {r.name: r.counts for r in m.checks}} for m in runs]}


def lines(runs: list[Merged]) -> list[str]:
    """What the merge prints: a line per run, its failing checks, and the verdict."""
    out = []
    for m in runs:
        passed = sum(c.status == PASS for c in m.stage.checks)
        failed = [c for c in m.stage.checks if c.status == FAIL]
        out.append(f"merge: {m.run}: {m.coverage_line()}; {passed} passed, {len(failed)} failed")
        out += [f"  FAILED {c.name}: {c.detail.splitlines()[0] if c.detail else c.kind}" for c in failed]
    ok = bool(runs) and all(m.ok for m in runs)
    out.append("merge: OK, 100% over all shards" if ok else "merge: FAILED")
    return out

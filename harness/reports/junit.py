"""The gate's JUnit XML report (`claimcheck gate --junit PATH`), valid against pytest's junit-10.xsd.

`<testsuites>` holds one `<testsuite>` per stage, and each suite one `<testcase>` per check (TLC ci,
TLC sessions, replay <trace>, kill <defect>, ...); a stage without sub-checks is one testcase of its
own, and so is a stage that failed (or was skipped) while none of its checks says so. What the schema
asks, and this module keeps to:

- `testsuite` requires `name`, `tests`, `failures`, `errors`; `skipped`, `time`, `timestamp` and
  `hostname` are optional, and no other attribute is allowed; `testsuites` takes only `name`, `time`,
  `tests`, `failures`, `errors`;
- `time` is SUREFIRE_TIME: digits with at most three decimals (no exponent, no sign);
- `testcase` requires `name`, takes `classname` and `time`, and holds `failure`, `skipped`,
  `system-out` (each with optional `type` and `message`). The schema has no `<error>` element, so a
  crashed stage is a `<failure>` whose `type` is the exception's class, and `errors` counts 0.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from harness.reports.results import FAIL, SKIP, StageResult

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # not allowed in XML 1.0, even escaped


@dataclass
class _Case:
    name: str
    status: str
    detail: str
    seconds: float
    kind: str
    where: str  # file:line, when known


def _text(s: str) -> str:
    return _NOT_XML.sub("", s)


def _time(seconds: float) -> str:
    return f"{max(seconds, 0.0):.3f}"


def classname(stage: str) -> str:
    return "claimcheck." + (re.sub(r"[^a-z0-9]+", "_", stage.lower()).strip("_") or "stage")


def _where(c) -> str:
    return f"{c.file}:{c.line}" if c.file and c.line else (c.file or "")


def cases(r: StageResult) -> list[_Case]:
    """The stage's checks, plus the stage itself when no check carries its failure or its skip."""
    out = [_Case(c.name, c.status, c.detail, c.seconds, c.kind, _where(c)) for c in r.checks]
    covered = not r.checks or any(c.status == r.status for c in r.checks) or r.status not in (FAIL, SKIP)
    if not r.checks or not covered:
        out.append(_Case(r.name, r.status, r.detail, r.seconds if not r.checks else 0.0, r.kind, _where(r)))
    return out


def _failure_type(case: _Case) -> str:
    return case.kind or "CheckFailed"


def suite(r: StageResult, timestamp: str, hostname: str) -> ET.Element:
    cs = cases(r)
    el = ET.Element("testsuite", name=r.name, tests=str(len(cs)),
                    failures=str(sum(c.status == FAIL for c in cs)), errors="0",
                    skipped=str(sum(c.status == SKIP for c in cs)), time=_time(r.seconds),
                    timestamp=timestamp, hostname=hostname)
    for c in cs:
        case = ET.SubElement(el, "testcase", classname=classname(r.name), name=_text(c.name), time=_time(c.seconds))
        message = _text(c.detail.splitlines()[0] if c.detail else "")[:500]
        if c.status == FAIL:
            body = _text(c.detail) + (f"\nat {c.where}" if c.where else "")
            ET.SubElement(case, "failure", type=_failure_type(c), message=message).text = body
        elif c.status == SKIP:
            ET.SubElement(case, "skipped", type="skipped", message=message)
        if c.detail:
            ET.SubElement(case, "system-out").text = _text(c.detail)
    return el


def document(results: list[StageResult], now: datetime | None = None, name: str = "claimcheck gate") -> ET.Element:
    timestamp = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S")
    hostname = socket.gethostname() or "localhost"
    suites = [suite(r, timestamp, hostname) for r in results]
    root = ET.Element("testsuites", name=name,
                      tests=str(sum(int(s.get("tests")) for s in suites)),
                      failures=str(sum(int(s.get("failures")) for s in suites)), errors="0",
                      time=_time(sum(r.seconds for r in results)))
    root.extend(suites)
    return root


def write_junit(results: list[StageResult], path: Path, name: str = "claimcheck gate") -> None:
    """`name`: the document's (`claimcheck merge` for merged shards, harness/reports/merge.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tree = ET.ElementTree(document(results, name=name))
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)

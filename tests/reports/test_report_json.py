"""The JSON report: schema_version, tool_version, timestamp, and a JSON Schema committed in
docs/report.schema.json (generated from harness/reports/report.py's models) that real gate output meets."""

import json
import re
from datetime import datetime, timedelta, timezone
from importlib import metadata
from pathlib import Path

import reportkit
from harness.reports import gate, report
from spec import configs
from harness.reports.results import PASS, SKIP, StageResult
from spec import configs
from serverkit import BUNDLED

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "report.schema.json"
DATE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


def schema_problems(value, schema, root=None, where="$") -> list[str]:
    """The subset of JSON Schema (2020-12) that docs/report.schema.json uses, checked by hand: $ref,
    anyOf, type, enum, const, properties, required, additionalProperties, items, minimum, date-time."""
    root = root or schema
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in schema:
        options = [schema_problems(value, s, root, where) for s in schema["anyOf"]]
        return [] if any(not o for o in options) else [f"{where}: matches none of anyOf"] + min(options, key=len)
    out = []
    types = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict,
             "array": list, "null": type(None)}
    t = schema.get("type")
    if t and (not isinstance(value, types[t]) or (t in ("integer", "number") and isinstance(value, bool))):
        return [f"{where}: {value!r} is not {t}"]
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} not in {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "minimum" in schema and value < schema["minimum"]:
        out.append(f"{where}: {value} < {schema['minimum']}")
    if schema.get("format") == "date-time" and not DATE_TIME.fullmatch(value):
        out.append(f"{where}: {value!r} is not an RFC 3339 date-time")
    if t == "object":
        props = schema.get("properties", {})
        out += [f"{where}: {k!r} missing" for k in schema.get("required", []) if k not in value]
        if schema.get("additionalProperties") is False:
            out += [f"{where}: {k!r} not allowed" for k in value if k not in props]
        for k, v in value.items():
            if k in props:
                out += schema_problems(v, props[k], root, f"{where}.{k}")
    if t == "array" and "items" in schema:
        for k, v in enumerate(value):
            out += schema_problems(v, schema["items"], root, f"{where}[{k}]")
    return out


def test_the_committed_schema_is_the_models_schema():
    assert json.loads(SCHEMA.read_text()) == report.json_schema(), \
        "regenerate: python -m harness.reports.report > docs/report.schema.json"


def test_the_report_names_its_schema_tool_version_and_time(monkeypatch, tmp_path):
    reportkit.run_gate(monkeypatch, tmp_path, reportkit.results())
    data = json.loads((tmp_path / "g.json").read_text())
    assert data["schema_version"] == 1 and data["tool_version"] == metadata.version("claimcheck")
    stamp = datetime.fromisoformat(data["timestamp"].replace("Z", "+00:00"))
    assert stamp.utcoffset() == timedelta(0) and abs(datetime.now(timezone.utc) - stamp) < timedelta(minutes=5)
    assert data["target_seconds"] == 300 and data["target_met"] is True
    tlc = next(s for s in data["stages"] if s["name"] == "TLC")
    assert [c["name"] for c in tlc["checks"]] == [f"TLC {c}" for c in configs.GATE_CONFIGS + configs.FEATURE_CONFIGS]
    assert schema_problems(data, json.loads(SCHEMA.read_text())) == []


def test_real_gate_output_meets_the_schema(monkeypatch, tmp_path):
    """The real traces stage (every committed trace replayed) and a crashing stage, through `main_gate`."""
    def crash(g):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(gate, "STAGES", [gate.Stage("traces", gate.stage_traces), gate.Stage("x", crash)])
    from argparse import Namespace
    gate.main_gate(Namespace(out=str(tmp_path), json=str(tmp_path / "g.json"), junit=None, strict=True, apalache=None,
                             allow_skip=["apalache"]), BUNDLED)
    text = (tmp_path / "g.json").read_text()
    data = json.loads(text)
    assert schema_problems(data, json.loads(SCHEMA.read_text())) == []
    assert report.GateReport.model_validate_json(text).stages[0].checks[0].name.startswith("replay ")
    assert len(data["stages"][0]["checks"]) == len(list((ROOT / "traces").glob("*.json")))
    assert data["stages"][1]["kind"] == "RuntimeError" and data["ok"] is False


def test_the_hand_check_catches_what_the_schema_forbids():
    schema = json.loads(SCHEMA.read_text())
    good = report.build([StageResult("a", PASS)], ok=True, strict=False, allowed_skips=()).model_dump(mode="json")
    assert schema_problems(good, schema) == []
    bad = dict(good, colour="red", stages=[dict(good["stages"][0], status="passed")])
    del bad["schema_version"]
    found = "\n".join(schema_problems(bad, schema))
    assert "'schema_version' missing" in found and "'colour' not allowed" in found and "'passed' not in" in found


def test_a_missed_target_is_in_the_report(tmp_path):
    r = report.build([StageResult("TLC", PASS, seconds=277.0), StageResult("lockstep", SKIP, seconds=40.0)],
                     ok=True, strict=False, allowed_skips=())
    assert r.target_met is False and r.total_seconds == 317.0

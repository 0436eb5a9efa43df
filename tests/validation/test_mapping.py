"""`validate --mapping FILE`: a log in a server's own vocabulary validates without a converter program;
a bad mapping is bad input (exit 2, one line)."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from test_validate import ROOT, _validate, _write

OURS = {"fields": {"who": "actor", "op": "action", "args": "params", "clock": "now", "rows": "writes",
                   "events": "log", "session": "sess", "owner_node": "n"},
        "actions": {"lease.acquire": "Acquire", "lease.renew": "Renew", "step.started": "PublishStepStarted",
                    "step.ended": "PublishStepEnded", "claim.clear": "ClearClaim"},
        "kinds": {"step_started": "Started", "step_ended": "Ended"}}


def _theirs() -> list[str]:
    """The docs' example history, written in the server's own names (the inverse of OURS)."""
    block = (ROOT / "docs" / "history.md").read_text().split("```jsonl\n", 1)[1].split("```", 1)[0]
    back = {kind: {v: k for k, v in table.items()} for kind, table in OURS.items()}

    def rename(x):
        if isinstance(x, list):
            return [rename(v) for v in x]
        if not isinstance(x, dict):
            return x
        out = {}
        for k, v in x.items():
            name = back["fields"].get(k, k)
            v = rename(v)
            if k == "action":
                v = back["actions"].get(v, v)
            if k == "kind":
                v = back["kinds"].get(v, v)
            out[name] = v
        return out
    return [json.dumps(rename(json.loads(x))) for x in block.splitlines()]


def test_a_log_in_the_servers_names_validates_with_its_mapping(tmp_path):
    theirs = _theirs()
    assert '"op": "lease.acquire"' in theirs[0] and '"session": "s1"' in theirs[0]
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps(OURS))
    code, out = _validate(_write(tmp_path, theirs), "--config", "ci", "--mapping", str(mapping))
    assert code == 0, out


def test_without_its_mapping_the_log_is_bad_input(tmp_path, capsys):
    assert main(["validate", str(_write(tmp_path, _theirs())), "--config", "ci"]) == 2
    assert "line 1" in capsys.readouterr().err


def test_a_mapping_that_renames_wrongly_fails_naming_the_field(tmp_path):
    wrong = json.loads(json.dumps(OURS))
    wrong["kinds"]["step_ended"] = "Failed"
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps(wrong))
    code, out = _validate(_write(tmp_path, _theirs()), "--config", "ci", "--mapping", str(mapping))
    assert code == 1 and "writes.log[0].kind" in "\n".join(out), out


@pytest.mark.parametrize("mapping, message", [
    ("{not json", "not JSON"),
    ('{"fields": {"ts": "time"}}', "fields.ts: 'time' is not a field of the history format"),
    ('{"actions": {"go": "Fly"}}', "actions.go: 'Fly' is not an action of the history format"),
    ('{"colours": {}}', "expected an object with 'fields', 'actions' and 'kinds' only"),
    ('{"kinds": {"a": 1}}', "kinds: expected an object of names to names"),
])
def test_a_bad_mapping_exits_2_with_one_line(tmp_path, capsys, mapping, message):
    path = tmp_path / "mapping.json"
    path.write_text(mapping)
    code = main(["validate", str(_write(tmp_path, _theirs())), "--config", "ci", "--mapping", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err

"""The trace JSON Schema (traces/schema/trace.schema.json) is generated from the registry: `action` is an
enum of spec/names.py's actions and each action's `params` are typed by its parameter letters. The
committed file is the generated one, and every committed trace (and one the engines write) validates."""

import copy
import json

import jsonschema
import pytest

from harness.conformance import replay as R
from harness.traces import trace as T
from harness.traces.paths import Step
from spec import configs
from spec import model as M
from spec import names as N

SCHEMA = json.loads(T.SCHEMA_FILE.read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
RACE = R.TRACES / "step-failed-duplicate-interrupt.json"


def test_committed_schema_is_the_generated_one_and_a_valid_schema():
    assert T.SCHEMA_FILE.read_text() == T.schema_text()
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_action_is_an_enum_of_the_registry_and_params_are_typed_per_action():
    step = SCHEMA["$defs"]["TraceStep"]
    assert step["properties"]["action"]["enum"] == list(N.ACTIONS)
    assert [b["properties"]["action"]["const"] for b in step["oneOf"]] == list(N.ACTIONS)
    kinds = {"n": "string", "r": "string", "s": "string", "e": "integer", "w": "integer", "k": "integer", "d": "string", "f": "string"}
    for name, action in N.ACTIONS.items():
        d = SCHEMA["$defs"][f"{name}Params"]
        assert d["required"] == list(action.params) and d["additionalProperties"] is False
        for letter in action.params:
            got = d["properties"][letter]
            assert got == {"$ref": "#/$defs/Input"} if letter == "i" else got["type"] == kinds[letter]


@pytest.mark.parametrize("path", R.committed_traces(), ids=lambda p: p.stem)
def test_every_committed_trace_validates(path):
    VALIDATOR.validate(json.loads(path.read_text()))


def test_a_trace_the_engines_write_validates():
    cfg = configs.get("ci")
    st = M.init(cfg)
    steps = [Step(None, (), st)]
    for _ in range(12):  # the first enabled instance each time: every action family's shape on the way
        nxt = next(M.successors(cfg, st), None)
        if nxt is None:  # a terminal state (every input served)
            break
        a, p, st = nxt
        steps.append(Step(a, p, st))
    assert len(steps) > 6
    tr = T.from_steps(cfg, steps, title="walk", source="explore", base="ci")
    VALIDATOR.validate(json.loads(tr.model_dump_json(exclude_none=True)))


@pytest.mark.parametrize("mutate", [
    lambda s: s[0].update(action="Teleport"),
    lambda s: s[0].update(action="acquire"),
    lambda s: s[1].update(params={}),  # Renew without its node
    lambda s: s[1]["params"].update(s="s1"),  # a parameter Renew does not take
    lambda s: s[1].update(params={"n": 1}),  # a node is a name
    lambda s: s[0]["params"]["i"].update(kind="steer"),
    lambda s: s[0]["params"]["i"].update(src="1"),
    lambda s: s[0]["params"]["i"].pop("state"),
    lambda s: s[0].update(params={"n": "n1", "s": "s1"}),  # CancelRequest's params under Acquire
    lambda s: s.append({"action": "CorruptRecoveryRow", "params": {"s": "s1", "e": "1"}}),
    lambda s: s.append({"action": "Tick", "params": {"n": "n1"}}),
], ids=["unknown", "case", "missing", "extra", "node-int", "input-kind", "input-src", "input-field",
        "other-action", "exec-string", "tick-params"])
def test_the_schema_refuses_what_the_loader_refuses(tmp_path, mutate):
    raw = json.loads(RACE.read_text())
    mutate(raw["steps"])
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(raw)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw))
    with pytest.raises(T.TraceError):
        T.load(p)


def test_an_action_without_parameters_may_leave_params_out():
    raw = json.loads(RACE.read_text())
    raw["steps"].append({"action": "Tick"})
    VALIDATOR.validate(raw)

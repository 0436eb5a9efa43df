"""ITF (ADR-015) export and import: the shape Apalache writes, a round trip through replay, and a hand-written
Apalache-style file whose variant tags and record fields are not Python identifiers."""

import json

import itf_py
import pytest

from harness.traces import itf
from harness.conformance import replay as R
from harness.traces import trace as T
from harness.cli import main
from serverkit import BUNDLED

RACES = [p for p in R.committed_traces()]


def big(n):
    return {"#bigint": str(n)}


def runner(pc="idle", sess="", exec_=0):
    return {"pc": pc, "sess": sess, "exec": big(exec_), "mem": big(0), "active": False, "intr": False,
            "ordinal": big(0 if pc == "idle" else 1)}


def hand_written():
    """Init and one Acquire on configuration `ci`, written by hand as Apalache would (plus odd extras)."""
    idle_fin = {"pc": "idle", "sess": "", "exec": big(0), "owner": ""}

    def state(k, claim, next_exec, prompt1, run1, extra):
        return {"#meta": {"index": k}, "claim": {"#map": [["s1", claim]]}, "nextExec": big(next_exec), "log": [],
                "recovery": {"#set": []},
                "inputs": {"#set": [{"sess": "s1", "kind": "prompt", "src": big(1), "state": prompt1}]},
                "run": {"#map": [["n1", run1], ["n2", runner()]]},
                "fin": {"#map": [["n1", idle_fin], ["n2", idle_fin]]},
                "rec": {"#map": [["r1", {"pc": "idle", "sess": "", "exec": big(0)}]]},
                "cancelled": {"#set": []}, "faults": {"#set": []}, "effects": {"#set": []}, **extra}

    no_claim = {"exec": big(0), "owner": "", "ttl": big(0), "phase": "none", "asst": big(0), "quar": False}
    claim = {"exec": big(1), "owner": "n1", "ttl": big(1), "phase": "running", "asst": big(0), "quar": False}
    odd = {"action_taken": {"tag": "Acquire/ordinary-selection", "value": {"node-id": "n1", "class": big(1)}},
           "nondet_picks": {"n": {"tag": "Some", "value": "n1"}, "i.src": {"tag": "None", "value": {"#tup": []}},
                            "lease ticks": {"#map": [[big(1), {"#set": [big(1)]}]]}}}
    init_extra = {"action_taken": {"tag": "Init", "value": {"#tup": []}}, "nondet_picks": {}}
    return {"#meta": {"format": "ITF", "source": "MC_ci.tla", "description": "Created by Apalache",
                      "varTypes": {"claim": "(Str -> {...})"}},
            "vars": ["claim", "nextExec", "log", "recovery", "inputs", "run", "fin", "rec", "cancelled", "faults",
                     "effects", "action_taken", "nondet_picks"],
            "states": [state(0, no_claim, 1, "pending", runner(), init_extra),
                       state(1, claim, 2, "ordinary", runner("acquired", "s1", 1), odd)]}


def test_itf_py_itself_rejects_the_hand_written_file():
    with pytest.raises(ValueError):
        itf_py.trace_from_json(hand_written())


def test_hand_written_apalache_file_imports_and_replays():
    tr = itf.from_itf(hand_written(), config="ci")
    assert [s.action for s in tr.steps] == ["Acquire"]
    assert tr.steps[0].params == {"n": "n1", "i": {"sess": "s1", "kind": "prompt", "src": 1, "state": "pending"}}
    assert tr.meta.source == "apalache" and tr.config.base == "ci"
    assert R.replay(tr, name="itf", server=BUNDLED).ok


def test_import_without_configuration_is_refused():
    with pytest.raises(T.TraceError, match="#meta: no claimcheck configuration"):
        itf.from_itf(hand_written())


def test_import_refuses_a_state_no_action_reaches():
    doc = hand_written()
    doc["states"][1]["nextExec"] = big(3)
    with pytest.raises(T.TraceError, match=r"states\[1\]: no twin action leads here"):
        itf.from_itf(doc, config="ci")


def test_import_refuses_missing_variables_and_json_numbers():
    doc = hand_written()
    doc["vars"].remove("faults")
    with pytest.raises(T.TraceError, match="vars: missing"):
        itf.from_itf(doc, config="ci")
    doc = hand_written()
    doc["states"][0]["nextExec"] = 1.0
    with pytest.raises(T.TraceError, match="JSON number"):
        itf.from_itf(doc, config="ci")


def test_export_has_the_adr_015_shape():
    doc = itf.export(T.load(R.TRACES / "silent-quarantine-noop.json"))
    assert doc["#meta"]["format"] == "ITF" and doc["vars"] == list(doc["states"][0].keys())[1:]
    last = doc["states"][-1]
    assert last["#meta"] == {"index": len(doc["states"]) - 1, "action": "RecoveryConvert"}
    assert last["nextExec"] == big(3)
    assert set(last["claim"]) == {"#map"} and last["claim"]["#map"][0][0] == "s1"
    assert set(last["inputs"]) == {"#set"} and set(last["faults"]) == {"#set"}
    assert isinstance(last["log"], list)
    assert "loop" not in doc


@pytest.mark.parametrize("path", RACES, ids=lambda p: p.stem)
def test_round_trip_keeps_every_step_and_still_replays(tmp_path, path):
    out = itf.export_file(path, tmp_path / "x.itf.json")
    assert out.read_text() == json.dumps(itf.export(T.load(path)), indent=1) + "\n"  # reproducible
    back = T.load(itf.import_file(out, tmp_path / "back.json"))
    orig = T.load(path)
    assert [(s.action, s.params) for s in back.steps] == [(s.action, s.params) for s in orig.steps]
    assert back.meta.defect == orig.meta.defect and back.config == orig.config
    assert R.replay(back, name="back", server=BUNDLED).ok


@pytest.mark.parametrize("path", RACES, ids=lambda p: p.stem)
def test_round_trip_is_lossless(tmp_path, path):
    """Boundaries, notes, expect, meta, config, mutant, loop and which steps recorded a state: all back."""
    orig = T.load(path)
    back = T.load(itf.import_file(itf.export_file(path, tmp_path / "x.itf.json"), tmp_path / "back.json"))
    assert back == orig
    assert (tmp_path / "back.json").read_text() == T.save(orig, tmp_path / "orig.json").read_text()


def test_a_round_tripped_race_still_shows_its_violation(tmp_path):
    name = "step-failed-duplicate-interrupt"
    src = R.TRACES / f"{name}.json"
    doc = itf.export(T.load(src))
    own = doc["#meta"]["claimcheck"]
    assert own["expect"] and any("boundary" in s for s in own["steps"]) and any("note" in s for s in own["steps"])
    back = T.save(itf.from_itf(json.loads(json.dumps(doc))), tmp_path / "back.json")
    before, after = R.replay_file(src, [name], server=BUNDLED), R.replay_file(back, [name], server=BUNDLED)
    assert "AtMostOneTerminal" in after.violated and after.violated == before.violated
    assert after.problems == before.problems and any(p.startswith("expect.") for p in after.problems)
    assert main(["replay", str(back), "--defect", name]) == 1


def test_a_refused_step_round_trips(tmp_path):
    raw = json.loads((R.TRACES / "memory-before-publish.json").read_text())
    raw["steps"].insert(1, {"action": "Acquire", "refused": True, "note": "n2 may not take s1's prompt twice",
                            "params": {"n": "n2", "i": raw["steps"][0]["params"]["i"]}})
    p = tmp_path / "refused.json"
    p.write_text(json.dumps(raw))
    orig = T.load(p)
    back = itf.from_itf(itf.export(orig))
    assert back == orig and back.steps[1].refused


def test_carried_steps_must_match_the_itf_states():
    doc = itf.export(T.load(R.TRACES / "memory-before-publish.json"))
    doc["#meta"]["claimcheck"]["steps"][1]["params"] = {"n": "n2"}
    with pytest.raises(T.TraceError, match=r"#meta\.claimcheck\.steps\[1\]: Renew does not lead from states\[1\]"):
        itf.from_itf(doc)
    doc = itf.export(T.load(R.TRACES / "memory-before-publish.json"))
    doc["#meta"]["claimcheck"]["steps"].pop()
    with pytest.raises(T.TraceError, match=r"#meta\.claimcheck\.steps: expected an array of"):
        itf.from_itf(doc)
    doc = itf.export(T.load(R.TRACES / "memory-before-publish.json"))
    doc["#meta"]["claimcheck"]["steps"][0]["boundary"] = "no.such"
    with pytest.raises(T.TraceError, match=r"#meta\.claimcheck\.steps\[0\]\.boundary"):
        itf.from_itf(doc)


def test_cli_itf_round_trip_and_bad_input(tmp_path, capsys):
    src = R.TRACES / "memory-before-publish.json"
    assert main(["itf", "export", str(src), "--out", str(tmp_path / "m.itf.json")]) == 0
    assert main(["itf", "import", str(tmp_path / "m.itf.json"), "--out", str(tmp_path / "m.json")]) == 0
    (tmp_path / "bad.itf.json").write_text('{"states": []}')
    assert main(["itf", "import", str(tmp_path / "bad.itf.json"), "--out", str(tmp_path / "b.json")]) == 2
    err = capsys.readouterr().err
    assert "states: expected a non-empty array" in err and "Traceback" not in err

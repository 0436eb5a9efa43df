"""Bad trace files: mutated traces and their bytes through the loader, the twin and `itf export`, and at
the command line through `replay`, `explain` and `itf export`; traces that name what does not exist, and a
step the twin cannot take (badkit.py says what every outcome must be)."""

from __future__ import annotations

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from badkit import (TRACE_BYTES, TRACE_DOCS, assert_one_line, budget, check_trace_file, edit_trace, mutated,
                    mutated_bytes, run_cli, write_file)
from harness.cli import main

@budget(1000)
@given(doc=mutated(TRACE_DOCS))
def test_trace_loader_on_mutated_traces(work, doc):
    check_trace_file(write_file(work, "trace.json", doc))


@budget(400)
@given(data=mutated_bytes(TRACE_BYTES))
def test_trace_loader_on_mutated_bytes(work, data):
    check_trace_file(write_file(work, "trace-bytes.json", data))


@budget(150)
@given(doc=mutated(TRACE_DOCS))
def test_cli_replay_on_mutated_traces(work, capsys, doc):
    p = write_file(work, "cli-trace.json", doc)
    code, out, err = run_cli(capsys, ["replay", p])
    event(f"replay exit {code}")
    if code == 2:
        assert_one_line(err, "replay", p)
    elif code == 1:  # a divergence, a step the twin cannot take, a violation: a replay result
        assert "verdict: FAIL" in out


@budget(100)
@given(data=mutated_bytes(TRACE_BYTES), fmt=st.sampled_from(["text", "mermaid"]))
def test_cli_explain_and_export_on_mutated_bytes(work, capsys, data, fmt):
    p = write_file(work, "cli-explain.json", data)
    code, _, err = run_cli(capsys, ["explain", p, "--format", fmt])
    if code == 2:
        assert_one_line(err, "explain", p)
    code, _, err = run_cli(capsys, ["itf", "export", p, "--out", work / "cli-export.itf.json"])
    if code == 2:
        assert_one_line(err, "itf", p)


@pytest.mark.parametrize("mutate, field", [
    (lambda raw: raw["meta"].update(invariants=["Nope"]), "meta.invariants[0]: unknown invariant 'Nope'"),
    (lambda raw: raw["meta"].update(defect="nope"), "meta.defect: unknown defect 'nope'"),
    (lambda raw: raw["config"].update(base="no such"), "config.base: 'no such' is not a name"),
    (lambda raw: raw["config"].update(faults=["flood"]), "config.faults[0]: unknown fault 'flood'"),
    (lambda raw: raw["config"].update(assumptions_off=["Gravity"]), "config.assumptions_off[0]: unknown assumption"),
    (lambda raw: raw["config"].update(prompts=10 ** 9), "config.prompts: Input should be less than or equal to 1000"),
    (lambda raw: raw["config"].update(sessions=["s1", "s1"]), "config.sessions: 's1' is listed twice"),
    (lambda raw: raw["config"].update(recoverers=["n1"]), "config.recoverers: 'n1' is also a node"),
    (lambda raw: raw["steps"][0].update(action="Renw"), "steps[0].action: unknown action 'Renw' (expected one of"),
    (lambda raw: raw["steps"][1].update(boundary="renew.comitted"), "steps[1].boundary: unknown boundary"),
    (lambda raw: raw["steps"][1].update(params={"n": "n9"}), "steps[1].params.n: 'n9' is not in the configuration"),
    (lambda raw: raw["steps"][0]["params"]["i"].update(sess="s2"), "steps[0].params.i.sess: 's2' is not a configured"),
    (lambda raw: raw["steps"][0]["params"]["i"].update(src="1"), "steps[0].params.i.src: expected an integer"),
    (lambda raw: raw["steps"][0]["params"]["i"].update(kind="steer"), "steps[0].params.i.kind: unknown input kind"),
    (lambda raw: raw["steps"][0].update(state={"claim": []}), "steps[0].state.claim: expected a claim record per Session"),
    (lambda raw: raw.update(loop=True), "loop: Input should be a valid integer (got a boolean)"),
    # the expect forms of issue 12 item 8
    (lambda raw: raw["expect"].update(non_vacuous=["AtMostOneStart"]), "expect.non_vacuous[0]"),
    (lambda raw: raw["expect"]["assistants"][0].update(outcome="Done"), "expect.assistants[0].outcome"),
    (lambda raw: raw["expect"]["assistants"][0].update(assistant=99),
     "expect.assistants[0].assistant: 99 is beyond the configuration's execution ids (1..2)"),
    (lambda raw: raw["expect"]["events"][0].update(writer="n9"),
     "expect.events[0].writer: 'n9' is not a configured node or recovery worker"),
    (lambda raw: raw["expect"]["events"][0].update(writer=7), "expect.events[0].writer"),
    (lambda raw: raw["expect"]["events"][0].update(count=0), "expect.events[0].writer: count 0 leaves no event"),
    (lambda raw: raw["expect"]["claims"][0].update(reason="malformed"),
     "expect.claims[0].reason: a quarantine reason needs quarantined: true"),
    (lambda raw: raw["expect"].update(inputs=[{"session": "s1", "kind": "cont", "src": 1, "present": False,
                                               "state": "pending"}]), "expect.inputs[0].state: an absent input"),
    (lambda raw: raw["expect"].update(inputs=[{"session": "s7", "kind": "prompt", "src": 1}]),
     "expect.inputs[0].session: 's7' is not a configured Session"),
    (lambda raw: raw["expect"].update(inputs=[{"session": "s1", "kind": "steer", "src": 1}]), "expect.inputs[0].kind"),
    (lambda raw: raw["expect"].update(continuation_ids=[{"session": "s1", "src": 0}]),
     "expect.continuation_ids[0].src"),
    (lambda raw: raw["expect"].update(continuation_ids=[{"session": "s9", "src": 1}]),
     "expect.continuation_ids[0].session: 's9' is not a configured Session"),
    # refused and instead
    (lambda raw: raw["steps"][1].update(instead="RunnerStop"), "steps[1].instead: only a refused step"),
    (lambda raw: raw["steps"][1].update(instead="Teleport"), "steps[1].instead"),
    (lambda raw: raw["steps"].insert(1, {"action": "Acquire", "params": raw["steps"][0]["params"], "refused": True,
                                         "instead": "Renew"}), "steps[1].instead: Acquire is not an actor's own step"),
    (lambda raw: raw["steps"].insert(1, {"action": "Renew", "params": {"n": "n1"}, "refused": True,
                                         "instead": "FinalizerSettle"}),
     "steps[1].instead: FinalizerSettle is not a step of the runner that Renew belongs to"),
    (lambda raw: raw["steps"].insert(1, {"action": "Dispatch", "params": {"n": "n1"}, "refused": True,
                                         "instead": "RunnerStop"}),
     "steps[1].instead: the twin enables no instance of RunnerStop for n1 here (it enables: Renew(n1))"),
])
def test_a_trace_naming_what_does_not_exist_is_exit_2_naming_the_field(tmp_path, capsys, mutate, field):
    p = edit_trace(tmp_path, mutate)
    assert main(["replay", str(p)]) == 2
    err = capsys.readouterr().err
    assert_one_line(err, "replay", p)
    assert field in err, err


def test_a_step_the_twin_cannot_take_is_bad_input_not_a_crash(tmp_path, capsys):
    p = edit_trace(tmp_path, lambda raw: raw["steps"].insert(1, {"action": "RecoveryConvert", "params": {"r": "r1"}}))
    assert main(["replay", str(p)]) == 2
    err = capsys.readouterr().err
    assert_one_line(err, "replay", p)
    assert ("steps[1]: RecoveryConvert(r1) is not enabled in the twin: recovery worker r1 has not reconciled "
            "(it is idle); enabled here: ") in err

"""Several Steps per execution in the twin (MaxSteps, issue 13 item 1): one assistant per Step, the claim
naming the latest, publisher memory the last one published, the Step.Ended listener gate, and the window
of a later Step where memory still names the earlier Step's completed assistant."""

from dataclasses import replace

import pytest

from harness.engines.explore import explore
from spec import configs
from spec import invariants as I
from spec import model as M

STEPS = configs.get("steps")
PROMPT = M.Input("s1", "prompt", 1, "pending")
STEP = ["Renew", "Dispatch", "PublishStepStarted", "StepStartedReturn", "PublishStepEnded"]


def walk(cfg, schedule, st=None):
    """Apply (action, params) pairs, each one the twin enables; return every state and the edges' checks."""
    st = st or M.init(cfg)
    states, broken = [st], []
    for name, params in schedule:
        nxt = M.apply(cfg, st, name, params)
        assert nxt is not None, f"{name}{params} is not enabled"
        broken += I.check_state(cfg, nxt) + I.check_edge(cfg, st, nxt)
        st = nxt
        states.append(st)
    return states, broken


def runner(names, n="n1"):
    return [(a, (n,)) for a in names]


ACQUIRE = [("Acquire", ("n1", PROMPT))]
# Step 1 to its end and its return, then Step 2 up to its Step.Started commit (the later Step's window)
TO_STEP_2_WINDOW = ACQUIRE + runner(STEP + ["StepEndedReturn"] + STEP[:3])
CANCEL = [("CancelRequest", ("n1", "s1"))] + runner(["RunnerStop", "FinalizerReconcile", "FinalizerSettle", "FinalizerClear"])


def test_one_step_configurations_keep_their_graph():
    assert explore(configs.get("ci"), liveness=False).distinct == 95_651
    assert M.asst(configs.get("ci"), 2, 1) == 2  # with one Step the assistant id is the execution id


def test_each_step_has_its_own_assistant_and_the_claim_names_the_latest():
    states, broken = walk(STEPS, ACQUIRE + runner(STEP + ["StepEndedReturn"] + STEP + ["ClearClaim"]))
    assert not broken
    last = states[-1]
    assert [(e.kind, e.asst) for e in last.log] == [("Started", 1), ("Ended", 1), ("Started", 2), ("Ended", 2)]
    assert last.claim[0] == M.NO_CLAIM and last.run[0] == M.RUNNER_IDLE
    assert [x.step for x in sorted(last.effects)] == [1, 2]  # one provider call per Step
    window = states[len(TO_STEP_2_WINDOW)]
    assert window.claim[0].asst == 2 and window.run[0][:6] == ("started", "s1", 1, 1, False, False)
    assert window.run[0].ordinal == 2


def test_a_second_execution_numbers_its_assistants_after_the_first():
    cfg = replace(STEPS, prompts=2)
    two = [("Acquire", ("n1", M.Input("s1", "prompt", 2, "pending")))]
    states, broken = walk(cfg, ACQUIRE + runner(STEP + ["StepEndedReturn"] + STEP + ["ClearClaim"]) + two
                          + runner(STEP[:3]))
    assert not broken and states[-1].claim[0].asst == M.asst(cfg, 2, 1) == 3


def test_the_step_ended_gate_between_steps_keeps_memory_active():
    states, _ = walk(STEPS, ACQUIRE + runner(STEP))
    gate = states[-1].run[0]
    assert (gate.pc, gate.mem, gate.active, gate.ordinal) == ("ended", 1, True, 1)
    after = M.StepEndedReturn(STEPS, states[-1], 0).run[0]
    assert (after.pc, after.mem, after.active, after.ordinal) == ("acquired", 1, False, 2)


@pytest.mark.parametrize("cfg", [STEPS, configs.get("ci")], ids=["between-steps", "after-the-last"])
def test_a_cancel_inside_the_step_ended_gate_settles_without_an_event(cfg):
    states, broken = walk(cfg, ACQUIRE + runner(STEP) + CANCEL)
    assert not broken
    assert [e.kind for e in states[-1].log] == ["Started", "Ended"] and states[-1].claim[0] == M.NO_CLAIM


@pytest.mark.parametrize("base", ["steps", "ci"])
def test_a_duplicate_terminal_after_step_ended_is_at_most_one_terminal(base):
    """step-failed-duplicate-interrupt trusts memory's active flag: inside Step.Ended's gate it publishes
    Step.Interrupted after Step.Ended, and AtMostOneTerminal reports it."""
    cfg = configs.get(base, defects=["step-failed-duplicate-interrupt"])
    states, broken = walk(cfg, ACQUIRE + runner(STEP) + CANCEL[:4])
    assert "AtMostOneTerminal" in broken and [e.kind for e in states[-1].log] == ["Started", "Ended", "Interrupted"]


def test_cancel_in_a_later_steps_window_interrupts_that_steps_assistant():
    states, broken = walk(STEPS, TO_STEP_2_WINDOW + CANCEL)
    assert not broken
    assert [(e.kind, e.asst) for e in states[-1].log][-2:] == [("Started", 2), ("Interrupted", 2)]


def test_cancel_trusting_memory_leaves_the_later_steps_assistant_open():
    cfg = configs.get("steps", defects=["cancel-trusts-previous-step-memory"])
    states, broken = walk(cfg, TO_STEP_2_WINDOW + CANCEL[:4])
    assert broken == ["ClearOnlySettled"]
    assert states[-1].claim[0].phase == "cancelled" and I.assistant_outcome(states[-1], 2) == "open"
    # outside the window (memory and the claim name the same assistant) it decides as the protocol does
    same, broken = walk(cfg, ACQUIRE + runner(STEP + ["StepEndedReturn"]) + CANCEL)
    assert not broken and [e.kind for e in same[-1].log] == ["Started", "Ended"]


def test_the_claim_moves_only_to_the_next_steps_assistant():
    states, _ = walk(STEPS, TO_STEP_2_WINDOW)
    st, nxt = states[-2], states[-1]
    assert I.FencedMutation(STEPS, st, nxt)
    skipped = nxt._replace(claim=(nxt.claim[0]._replace(asst=3),))
    dropped = nxt._replace(claim=(nxt.claim[0]._replace(asst=0),))
    assert not I.FencedMutation(STEPS, st, skipped) and not I.FencedMutation(STEPS, st, dropped)
    assert not I.TypeOK(STEPS, skipped._replace(claim=(skipped.claim[0]._replace(exec=1, asst=5),)))

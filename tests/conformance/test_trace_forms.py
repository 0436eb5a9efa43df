"""Issue 12 item 8: `refused` on every action (an actor asked to move takes none, or what the twin enables,
never the refused action), vacuous liveness expectations (a warning, or a failure with expect.non_vacuous),
and the expect forms for inputs, continuation ids, assistants' outcomes, writers and quarantine reasons, each
checked on the implementation's mapped state and on the twin's."""

import json

import pytest

from harness.cli import main
from harness.conformance import replay as R
from binding.world import Scheduler
from harness.traces import trace as T
from serverkit import BUNDLED, StandIn
from impl.cancel import Finalizer
from impl.recovery import RecoveryWorker
from spec import invariants as I
from spec import model as M
from spec import names as N

FAILED = R.TRACES / "step-failed-duplicate-interrupt.json"  # step 8: a refused FinalizerSettle (the runner is busy)
WINDOW = R.TRACES / "step-started-window.json"
WORKERS = R.TRACES / "two-workers-race-one-claim.json"
COLLISION = R.TRACES / "cross-session-recovery-collision.json"
SETTLE, TAKEOVER, CONVERT = N.ACTIONS["FinalizerSettle"].name, N.ACTIONS["RecoveryTakeover"].name, \
    N.ACTIONS["RecoveryConvert"].name


def _edit(tmp_path, fn, src, name="t.json"):
    raw = json.loads(src.read_text())
    fn(raw)
    p = tmp_path / name
    p.write_text(json.dumps(raw))
    return p


def _convert_asked_before_takeover(raw, instead=True):
    """two-workers-race, step 6 (r1's takeover) replaced: r1 is asked to convert before it took the claim."""
    raw["steps"][6] = {"action": CONVERT, "params": {"r": "r1"}, "refused": True,
                       **({"instead": TAKEOVER} if instead else {})}


# ---------------------------------------------------------------- refused on an actor's own step

def test_an_actor_asked_to_move_that_takes_no_step_passes_and_the_reply_says_so(capsys):
    res = R.replay_file(FAILED, server=BUNDLED)
    assert res.ok, res.problems
    rec = res.steps[7]
    assert (rec.action, rec.refused, rec.took) == (SETTLE, True, "none")
    assert main(["replay", str(FAILED)]) == 0
    assert "[refused; n1 took none]" in capsys.readouterr().out


def test_an_actor_that_takes_the_action_the_twin_enables_instead_passes_and_the_trace_goes_on(tmp_path, capsys):
    p = _edit(tmp_path, _convert_asked_before_takeover, WORKERS)
    res = R.replay_file(p, server=BUNDLED)
    assert res.ok and res.completed, res.problems
    assert res.steps[6].took == "RecoveryTakeover(r1)"
    assert main(["replay", str(p)]) == 0
    assert "[refused; r1 took RecoveryTakeover(r1)]" in capsys.readouterr().out
    _cfg, states = T.replay_twin(T.load(p))  # the twin alone follows `instead` too (explain, itf export)
    assert states[7].rec[0].pc == "converting"


def test_without_instead_the_replay_goes_on_from_what_the_actor_took(tmp_path, capsys):
    p = _edit(tmp_path, lambda raw: _convert_asked_before_takeover(raw, instead=False), WORKERS)
    res = R.replay_file(p, server=BUNDLED)
    assert res.ok and res.completed, res.problems
    assert res.steps[6].took == "RecoveryTakeover(r1)" and res.final.claim[0].phase == "none"
    assert main(["replay", str(p)]) == 0
    with pytest.raises(T.TraceError, match=r"steps\[8\]: .* is marked refused but the twin enables it"):
        T.replay_twin(T.load(p))  # the twin alone takes r1 to have taken no step: name it with `instead`


def test_without_instead_a_later_step_that_needs_the_move_is_bad_input_with_a_hint(tmp_path, capsys):
    def edit(raw):
        _convert_asked_before_takeover(raw, instead=False)
        raw["steps"][7:] = [{"action": CONVERT, "params": {"r": "r1"}}]
        raw.pop("expect")
    p = _edit(tmp_path, edit, WORKERS)
    assert main(["replay", str(p)]) == 2
    err = capsys.readouterr().err
    assert "steps[7]: RecoveryConvert(r1) is not enabled in the twin" in err
    assert "(after steps[6], refused without `instead`, the twin takes r1 to have taken no step" in err


def test_a_stand_in_actor_that_takes_the_refused_action_fails(monkeypatch, capsys):
    """A finalizer that does not wait for its busy runner settles inside Step.Failed's listener gate."""
    monkeypatch.setattr(Finalizer, "enabled", lambda self: SETTLE if self.pc == "settle" else None)
    res = R.replay_file(FAILED, server=BUNDLED)
    assert not res.ok and res.consumed == 8
    assert res.problems[0] == ("step 8 FinalizerSettle(n1): n1 took FinalizerSettle, the refused action, although "
                               "the twin does not enable it")
    assert any(p.startswith("step 8 FinalizerSettle(n1): divergence: fin[n1].pc: model settle, implementation")
               for p in res.problems)
    assert main(["replay", str(FAILED)]) == 1
    assert "[refused; n1 took FinalizerSettle(n1)]" in capsys.readouterr().out


def test_an_actor_that_takes_no_step_where_the_trace_names_one_instead_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(RecoveryWorker, "step", lambda self: None)
    res = R.replay_file(_edit(tmp_path, _convert_asked_before_takeover, WORKERS), server=BUNDLED)
    assert res.problems[0] == ("step 7 RecoveryConvert(r1): r1 took no step; the trace expects it to take "
                               "RecoveryTakeover instead")


def test_an_actor_that_takes_an_action_the_twin_does_not_enable_for_it_fails(monkeypatch):
    monkeypatch.setattr(Finalizer, "step", lambda self: N.ACTIONS["FinalizerClear"].name)
    res = R.replay_file(FAILED, server=BUNDLED)
    assert res.problems[0] == ("step 8 FinalizerSettle(n1): n1 took FinalizerClear, which the twin does not "
                               "enable for it here (it enables: nothing)")


def test_a_refused_environment_action_checks_the_twin_alone(tmp_path, capsys):
    crash = {"action": N.ACTIONS["Crash"].name, "params": {"n": "n2"}, "refused": True}  # n2 holds nothing
    p = _edit(tmp_path, lambda raw: raw["steps"].insert(2, crash), FAILED)
    assert R.replay_file(p, server=BUNDLED).ok
    assert main(["replay", str(p)]) == 0
    assert "Crash(n2)  [not enabled in the twin]" in capsys.readouterr().out


def test_attempts_must_still_be_refused_with_nothing_changed(monkeypatch):
    monkeypatch.setattr(Scheduler, "attempt", lambda self, name, params: self.world.tick() or "taken")
    res = R.replay_file(WORKERS, server=BUNDLED)
    assert any("RecoveryScan(r2, s1): the implementation took it (taken)" in p for p in res.problems)


# ---------------------------------------------------------------- vacuity

def _vacuous(raw, ask=False):
    raw["expect"]["invariants"].append("ExpiredClaimsEventuallyHandled")  # no claim ever expires here
    if ask:
        raw["expect"]["non_vacuous"] = ["ExpiredClaimsEventuallyHandled"]


def test_a_liveness_expectation_whose_premise_never_holds_is_a_warning(tmp_path, capsys):
    p = _edit(tmp_path, _vacuous, FAILED)
    res = R.replay_file(p, server=BUNDLED)
    assert res.ok and res.warnings == ["ExpiredClaimsEventuallyHandled holds only vacuously: its premise is false "
                                       "on every state of the replay (expect.non_vacuous would make this fail)"]
    assert main(["replay", str(p)]) == 0
    out = capsys.readouterr().out
    assert "  warning: ExpiredClaimsEventuallyHandled holds only vacuously" in out and "verdict: PASS" in out


def test_non_vacuous_fails_when_the_premise_never_held(tmp_path, capsys):
    p = _edit(tmp_path, lambda raw: _vacuous(raw, ask=True), FAILED)
    res = R.replay_file(p, server=BUNDLED)
    assert not res.ok and not res.warnings
    assert res.problems == ["expect.non_vacuous: ExpiredClaimsEventuallyHandled holds only vacuously: its premise "
                            "is false on every state of the replay (13 states)"]
    assert main(["replay", str(p)]) == 1


def test_non_vacuous_passes_where_the_premise_held():
    res = R.replay_file(WINDOW, server=BUNDLED)
    assert res.trace.expect.non_vacuous == ["SessionsEventuallyAvailable"] and res.ok and not res.warnings


def test_vacuity_reads_only_the_premises_of_leads_to(monkeypatch):
    """Written against leads_to's (label, p, q) triples only: a premise that never holds is all it takes."""
    real = I.leads_to
    monkeypatch.setattr(I, "leads_to", lambda name, cfg: [(lbl, lambda st: False, q) for lbl, _, q in real(name, cfg)])
    res = R.replay_file(WINDOW, server=BUNDLED)
    assert res.problems == ["expect.non_vacuous: SessionsEventuallyAvailable holds only vacuously: its premise is "
                            "false on every state of the replay (10 states)"]


# ---------------------------------------------------------------- the expect forms

@pytest.mark.parametrize("src, mutate, line", [
    (WINDOW, lambda ex: ex["events"][1].update(writer="n2"),
     "expect.events[1].writer: Step.Interrupted of assistant 1 written by n2, found n1"),
    (WINDOW, lambda ex: ex["assistants"][0].update(outcome="Ended"),
     "expect.assistants[0].outcome: assistant 1 Ended, found Interrupted"),
    (WINDOW, lambda ex: ex.update(assistants=[{"assistant": 2, "outcome": "open"}]),
     "expect.assistants[0].outcome: assistant 2 open, found none"),
    (COLLISION, lambda ex: ex["claims"][0].update(reason="exhausted"),
     "expect.claims[0].reason: quarantined as exhausted, found malformed"),
    (WORKERS, lambda ex: ex["inputs"][0].update(state="ordinary"),
     "expect.inputs[0].state: input s1/cont#1 ordinary, found pending"),
    (WORKERS, lambda ex: ex["inputs"][0].update(present=False, state=None),
     "expect.inputs[0]: input s1/cont#1 absent, found present (pending)"),
    (COLLISION, lambda ex: ex["inputs"][1].update(present=True),
     "expect.inputs[1]: input s1/cont#1 present, found absent"),
    (WORKERS, lambda ex: ex.update(continuation_ids=[]), "expect.continuation_ids: none, found s1#1"),
    (COLLISION, lambda ex: ex.update(continuation_ids=[{"session": "s2", "src": 1}]),
     "expect.continuation_ids: s2#1, found none"),
])
def test_a_failed_expectation_is_one_line_naming_its_field(tmp_path, capsys, src, mutate, line):
    def edit(raw):
        mutate(raw["expect"])
        for i in raw["expect"].get("inputs", []):
            if i.get("state") is None:
                i.pop("state", None)
    p = _edit(tmp_path, edit, src)
    res = R.replay_file(p, server=BUNDLED)
    assert res.problems == [line]  # the twin agrees: one line, not two
    assert main(["replay", str(p)]) == 1
    assert f"    - {line}" in capsys.readouterr().out


class _WrongWriter(Scheduler):
    """A mapping that reads every Step.Interrupted as written by n2."""

    def state(self):
        st = super().state()
        return st._replace(log=tuple(e._replace(node="n2") if e.kind == "Interrupted" else e for e in st.log))


def test_expectations_are_checked_on_the_implementation_and_on_the_twin(tmp_path, monkeypatch):
    res = R.replay_file(WINDOW, server=StandIn(_WrongWriter))  # diverges at the settle; the expectations see both final states
    assert "step 8 FinalizerSettle(n1): divergence: log[2].node: model n1, implementation n2" in res.problems
    assert "expect.events[1].writer: Step.Interrupted of assistant 1 written by n1, found n2" in res.problems
    assert not any(p.startswith("the twin: expect.events") for p in res.problems)
    res = R.replay_file(_edit(tmp_path, lambda raw: raw["expect"]["events"][1].update(writer="n2"), WINDOW),
                        server=StandIn(_WrongWriter))
    assert "the twin: expect.events[1].writer: Step.Interrupted of assistant 1 written by n2, found n1" in res.problems
    assert not any(p.startswith("expect.events") for p in res.problems)


def test_assistant_outcome_and_quarantine_reason_on_twin_states():
    cfg, states = T.replay_twin(T.load(COLLISION))
    assert I.quarantine_reason(cfg, states[-1], 0) == "malformed" and I.quarantine_reason(cfg, states[-1], 1) is None
    cfg, states = T.replay_twin(T.load(R.TRACES / "silent-quarantine-noop.json"))
    assert I.quarantine_reason(cfg, states[-1], 0) == "exhausted"
    cfg, states = T.replay_twin(T.load(FAILED))
    outcomes = [I.assistant_outcome(st, 1) for st in states]
    assert outcomes[0] == "none" and "open" in outcomes and outcomes[-1] == "Failed"
    twice = states[-1]._replace(log=states[-1].log + (M.Event("s1", "Interrupted", 1, "n1"),))
    assert I.assistant_outcome(twice, 1) == "Failed+Interrupted"


def test_a_refused_step_with_instead_round_trips_through_itf_and_explains(tmp_path):
    from harness.reports import explain as X
    from harness.traces import itf
    p = _edit(tmp_path, _convert_asked_before_takeover, WORKERS)
    orig = T.load(p)
    back = itf.from_itf(itf.export(orig))
    assert back == orig and back.steps[6].instead == TAKEOVER
    doc = itf.export(orig)
    doc["#meta"]["claimcheck"]["steps"][6].pop("instead")  # the states say r1 moved; the step no longer does
    with pytest.raises(T.TraceError, match=r"steps\[6\]: a refused step, but states\[7\] is not states\[6\]"):
        itf.from_itf(doc)
    assert "the actor takes RecoveryTakeover instead" in X.explain_file(p, server=BUNDLED)

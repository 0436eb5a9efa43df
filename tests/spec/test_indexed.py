"""spec/indexed.py: an EventLog and an InputSet answer every query of spec/state.py as the plain tuple's and
frozenset's scans do, however they were made (from nothing, or step by step from the value they extend, past
the fold of their own changes), and a stand-in that drops what a step appended is caught."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from spec import indexed as X
from spec import model as M
from spec import names as N

KINDS = ("Started", "ToolStarted", *N.TOOL_OUTCOMES, *N.TERMINAL_KINDS, N.REQUEST_KIND)
SESSIONS = ("s1", "s2")
ASSTS = range(1, 7)

events = st.builds(M.Event, st.sampled_from(SESSIONS), st.sampled_from(KINDS), st.sampled_from(ASSTS),
                   st.just("n1"), st.sampled_from((0, 1, 2)))
inputs = st.builds(M.Input, st.sampled_from(SESSIONS), st.sampled_from(("prompt", "cont")), st.sampled_from(ASSTS),
                   st.sampled_from(("pending", "held", "taken")), st.integers(0, 1))


def _state(log=(), ins=frozenset()) -> M.State:
    return M.init(M.Config(sessions=SESSIONS, nodes=("n1",), recoverers=("r1",)))._replace(log=log, inputs=ins)


def _answers(stt: M.State) -> tuple:
    return (tuple((*(M.open_call(stt, a, i) for i in M.CALL_INDICES), M.call_started(stt, a, 1),
                   M.step_has_outcome(stt, a), M.started(stt, a), M.completed(stt, a)) for a in ASSTS),
            tuple(M.requests_of(stt, s, p) for s in SESSIONS for p in ASSTS),
            tuple(M.has_continuation(stt, M.continuation(s, e, g)) for s in SESSIONS for e in ASSTS for g in (0, 1)),
            tuple(sorted(M.prompts_of(stt, s)) for s in SESSIONS))


def _grown_log(chunks):
    log = X.EventLog(())
    for chunk in chunks:
        log = X.EventLog(log + tuple(chunk), log)
    return log


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(events, max_size=4), max_size=12), st.sampled_from((1, 2, 256)))
def test_an_event_log_answers_as_the_scan(chunks, fold):
    X.FOLD, before = fold, X.FOLD  # a small fold: the shared dictionary is replaced often
    try:
        log = _grown_log(chunks)
    finally:
        X.FOLD = before
    plain = tuple(e for c in chunks for e in c)
    assert log == plain and hash(log) == hash(plain)
    assert _answers(_state(log=log)) == _answers(_state(log=plain))
    assert _answers(_state(log=X.EventLog(plain))) == _answers(_state(log=plain))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.frozensets(inputs, max_size=8), max_size=8))
def test_an_input_set_answers_as_the_scan(steps):
    """Each step's inputs made from the one before: inputs added and removed (a prompt's state changes)."""
    made = X.InputSet(frozenset())
    for ins in steps:
        made = X.InputSet(ins, made)
        assert made == ins
        assert _answers(_state(ins=made)) == _answers(_state(ins=ins))


def test_a_stand_in_that_drops_the_appended_events_is_caught(monkeypatch):
    """The check above can fail: an EventLog whose facts ignore what a step appended answers differently."""
    real = X.EventLog.__new__

    def forgetful(cls, events, before=None):  # the events kept, the facts only `before`'s
        made = real(cls, events, before)
        if before is not None:
            made._shared, made._own = before._shared, before._own
        return made
    monkeypatch.setattr(X.EventLog, "__new__", forgetful)
    first = X.EventLog((M.Event("s1", "Started", 1, "n1"),))
    second = X.EventLog(first + (M.Event("s1", "Ended", 1, "n1"),), first)
    plain = tuple(second)
    assert second == plain
    assert _answers(_state(log=second)) != _answers(_state(log=plain))

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


def _answers_now(stt: M.State) -> tuple:
    """The queries a search asks of long inputs and rows (spec/state.py), and the set's own answers."""
    ids = [M.Input(s, k, p, "pending", g) for s in SESSIONS for k in ("prompt", "cont") for p in ASSTS for g in (0, 1)]
    return (_answers(stt),
            tuple(M.prompt_count(stt, s) for s in SESSIONS),
            tuple(sorted(M.held_prompts(stt, s)) for s in SESSIONS),
            tuple(sorted(M.pending_inputs(stt, s)) for s in SESSIONS),
            tuple(M.find_input(stt, i) for i in ids),
            tuple(M.row_for_exec(stt, e) for e in ASSTS),
            len(stt.inputs), sorted(stt.inputs))


STATES = ("pending", "held", "ordinary", "recovery", "steered")
changes = st.lists(st.tuples(st.sampled_from(("admit", "change", "remove")), st.sampled_from(SESSIONS),
                             st.sampled_from(("prompt", "cont")), st.sampled_from(ASSTS), st.sampled_from(STATES),
                             st.integers(0, 1)), max_size=40)


def _apply(ins, change):
    """One step's change of the inputs, as the spec's actions write them (`|` and `-` of a few inputs)."""
    what, s, kind, p, state, gen = change
    have = next((x for x in ins if (x.sess, x.kind, x.src, x.gen) == (s, kind, p, gen)), None)
    new = M.Input(s, kind, p, state, gen)
    if what == "admit" and have is None:
        return ins | {new}
    if what == "change" and have is not None:
        return (ins - {have}) | {new}
    if what == "remove" and have is not None:
        return ins - {have}
    return ins


@settings(max_examples=300, deadline=None)
@given(changes, st.sampled_from((1, 2, 3, 128)))
def test_an_input_set_changed_step_by_step_answers_as_the_frozenset(steps, fold):
    """Every change kept beside the shared base, past its folds: the same set and the same answers as the
    frozenset the same changes make, and equal sets made apart equal and hashed alike."""
    X.INPUT_FOLD, before = fold, X.INPUT_FOLD
    try:
        made, plain, rows = X.InputSet(), frozenset(), X.RecoverySet(())
        for change in steps:
            prev = made
            made, plain = _apply(made, change), _apply(plain, change)
            assert type(made) is X.InputSet and made == plain and len(made) == len(plain)
            assert made - prev == plain - frozenset(prev) and prev - made == frozenset(prev) - plain
            if change[0] == "admit":
                rows = X.RecoverySet(rows | {M.RecRow(change[3], change[1])})
            assert _answers_now(_state(ins=made)._replace(recovery=rows)) == \
                _answers_now(_state(ins=plain)._replace(recovery=frozenset(rows)))
        apart = X.InputSet(plain)
        assert apart == made and hash(apart) == hash(made)
    finally:
        X.INPUT_FOLD = before


def test_an_input_set_that_forgets_a_change_is_caught(monkeypatch):
    """The check above can fail: an InputSet whose `|` keeps the base and drops what it adds answers otherwise."""
    monkeypatch.setattr(X.InputSet, "__or__", lambda self, other: self)
    made = _apply(X.InputSet(), ("admit", "s1", "prompt", 1, "held", 0))
    plain = _apply(frozenset(), ("admit", "s1", "prompt", 1, "held", 0))
    assert made != plain
    assert _answers_now(_state(ins=made)) != _answers_now(_state(ins=plain))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(events, max_size=4), max_size=16), st.sampled_from((1, 2, 5, 256)))
def test_a_shared_log_answers_as_the_tuple(chunks, chunk):
    """A SharedLog grown by appends, past the prefixes it makes: the same sequence (length, items, every
    slice a search takes), the same facts, and the hash of the log made whole at once."""
    X.LOG_CHUNK, before = chunk, X.LOG_CHUNK
    try:
        log, plain = X.SharedLog(), ()
        for c in chunks:
            prev = log
            log, plain = log + tuple(c), plain + tuple(c)
            assert log == plain and len(log) == len(plain) and tuple(log) == plain
            assert log[len(prev):] == plain[len(prev):] and all(log[k] == plain[k] for k in range(-len(plain), len(plain)))
            assert _answers(_state(log=log)) == _answers(_state(log=plain))
        whole = X.SharedLog(plain)
        assert whole == log and hash(whole) == hash(log)
    finally:
        X.LOG_CHUNK = before


def test_a_shared_log_that_drops_its_tail_is_caught(monkeypatch):
    """The check above can fail: a SharedLog whose append starts a new prefix without its own tail."""
    real = X.SharedLog.__add__

    def forgetful(self, events):
        made = real(self, events)
        if not made._tail:
            made._prefix = self._prefix + tuple(events)
        return made
    monkeypatch.setattr(X.SharedLog, "__add__", forgetful)
    X.LOG_CHUNK, before = 1, X.LOG_CHUNK
    try:
        evs = [M.Event("s1", "Started", 1, "n1"), M.Event("s1", "Ended", 1, "n1"), M.Event("s1", "Started", 2, "n1")]
        log = X.SharedLog() + evs[:1] + evs[1:2] + evs[2:]
        assert tuple(log) != tuple(evs)
    finally:
        X.LOG_CHUNK = before

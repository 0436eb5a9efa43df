"""The search's logs (harness/validation/search_state.py): a step's log is the same tuple with its hash kept,
made once per line, so a state's cost does not grow with the history's length."""

from __future__ import annotations

from spec import model as M
from harness.validation.search_state import Log, Logs


def _ev(k: int) -> M.Event:
    return M.Event("s1", "Started", k, "n1")


def test_an_append_is_the_same_log_made_once():
    logs = Logs()
    first = logs.log((), (_ev(1),))
    assert type(first) is Log and first == (_ev(1),)
    again = logs.log(first, first + (_ev(2),))
    assert again == (_ev(1), _ev(2)) and logs.log(first, first + (_ev(2),)) is again
    other = logs.log(first, first + (_ev(3),))
    assert other != again and other is not again
    assert logs.log(again, again) is again  # a step that appends nothing keeps the object


def test_equal_logs_made_apart_are_equal_states():
    logs = Logs()
    a = logs.log((), (_ev(1), _ev(2)))
    b = logs.log(logs.log((), (_ev(1),)), (_ev(1), _ev(2)))
    assert a == b and hash(a) == hash(b) and a is not b  # made apart (no kept log before): hashed alike
    logs.clear()
    assert logs.log((), (_ev(1), _ev(2))) is not a  # cleared between lines: nothing kept past one

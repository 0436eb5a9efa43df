"""The twin's state as the validation search holds it: the durable variables it compares (a commit log shows
only these), the log with its hash kept, and the log's and the inputs' facts (`Indexed`).

The twin's `log` is a tuple of every event so far, and a tuple does not keep its hash: every set the search
puts a state in hashed the whole log again, so the cost of a state grew with the history's length (a
2-node stress history: 3,903 lines/s over its first 1,000 lines, 387 over its first 10,000). `Indexed` gives
each log a step appends a `Log` (the same tuple, equal to it) whose hash is computed once, from the log it
extends and the events appended, and the same object for the same log within one line, so comparing two
states compares their logs by identity. Nothing a guard reads changes: a `Log` is the tuple."""

from spec import model as M
from spec.indexed import EventLog, InputSet

DURABLE = ("claim", "nextExec", "log", "recovery", "inputs", "cancelled", "wakes")
DURABLE_INDEX = tuple(M.State._fields.index(v) for v in DURABLE)


class Log(EventLog):
    """A log whose hash is kept: a tuple of events, equal to the plain tuple, its hash folded event by event
    (`fold`), so equal logs hash alike however they were made; and, as an EventLog, the facts the spec's
    queries read, built from the log it extends."""

    def __new__(cls, events, h: int, before=None):
        self = super().__new__(cls, events, before)
        self._h = h
        return self

    def __hash__(self):
        return self._h


def fold(h: int, events) -> int:
    for e in events:
        h = hash((h, e))
    return h


EMPTY = hash(())


class Indexed:
    """The logs and inputs of the states one line's search makes, each made once (`log`, `inputs`): the
    same object for the same value within a line; `clear` between lines."""

    def __init__(self):
        self.made: dict = {}

    def log(self, before: tuple, after: tuple) -> tuple:
        """`after` (the log of a step from a state whose log is `before`) as a Log, the same object for the
        same log within a line. A step appends; a log that is not an append to a kept one is folded whole."""
        if after is before or type(after) is Log:
            return after
        n = len(before)
        # a step appends (every action's log' is the log or an Append to it): the append's copy shares
        # the events, so the last one the same object is checked at once, and the whole prefix only if not
        if type(before) is Log and len(after) >= n and (n == 0 or after[n - 1] is before[-1] or after[:n] == before):
            key = (before, after[n:])
            h, base = before._h, before
        else:
            key, h, n, base = (None, after), EMPTY, 0, None
        got = self.made.get(key)
        if got is None:
            got = self.made[key] = Log(after, fold(h, after[n:]), base)
        return got

    def inputs(self, before: frozenset, after: frozenset) -> frozenset:
        """`after` (the inputs of a step from a state whose inputs are `before`) as an InputSet, made from
        `before`'s facts when it is one."""
        if after is before or type(after) is InputSet:
            return after
        key = ("inputs", after)
        got = self.made.get(key)
        if got is None:
            got = self.made[key] = InputSet(after, before if type(before) is InputSet else None)
        return got

    def clear(self):
        self.made.clear()

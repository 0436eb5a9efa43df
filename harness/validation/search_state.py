"""The twin's state as the validation search holds it: the durable variables it compares (a commit log shows
only these), and the log, the inputs and the recovery rows in forms whose cost does not grow with the
history (`Indexed`, `searched`).

The twin's `log` is a tuple of every event so far and its `inputs` a frozenset of every input. A tuple does not
keep its hash, and a step copied both whole: every set the search put a state in hashed the whole log again,
and a step's `log + (e,)` and `(inputs - {old}) | {new}` cost the history's length (a 2-node stress history:
3,903 lines/s over its first 1,000 lines, 387 over its first 10,000; at 10^5 lines, 16 us and 800 us a
step). In a search the log is a SharedLog (a shared prefix and its own appended events, its hash folded as
it grows), the inputs an InputSet (a shared base and its own changes) and the rows a RecoverySet (the
executions they name kept), all in spec/indexed.py; `Indexed` makes the same object for the same log
within one line, so comparing two states compares their logs by identity. Nothing a guard reads changes:
each answers as the tuple, the set and the frozenset do (tests/spec/test_indexed.py)."""

from spec import model as M
from spec.indexed import InputSet, RecoverySet, SharedLog

DURABLE = ("claim", "nextExec", "log", "recovery", "inputs", "cancelled", "wakes")
DURABLE_INDEX = tuple(M.State._fields.index(v) for v in DURABLE)


class Indexed:
    """The logs, inputs and rows of the states one line's search makes, each made once (`log`, `inputs`,
    `recovery`): the same object for the same value within a line; `clear` between lines."""

    def __init__(self):
        self.made: dict = {}

    def log(self, before, after):
        """`after` (the log of a step from a state whose log is `before`) as a SharedLog, the same object
        for the same log within a line."""
        if after is before:
            return after
        if type(after) is not SharedLog:
            after = SharedLog(after)
        got = self.made.get(("log", after))
        if got is None:
            got = self.made[("log", after)] = after
        return got

    def inputs(self, before, after):
        """`after` (the inputs of a step from a state whose inputs are `before`) as an InputSet: a step on an
        InputSet makes one (its change kept beside the shared base), any other is made once per line."""
        return self._once(InputSet, before, after)

    def recovery(self, before, after):
        """`after` (the recovery rows of a step) as a RecoverySet, made once per line."""
        return self._once(RecoverySet, before, after)

    def _once(self, form, before, after):
        """`after` in `form`: as it is when it already is (or is `before`), else made once per line."""
        if after is before or type(after) is form:
            return after
        key = (form.__name__, after)
        got = self.made.get(key)
        if got is None:
            got = self.made[key] = form(after)
        return got

    def clear(self):
        self.made.clear()


def searched(st):
    """The search's form of a state (the validation's first state): its log a SharedLog, its inputs an
    InputSet, its rows a RecoverySet, so every state the search makes from it carries them."""
    return st._replace(log=SharedLog(st.log), inputs=InputSet(st.inputs), recovery=RecoverySet(st.recovery))

"""The durable log and inputs with what the spec's queries ask of them kept, for long histories.

Why: the twin's `log` is a tuple of every event so far and `inputs` a set of every input. The explorer's
hold a few and stay a plain tuple and frozenset; a validation search (harness/validation) follows a history
whose log and inputs grow with everything a deployment committed, and the spec's queries (spec/state.py:
`open_call`, `started`, `completed`, `requests_of`, `has_continuation`, `prompts_of`) scanned them whole at
every state searched, so a line's cost grew with the history's length. An `EventLog` is the same tuple, an
`InputSet` the same frozenset (equal, hashed alike), with those facts built from the value it extends and
what changed. Nothing a guard reads changes: each query answers as its scan does (tests/spec/test_indexed.py).
"""

from __future__ import annotations

from . import names as N

FOLD = 256  # own changes kept before they are folded into a new shared dictionary
_NONE = frozenset()


class EventLog(tuple):
    """A log with its facts: `kinds(a)` (the kinds of assistant a's events), `calls(a)` (its tool events'
    (kind, call index)), `requests(s, p)`."""

    def __new__(cls, events, before=None):
        """`events`: the whole log; `before`: an EventLog that `events` extends (None: built from all)."""
        self = super().__new__(cls, events)
        if before is None:
            self._shared, self._own = {}, {}
            appended = events
        else:
            self._shared, self._own = before._shared, dict(before._own)
            appended = events[len(before):]
        for e in appended:
            if e.kind == N.REQUEST_KIND:
                key = (e.sess, e.asst)
                self._own[key] = self._get(key, 0) + 1
            else:
                self._own[e.asst] = self._get(e.asst, _NONE) | {e.kind}
                if e.kind in N.TOOL_KINDS:
                    key = ("calls", e.asst, "")
                    self._own[key] = self._get(key, _NONE) | {(e.kind, e.call)}
        if len(self._own) > FOLD:
            self._shared, self._own = {**self._shared, **self._own}, {}
        return self

    def _get(self, key, default):
        got = self._own.get(key)
        return self._shared.get(key, default) if got is None else got

    def kinds(self, a: int) -> frozenset:
        return self._get(a, _NONE)

    def calls(self, a: int) -> frozenset:
        """(kind, call index) of assistant a's tool events."""
        return self._get(("calls", a, ""), _NONE)

    def requests(self, s: str, p: int) -> int:
        return self._get((s, p), 0)


class InputSet(frozenset):
    """Inputs with their facts: `has_continuation(sess, src, gen)` (any state), `prompts(s)` (Session s's
    admitted prompts, any state)."""

    def __new__(cls, items, before=None):
        """`items`: every input; `before`: the InputSet `items` was made from by a step (None: built from all)."""
        self = super().__new__(cls, items)
        if before is None:
            self._conts, self._prompts = frozenset(), {}
            added, removed = self, ()
        else:
            self._conts, self._prompts = before._conts, before._prompts
            added, removed = self - before, before - self
        if added or removed:
            came = {(i.sess, i.src, i.gen) for i in added if i.kind == "cont"}
            went = {(i.sess, i.src, i.gen) for i in removed if i.kind == "cont"} - came
            if not came <= self._conts or went:  # a state change keeps the id: only a new or a gone one costs
                gone = {k for k in went if not any(i.kind == "cont" and (i.sess, i.src, i.gen) == k for i in self)}
                self._conts = (self._conts | came) - gone
            changed = {i.sess for i in (*added, *removed) if i.kind == "prompt"}
            if changed:
                self._prompts = dict(self._prompts)
                for s in changed:
                    self._prompts[s] = tuple(i for i in (*self._prompts.get(s, ()), *added)
                                             if i.sess == s and i.kind == "prompt" and i not in removed)
        return self

    def has_continuation(self, sess: str, src: int, gen: int) -> bool:
        return (sess, src, gen) in self._conts

    def prompts(self, s: str) -> list:
        return list(self._prompts.get(s, ()))

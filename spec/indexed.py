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


class _Facts:
    """What the spec's log queries ask, kept per assistant and per (Session, prompt): `kinds(a)` (the kinds of
    assistant a's events), `calls(a)` (its tool events' (kind, call index)), `requests(s, p)`. A log's own
    changes (`_own`) are kept beside a dictionary shared with the logs it extends (`_shared`), folded into a
    new shared one past FOLD of them."""

    __slots__ = ()

    def _note(self, before, appended) -> None:
        if before is None:
            self._shared, self._own = {}, {}
        else:
            self._shared, self._own = before._shared, dict(before._own)
        for e in appended:
            if e.kind == N.REQUEST_KIND:
                key = (e.sess, e.asst)
                self._own[key] = self._get(key, 0) + 1
            else:
                self._own[e.asst] = self._get(e.asst, _NONE) | {e.kind}
                if e.kind in N.TOOL_KINDS or e.call:  # (a Step.Started naming its hosted call too)
                    key = ("calls", e.asst, "")
                    self._own[key] = self._get(key, _NONE) | {(e.kind, e.call)}
        if len(self._own) > FOLD:
            self._shared, self._own = {**self._shared, **self._own}, {}

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


class EventLog(_Facts, tuple):
    """A log with its facts: the same tuple (equal, hashed alike)."""

    def __new__(cls, events, before=None):
        """`events`: the whole log; `before`: an EventLog that `events` extends (None: built from all)."""
        self = tuple.__new__(cls, events)
        self._note(before, events if before is None else events[len(before):])
        return self


LOG_CHUNK = 256  # events a SharedLog keeps past its shared prefix before it makes a longer prefix


def fold(h: int, events) -> int:
    """A log's hash, folded event by event: equal logs hash alike however they were made."""
    for e in events:
        h = hash((h, e))
    return h


class SharedLog(_Facts):
    """A long log that shares its prefix: a tuple shared by the logs made from it and the few events this one
    appends to it, so an append costs the append, not a copy of every event (a tuple's `log + (e,)` copied
    all of them: 16 us at 19,000 events, several a line). A sequence of events to every reader (`len`,
    iteration, indexing, slicing, equality), with the facts of `_Facts` and its hash folded as it grows
    (`fold`): equal SharedLogs hash alike, but not as the equal tuple (a search holds SharedLogs only: the
    validation's first state is given one, harness/validation/judge.py)."""

    __slots__ = ("_prefix", "_tail", "_n", "_h", "_shared", "_own")

    def __init__(self, events=()):
        events = tuple(events)
        self._prefix, self._tail, self._n, self._h = events, (), len(events), fold(hash(()), events)
        self._note(None, events)

    def __add__(self, events):
        events = tuple(events)
        if not events:
            return self
        made = object.__new__(SharedLog)
        if len(self._tail) + len(events) > LOG_CHUNK:
            made._prefix, made._tail = self._prefix + self._tail + events, ()
        else:
            made._prefix, made._tail = self._prefix, self._tail + events
        made._n, made._h = self._n + len(events), fold(self._h, events)
        made._note(self, events)
        return made

    def __len__(self) -> int:
        return self._n

    def __iter__(self):
        yield from self._prefix
        yield from self._tail

    def __getitem__(self, k):
        n = len(self._prefix)
        if isinstance(k, slice):
            start, stop, step = k.indices(self._n)
            if step == 1 and start >= n:
                return self._tail[start - n:stop - n]
            return tuple(self)[k]
        if k < 0:
            k += self._n
        if not 0 <= k < self._n:
            raise IndexError("log index out of range")
        return self._prefix[k] if k < n else self._tail[k - n]

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if isinstance(other, SharedLog):
            if self._n != other._n or self._h != other._h:
                return False
            if self._prefix is other._prefix:
                return self._tail == other._tail
            return tuple(self) == tuple(other)
        if isinstance(other, tuple):
            return self._n == len(other) and tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return self._h

    def __repr__(self) -> str:
        return f"SharedLog({tuple(self)!r})"


INPUT_FOLD = 128  # changes an InputSet keeps beside its base before it folds them into a new base


class _Base:
    """A frozenset of inputs and its indexes, shared by every InputSet made from it: by id (Session, kind,
    number, generation), each Session's prompt count, and each Session's held and pending inputs."""

    __slots__ = ("items", "ids", "prompts", "held", "pending", "h")

    def __init__(self, items: frozenset, before: "_Base | None" = None, removed=(), added=()):
        self.items = items
        if before is None:
            self.ids, self.prompts, self.held, self.pending, self.h = {}, {}, {}, {}, 0
            removed, added = (), items
        else:
            self.ids, self.prompts = dict(before.ids), dict(before.prompts)
            self.held, self.pending, self.h = dict(before.held), dict(before.pending), before.h
        for x, sign in [(x, -1) for x in removed] + [(x, 1) for x in added]:
            key = _id(x)
            if sign < 0:
                if self.ids.get(key) == x:
                    del self.ids[key]
            else:
                self.ids[key] = x
            self.h += sign * hash(x)
            if x.kind == "prompt":
                self.prompts[x.sess] = self.prompts.get(x.sess, 0) + sign
            for name, table in (("held", self.held), ("pending", self.pending)):
                if x.state == name:
                    table[x.sess] = (tuple(y for y in table.get(x.sess, ()) if y != x) if sign < 0
                                     else table.get(x.sess, ()) + (x,))


def _id(x) -> tuple:
    return (x.sess, x.kind, x.src, x.gen)


class InputSet:
    """Every input, persistent: a shared base (a frozenset with its indexes) and the few inputs this value
    adds to it and removes from it, so a step that changes one input costs its change, not the set's size
    (a frozenset's `(inputs - {old}) | {new}` copied all of them: 800 us at 16,000 inputs). It is a set of
    inputs to every reader (membership, iteration, `|`, `-`, equality, `len`) and answers the spec's queries
    from its indexes: `find(i)` (the input with i's id), `has_continuation`, `prompt_count(s)`,
    `held_of(s)`, `pending_of(s)`, `prompts(s)`. Its hash is the sum of its inputs' hashes, kept as it changes:
    equal InputSets hash alike, but not as the equal frozenset (a search holds InputSets only: the
    validation's first state is given one, harness/validation/judge.py)."""

    __slots__ = ("_base", "_added", "_removed", "_h", "_n")

    def __init__(self, items=frozenset(), before=None):
        """`items`: every input (`before` is kept for the call's old form: the facts come from `items`)."""
        items = frozenset(items)
        self._base, self._added, self._removed = _Base(items), frozenset(), frozenset()
        self._h, self._n = self._base.h, len(items)

    @classmethod
    def _made(cls, base: _Base, added: frozenset, removed: frozenset, h: int, n: int) -> "InputSet":
        self = object.__new__(cls)
        if len(added) + len(removed) > INPUT_FOLD:
            base = _Base((base.items - removed) | added, base, removed, added)
            added = removed = frozenset()
        self._base, self._added, self._removed, self._h, self._n = base, added, removed, h, n
        return self

    # ------------------------------------------------------------ a set

    def __contains__(self, x) -> bool:
        return x in self._added or (x in self._base.items and x not in self._removed)

    def __iter__(self):
        removed = self._removed
        yield from (x for x in self._base.items if x not in removed) if removed else self._base.items
        yield from self._added

    def __len__(self) -> int:
        return self._n

    def frozen(self) -> frozenset:
        return (self._base.items - self._removed) | self._added

    def _with(self, add, remove) -> "InputSet":
        """This set with `remove` (inputs it holds) taken out and `add` (inputs it does not) put in."""
        if not add and not remove:
            return self
        base, added, removed = self._base.items, set(self._added), set(self._removed)
        for x in remove:
            added.discard(x) if x in added else removed.add(x)
        for x in add:
            removed.discard(x) if x in base else added.add(x)
        h = self._h + sum(hash(x) for x in add) - sum(hash(x) for x in remove)
        return InputSet._made(self._base, frozenset(added), frozenset(removed), h, self._n + len(add) - len(remove))

    def __or__(self, other):
        return self._with({x for x in other if x not in self}, ())

    def __sub__(self, other):
        if isinstance(other, InputSet):
            return frozenset(self._minus(other))
        return self._with((), {x for x in other if x in self})

    def _minus(self, other: "InputSet"):
        """self - other: from the two sets' changes when they share a base, else from the whole sets."""
        if other._base is not self._base:
            return self.frozen() - other.frozen()
        return ({x for x in self._added if x not in other}
                | {x for x in other._removed if x not in self._removed and x not in other._added})

    def __rsub__(self, other):
        return frozenset(x for x in other if x not in self)

    __ror__ = __or__

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if isinstance(other, InputSet):
            if self._h != other._h or self._n != other._n:
                return False
            if self._base is other._base:
                return self._added == other._added and self._removed == other._removed
            return self.frozen() == other.frozen()
        if isinstance(other, (frozenset, set)):
            return self.frozen() == other
        return NotImplemented

    def __hash__(self) -> int:
        return self._h

    def __repr__(self) -> str:
        return f"InputSet({sorted(self)!r})"

    # ------------------------------------------------------------ the spec's queries

    def find(self, sess: str, kind: str, src: int, gen: int):
        """The input with this id (any state), or None."""
        key = (sess, kind, src, gen)
        for x in self._added:
            if _id(x) == key:
                return x
        got = self._base.ids.get(key)
        return None if got is None or got in self._removed else got

    def has_continuation(self, sess: str, src: int, gen: int) -> bool:
        return self.find(sess, "cont", src, gen) is not None

    def prompt_count(self, s: str) -> int:
        """How many prompts of Session s it holds (any state)."""
        n = self._base.prompts.get(s, 0)
        n += sum(1 for x in self._added if x.sess == s and x.kind == "prompt")
        return n - sum(1 for x in self._removed if x.sess == s and x.kind == "prompt")

    def _of(self, table: dict, s: str, state: str) -> list:
        return ([x for x in table.get(s, ()) if x not in self._removed]
                + [x for x in self._added if x.sess == s and x.state == state])

    def held_of(self, s: str) -> list:
        """Session s's held inputs."""
        return self._of(self._base.held, s, "held")

    def pending_of(self, s: str) -> list:
        """Session s's pending inputs."""
        return self._of(self._base.pending, s, "pending")

    def prompts(self, s: str) -> list:
        return [x for x in self if x.sess == s and x.kind == "prompt"]


class RecoverySet(frozenset):
    """session_recovery rows with the executions they name kept (`execs`): `row_for_exec` scanned every row."""

    def __new__(cls, rows):
        self = super().__new__(cls, rows)
        self.execs = frozenset(r.exec for r in self)
        return self

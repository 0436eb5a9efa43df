"""TLA+ values as TLC prints them, parsed into a canonical Python form, and twin states into the same.

Canonical form: records and functions are dicts (keys sorted on output), sequences are lists, sets are
sorted lists tagged as sets, strings, ints and bools are themselves. Two states are equal exactly when
their canonical forms are; `canon_key` makes that form hashable for graph comparison.
"""

from __future__ import annotations

import functools
import json
import re

from spec import model as M


class TlaSet(tuple):
    """A set, kept as a sorted tuple so that equal sets compare equal."""


class ParseError(ValueError):
    pass


_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+)|(?P<op>\|->|:>|@@|<<|>>|/\\|[\[\]{}(),=])'
                    r'|(?P<id>[A-Za-z_][A-Za-z0-9_]*))')


def _tokens(text: str):
    pos = 0
    out = []
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ParseError(f"cannot read TLA+ value at {text[pos:pos + 30]!r}")
        pos = m.end()
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
    return out


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, k=0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            raise ParseError(f"expected {value!r}, found {tok[1]!r}")
        self.i += 1
        return tok

    def value(self):
        kind, v = self.peek()
        if kind == "str":
            self.i += 1
            return json.loads(v)
        if kind == "num":
            self.i += 1
            return int(v)
        if kind == "id" and v in ("TRUE", "FALSE"):
            self.i += 1
            return v == "TRUE"
        if kind == "id":  # a model value (Nodes and Sessions under TLC's SYMMETRY): the twin's name for it
            self.i += 1
            return v
        if v == "<<":
            return self._seq()
        if v == "{":
            return self._set()
        if v == "[":
            return self._record()
        if v == "(":
            return self._fcn()
        raise ParseError(f"unexpected {v!r}")

    def _items(self, close, item):
        out = []
        if self.peek()[1] == close:
            self.take(close)
            return out
        while True:
            out.append(item())
            if self.peek()[1] == ",":
                self.take(",")
                continue
            self.take(close)
            return out

    def _seq(self):
        self.take("<<")
        return self._items(">>", self.value)

    def _set(self):
        self.take("{")
        return TlaSet(sorted(self._items("}", self.value), key=_order))

    def _record(self):
        self.take("[")

        def field():
            _k, name = self.take()
            self.take("|->")
            return name, self.value()
        return dict(self._items("]", field))

    def _fcn(self):
        # (k1 :> v1 @@ k2 :> v2): a function printed by TLC when its domain is not all strings
        self.take("(")
        out = {}
        while True:
            k = self.value()
            self.take(":>")
            out[_hashable(k)] = self.value()
            if self.peek()[1] == "@@":
                self.take("@@")
                continue
            self.take(")")
            return out


def _hashable(v):
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("<<>>",) + tuple(_hashable(x) for x in v)
    if isinstance(v, TlaSet):
        return ("{}",) + tuple(_hashable(x) for x in v)
    return v


def _order(v):
    return json.dumps(to_json(v), sort_keys=True)


def parse_value(text: str):
    p = _Parser(text)
    v = p.value()
    if p.peek()[0] is not None:
        raise ParseError(f"trailing text after value: {p.peek()[1]!r}")
    return v


def _conjuncts(text: str):
    text = text.strip()
    if text.startswith("/\\ ") and text.count("/\\") == text.count("\n/\\ ") + 1:
        parts = text[3:].split("\n/\\ ")  # TLC's own layout, one conjunct per line start: no regex needed
    else:
        parts = re.split(r"(?:^|\n)\s*/\\\s+", "\n" + text)
    for part in parts:
        if part.strip():
            name, _, rest = part.partition("=")
            yield name.strip(), rest


def parse_state(text: str) -> dict:
    """A TLC state: `/\\ var = value` conjuncts (one per variable), as {var: value}."""
    return {name: parse_value(rest) for name, rest in _conjuncts(text)}


@functools.lru_cache(maxsize=None)
def _value_key(text: str):
    return _hashable(parse_value(text))


_RAW: dict[str, object] = {}  # a variable's value as printed -> its key: TLC prints a value the same way each time


def state_key_from_text(text: str):
    """canon_key(parse_state(text)), memoized per variable: states share most of their values."""
    raw = _RAW
    out = []
    for name, rest in _conjuncts(text):
        k = raw.get(rest)
        if k is None:
            k = raw[rest] = _value_key(" ".join(rest.split()))
        out.append((name, k))
    out.sort()
    return tuple(out)


def to_json(v):
    """Canonical value → plain JSON data (sets become sorted lists)."""
    if isinstance(v, dict):
        return {str(k): to_json(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    return v


def canon_key(state: dict):
    return _hashable(state)


# ---------------------------------------------------------------- twin states → canonical

def _rec(nt) -> dict:
    return dict(nt._asdict())


def twin_to_canon(cfg: M.Config, st: M.State) -> dict:
    """The twin state in the canonical form TLC's printout parses into."""
    tset = lambda items: TlaSet(sorted((_rec(x) for x in items), key=_order))
    return {
        "claim": {s: _rec(c) for s, c in zip(cfg.sessions, st.claim)},
        "nextExec": st.nextExec,
        "log": [_rec(e) for e in st.log],
        "recovery": tset(st.recovery),
        "inputs": tset(st.inputs),
        "run": {n: _rec(r) for n, r in zip(cfg.nodes, st.run)},
        "fin": {n: _rec(f) for n, f in zip(cfg.nodes, st.fin)},
        "rec": {r: _rec(w) for r, w in zip(cfg.recoverers, st.rec)},
        "cancelled": tset(st.cancelled),
        "faults": TlaSet(sorted(st.faults)),
        "effects": tset(st.effects),
        "wakes": [_rec(x) for x in st.wakes],
        "waker": _waker_canon(st.waker),
    }


@functools.lru_cache(maxsize=None)
def _twin_value_key(var: str, value, names: tuple):
    return _hashable(_TWIN_VAR[var](value, names))


_TWIN_VAR = {
    "claim": lambda v, names: {s: _rec(c) for s, c in zip(names[0], v)},
    "nextExec": lambda v, names: v,
    "log": lambda v, names: [_rec(e) for e in v],
    "recovery": lambda v, names: TlaSet(sorted((_rec(x) for x in v), key=_order)),
    "inputs": lambda v, names: TlaSet(sorted((_rec(x) for x in v), key=_order)),
    "run": lambda v, names: {n: _rec(r) for n, r in zip(names[1], v)},
    "fin": lambda v, names: {n: _rec(f) for n, f in zip(names[1], v)},
    "rec": lambda v, names: {r: _rec(w) for r, w in zip(names[2], v)},
    "cancelled": lambda v, names: TlaSet(sorted((_rec(x) for x in v), key=_order)),
    "faults": lambda v, names: TlaSet(sorted(v)),
    "effects": lambda v, names: TlaSet(sorted((_rec(x) for x in v), key=_order)),
    "wakes": lambda v, names: [_rec(x) for x in v],
    "waker": lambda v, names: _waker_canon(v),
}


def _waker_canon(v) -> list:
    """The wakers' memories, a sequence (1..Wakers); with one waker the empty function, which TLC prints as << >>."""
    return [TlaSet(sorted((_rec(x) for x in plan), key=_order)) for plan in v]


def twin_key(cfg: M.Config, st: M.State):
    """canon_key(twin_to_canon(cfg, st)), memoized per variable value."""
    names = (cfg.sessions, cfg.nodes, cfg.recoverers)
    return tuple(sorted((var, _twin_value_key(var, getattr(st, var), names)) for var in M.VARIABLES))


def _int(v) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"not an integer: {v!r:.40}")
    return v


def _records(kind, items):
    if isinstance(items, (dict, str)):
        raise TypeError(f"not a set: {type(items).__name__}")
    return [kind(**x) for x in items]


def _names(items):
    if isinstance(items, (dict, str)) or not all(isinstance(x, str) for x in items):
        raise TypeError("not a set of strings")
    return items


_FROM_CANON = {  # variable: (what it must be, canonical value -> twin value)
    "claim": ("a claim record per Session", lambda cfg, v: tuple(M.Claim(**v[s]) for s in cfg.sessions)),
    "nextExec": ("an integer", lambda cfg, v: _int(v)),
    "log": ("a sequence of event records", lambda cfg, v: tuple(_records(M.Event, v))),
    "recovery": ("a set of {exec, sess} records", lambda cfg, v: frozenset(_records(M.RecRow, v))),
    "inputs": ("a set of input records", lambda cfg, v: frozenset(_records(M.Input, v))),
    "run": ("a runner record per node", lambda cfg, v: tuple(M.Runner(**v[n]) for n in cfg.nodes)),
    "fin": ("a finalizer record per node", lambda cfg, v: tuple(M.Fin(**v[n]) for n in cfg.nodes)),
    "rec": ("a recovery-worker record per recoverer", lambda cfg, v: tuple(M.Rec(**v[r]) for r in cfg.recoverers)),
    "cancelled": ("a set of {exec, sess} records", lambda cfg, v: frozenset(_records(M.RecRow, v))),
    "faults": ("a set of fault names", lambda cfg, v: frozenset(_names(v))),
    "effects": ("a set of effect records", lambda cfg, v: frozenset(_records(M.Effect, v))),
    "wakes": ("a sequence of wake-row records, one per wake row",
              lambda cfg, v: _wakes(cfg, v)),
    "waker": ("a sequence of plan sets (row, tries, slot records), one per waker", lambda cfg, v: _waker(cfg, v)),
}


def _wakes(cfg: M.Config, v) -> tuple:
    if isinstance(v, (dict, str)) or len(v) != cfg.wake_rows:
        raise TypeError(f"not {cfg.wake_rows} wake rows")
    return tuple(M.Wake(**x) for x in v)


def _waker(cfg: M.Config, v) -> tuple:
    wakers = cfg.wakers if cfg.wakers > 1 else 0
    if not wakers and isinstance(v, (dict, list, TlaSet)) and not v:  # the empty function, however printed
        return ()
    if isinstance(v, (dict, str)) or len(v) != wakers:
        raise TypeError(f"not {wakers} wakers' memories")
    return tuple(frozenset(_records(M.Plan, plan)) for plan in v)


class ShapeError(ParseError):
    """A state whose variable `field` does not have the configuration's shape."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field, self.reason = field, reason


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"no entry for {exc.args[0]!r:.40}"
    return str(exc).replace("spec.model.", "").replace("spec.state.", "").replace(".__new__()", "")[:100]


def canon_to_twin(cfg: M.Config, d: dict) -> M.State:
    """The inverse of twin_to_canon (for traces that come from TLC or Apalache). A value of the wrong shape
    is a ShapeError naming the variable."""
    if not isinstance(d, dict):
        raise ShapeError("", f"expected an object of the spec's variables, got {type(d).__name__}")
    out = {}
    for var, (what, convert) in _FROM_CANON.items():
        if var not in d and var == "wakes" and not cfg.wake_rows:
            out[var] = ()  # a state written before wake scans were modelled, or without wake rows
            continue
        if var not in d and var == "waker" and cfg.wakers <= 1:
            out[var] = ()  # a state written before the wakers' memory, or with one waker (it has none)
            continue
        if var not in d:
            raise ShapeError(var, "missing")
        try:
            out[var] = convert(cfg, d[var])
            hash(out[var])
        except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
            raise ShapeError(var, f"expected {what} ({_why(exc)})") from exc
    return M.State(**out)

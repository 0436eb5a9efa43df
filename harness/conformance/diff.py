"""The comparison of two twin states: `diff` names each field where the model and the system under test
differ (`run[n1].mem: model 0, implementation 1`), model value beside implementation value, never whole
records. Replay, lockstep, the exhaustive walk and the stress history check all report a divergence
through it; what the state of a server is (its mapping) is the server's binding's (binding/mapping.py).
"""

from __future__ import annotations

from typing import NamedTuple

from spec import model as M


class Difference(NamedTuple):
    """One field where the model and the implementation disagree: `path` names it as the spec does
    (`run[n1].mem`, `claim[s1].ttl`, `log[2].kind`, `recovery[exec=1, sess=s1]`), the values are the
    field's own (never a whole record); an element of a set or sequence only one side has is `absent`."""

    path: str
    model: object
    impl: object

    def __str__(self) -> str:
        return f"{self.path}: model {show(self.model)}, implementation {show(self.impl)}"


ABSENT = type("Absent", (), {"__repr__": lambda self: "absent"})()


def _pairs(v):
    """A record's (field, value) pairs; an event's or effect's call index only where it has one (a tool's)."""
    return [(k, x) for k, x in zip(v._fields, v)
            if not (k == "call" and x == 0 and isinstance(v, (M.Event, M.Effect)))]


def show(v) -> str:
    """A field value as the spec writes it: TRUE/FALSE, "" for the empty name, records as field=value."""
    if v is ABSENT:
        return "absent"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if v == "":
        return '""'
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return "(" + ", ".join(f"{k}={show(x)}" for k, x in _pairs(v)) + ")"
    return str(v)


def _record(path: str, m, i) -> list[Difference]:
    if hasattr(m, "_fields") and type(m) is type(i):
        return [Difference(f"{path}.{k}", a, b) for k, a, b in zip(m._fields, m, i) if a != b]
    return [Difference(path, m, i)]


def _keys(cfg: M.Config | None, var: str, n: int) -> list[str]:
    if var == "wakes":  # wake rows are numbered from 1, as in the spec
        return [str(k + 1) for k in range(n)]
    names = {"claim": "sessions", "run": "nodes", "fin": "nodes", "rec": "recoverers"}.get(var)
    got = tuple(getattr(cfg, names)) if cfg is not None and names else ()
    return list(got) if len(got) == n else [str(k) for k in range(n)]


def _key(x) -> str:
    if isinstance(x, M.Input):
        return f"{x.sess}/{x.kind}#{x.src}" + (f"/gen{x.gen}" if x.gen else "")
    if hasattr(x, "_fields"):
        return ", ".join(f"{k}={show(v)}" for k, v in _pairs(x))
    return str(x)


def _set(var: str, m: frozenset, i: frozenset) -> list[Difference]:
    """Elements only one side has; inputs are matched by identity (Session, kind, source, gen), so an
    input whose state differs is one line naming its state."""
    if var == "inputs":
        ident = lambda x: (x.sess, x.kind, x.src, x.gen)
        mi, ii = {ident(x): x for x in m}, {ident(x): x for x in i}
        out = []
        for k in sorted(set(mi) | set(ii)):
            a, b = mi.get(k, ABSENT), ii.get(k, ABSENT)
            if a != b:
                where = f"inputs[{k[0]}/{k[1]}#{k[2]}" + (f"/gen{k[3]}" if k[3] else "") + "]"
                out += [Difference(f"{where}.state", a.state, b.state)] if ABSENT not in (a, b) else \
                    [Difference(where, "present" if a is not ABSENT else ABSENT, "present" if b is not ABSENT else ABSENT)]
        return out
    return [Difference(f"{var}[{_key(x)}]", "present" if x in m else ABSENT, "present" if x in i else ABSENT)
            for x in sorted(m ^ i, key=repr)]


def diff(model: M.State, impl: M.State, cfg: M.Config | None = None) -> list[Difference]:
    """One Difference per field that differs (unpacks as (path, model value, implementation value));
    `cfg` names the entries of per-Session, per-node and per-worker variables (else their index)."""
    out: list[Difference] = []
    for var in M.VARIABLES:
        m, i = getattr(model, var), getattr(impl, var)
        if m == i:
            continue
        if isinstance(m, frozenset) and isinstance(i, frozenset):
            out += _set(var, m, i)
        elif var == "log" and isinstance(m, tuple) and isinstance(i, tuple):
            for k in range(max(len(m), len(i))):
                a = m[k] if k < len(m) else ABSENT
                b = i[k] if k < len(i) else ABSENT
                if a != b:
                    out += _record(f"log[{k + 1}]", a, b)
        elif isinstance(m, tuple) and isinstance(i, tuple) and len(m) == len(i):
            for key, a, b in zip(_keys(cfg, var, len(m)), m, i):
                if a != b:
                    out += _record(f"{var}[{key}]", a, b)
        else:
            out.append(Difference(var, m, i))
    return out


def render_diff(delta: list[Difference], indent: str = "") -> list[str]:
    """The lines of a divergence: `run[n1].mem: model 0, implementation 1`, one per differing field."""
    return [f"{indent}{d}" for d in delta]

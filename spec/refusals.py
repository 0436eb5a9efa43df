"""Which refusals the protocol requires: a refusal probe is *required* or *permitted as a stutter*, derived
from the twin's own action, not listed by hand.

A refusal probe attempts an instance (names.ATTEMPTS) the twin does not enable; the server must not change
the mapped state. Whether it may still *answer* "taken" depends on what the action would have done: a
heartbeat on a fresh lease would renew the lease to where it already is, so a server that accepts it and
changes nothing is not wrong; an Acquire of a claim that is not free would insert a second claim, so an
acceptance is a lie the caller acts on (it runs without the claim), whatever the rows say.

The derivation reads the twin's action (`spec.model`, `spec.input_actions`): each refusal in its function
(`if not (A and B ...): return None`, `if X: return None`, at the top or nested) is split into its
conjuncts, and the action is run again with one conjunct relaxed at a time (made to hold). The probe is permitted as a
stutter when the action itself changes nothing here (the twin leaves such an instance out of its edges),
or when relaxing exactly one conjunct, all others holding, lets the action run and it lands on the same
state: that conjunct refused only an effect already in place. Otherwise it is required: more than one
conjunct refuses it, or a refusal inside a helper the action calls does (a fence such as Acquire's
insert-only claim), or relaxed it would change the state. `classify` says which, and why.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from functools import lru_cache

from . import model as M
from . import names as N

REQUIRED, STUTTER = "required", "permitted as a stutter"


@dataclass(frozen=True)
class Verdict:
    kind: str  # REQUIRED or STUTTER
    why: str  # the conjunct relaxed and what the action would do, in one line

    @property
    def required(self) -> bool:
        return self.kind == REQUIRED


def _function(name: str):
    return getattr(M, name)


def _args(cfg, name: str, params: tuple) -> tuple:
    """The registry's parameters (names, as a trace writes them) as the twin's function takes them:
    a node or owner (`n`) by its index among nodes then recovery workers, a worker (`r`) by its index."""
    out = []
    for letter, p in zip(N.ACTIONS[name].params, params):
        if letter == "n":
            out.append((cfg.nodes + cfg.recoverers).index(p))
        elif letter == "r":
            out.append(cfg.recoverers.index(p))
        else:
            out.append(p)
    return tuple(out)


def _is_refusal(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.If) and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Return)
            and (stmt.body[0].value is None or (isinstance(stmt.body[0].value, ast.Constant)
                                                and stmt.body[0].value.value is None)) and not stmt.orelse)


def _conjuncts(test: ast.expr) -> list[tuple[list, int, ast.expr, bool]]:
    """(container, index, expression, value that relaxes it) for each conjunct of a guard's test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        if isinstance(inner, ast.BoolOp) and isinstance(inner.op, ast.And):
            return [(inner.values, k, v, True) for k, v in enumerate(inner.values)]
        return [(test, "operand", inner, True)]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [(test.values, k, v, False) for k, v in enumerate(test.values)]
    return [(None, "test", test, False)]


def _refusals(fdef: ast.FunctionDef) -> list[ast.If]:
    """Every `if ...: return None` of the function, in source order (top-level guards and nested ones)."""
    return sorted((n for n in ast.walk(fdef) if _is_refusal(n)), key=lambda n: (n.lineno, n.col_offset))


@lru_cache(maxsize=None)
def variants(name: str) -> tuple[tuple[str, object], ...]:
    """The action's function once per conjunct of each of its refusals, that conjunct relaxed: (its
    source, the function)."""
    fn = _function(name)
    source = textwrap.dedent(inspect.getsource(fn))
    (fdef,) = ast.parse(source).body
    out = []
    for g, guard in enumerate(_refusals(fdef)):
        for c in range(len(_conjuncts(guard.test))):
            (copy,) = ast.parse(source).body
            stmt = _refusals(copy)[g]
            container, index, expr, value = _conjuncts(stmt.test)[c]
            relaxed = ast.Constant(value)
            if container is None:
                stmt.test = relaxed
            elif isinstance(container, list):
                container[index] = relaxed
            else:
                container.operand = relaxed
            module = ast.fix_missing_locations(ast.Module([copy], []))
            scope: dict = {}
            exec(compile(module, inspect.getsourcefile(fn), "exec"), fn.__globals__, scope)  # noqa: S102 - the twin's own source
            out.append((ast.unparse(expr), scope[fdef.name]))
    return tuple(out)


def classify(cfg, st: M.State, name: str, params: tuple) -> Verdict:
    """Required or permitted as a stutter: a refusal probe of `name(params)` at `st` (the twin does not
    enable it as an edge: it is disabled, or it changes nothing)."""
    args = _args(cfg, name, params)
    if _function(name)(cfg, st, *args) == st:
        return Verdict(STUTTER, f"{name} changes nothing here")
    for source, fn in variants(name):
        try:
            nxt = fn(cfg, st, *args)
        except Exception:  # noqa: BLE001 - a relaxed guard may let the action read what is not there
            continue
        if nxt is None:
            continue
        if nxt == st:
            return Verdict(STUTTER, f"only `{source}` refuses it, and relaxed the action changes nothing")
        changed = [v for v in M.VARIABLES if getattr(nxt, v) != getattr(st, v)]
        return Verdict(REQUIRED, f"relaxed `{source}`, the action would change {', '.join(changed)}")
    return Verdict(REQUIRED, "more than one conjunct of its guard refuses it, or a fence below them")

"""The twin's guard mutants, derived from its code with `ast`: each conjunct of an action's guard, and each
fence predicate (and each conjunct of it), dropped in turn.

Why derived, not listed: the twin changes (new actions, spans, fences), and a hand-kept list of mutants
would go stale without a word. So the mutants are read off the action functions that `spec.model.successors`
calls (one per registry action, found through `spec.model`, wherever the function lives):

- a **guard** is an `if T:` whose body is `return None` or `continue` (the action is not enabled; in a
  boolean helper, `return False`). Its conjuncts are those of the enabling condition `not T`, by De Morgan
  (`not (A and B)` gives A and B, `A or B` gives `not A` and `not B`); dropping one replaces it with the
  value that makes it hold. A guard with no conjunct (its enabling condition is a disjunction) is dropped
  whole.
- a **fence** is an `if` (or `x if T else y`) whose test calls a fence predicate: `fenced`, `ordinary_ok`,
  or a protocol hook that reads a claim's owner or calls them (spec/hooks.py, read the same way). `if not
  X:` fails the fence in its body, `if X:` passes it; either way the fence's conjuncts are made to hold.
- a conjunct that reads only the configuration (`'crash' in cfg.faults`, `cfg.steering`) is a feature's
  switch, not a guard, and is not mutated (`_switch`).
- a conjunct that calls a helper of the twin (spec/, not an action) or a hook (`cfg.hooks.h`) is also
  expanded: the helper's own conjuncts are dropped in turn, at that call site only (a mutated copy of the
  helper is called there), up to MAX_DEPTH calls deep. A helper called as a statement or returned whose
  body has guards (`_acquire`) or fences (`_publish_terminal`, the terminal Step events' fence) is expanded
  the same way.

A mutant's id names the action, the helpers on the way and the conjunct as the code writes it
(`Renew/_runner_at: not r.intr`), so ids survive moved lines. Mutants run with no defect switched on: a
hook is expanded as the protocol writes it (spec/hooks.py).
"""

from __future__ import annotations

import ast
import copy
import contextlib
import functools
import inspect
import itertools
import sys
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path

from spec import configs
from spec import hooks as P
from spec import model as M
from spec import names as N
from spec.actions import _argument

MAX_DEPTH = 3  # calls from an action down to the conjunct dropped
FENCE_CALLS = ("fenced", "ordinary_ok")  # spec.state's fence predicates: exact claim identity, a live lease
CALLEE = "__mutant_callee"  # the name a mutated call site calls its mutated helper by


@dataclass(frozen=True)
class Mutant:
    id: str  # `Action[/helper...]: conjunct`
    action: str
    kind: str  # guard | fence
    where: str  # file:line of the conjunct dropped
    chain: tuple  # ((function, call node index), ..., (function, conjunct node index, value))


# ---------------------------------------------------------------- reading the twin

@functools.lru_cache(maxsize=None)
def _tree(fn) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]


def _nodes(fn) -> list[ast.AST]:
    return list(ast.walk(_tree(fn)))


def _where(fn, node: ast.AST) -> str:
    path = Path(inspect.getsourcefile(fn)).resolve()
    try:
        path = path.relative_to(Path(M.__file__).resolve().parents[1])
    except ValueError:
        pass
    return f"{path}:{inspect.getsourcelines(fn)[1] + node.lineno - 1}"


def actions() -> dict[str, types.FunctionType]:
    """The registry's actions as `spec.model` binds them now (a test may have swapped one in)."""
    return {name: getattr(M, name) for name in N.ACTIONS}


@functools.lru_cache(maxsize=None)
def fence_hooks() -> frozenset[str]:
    """The protocol's hooks that are fences: they compare a claim's owner or call a fence predicate."""
    out = set()
    for name, fn in vars(P).items():
        if isinstance(fn, types.FunctionType) and fn.__module__ == P.__name__:
            text = ast.unparse(_tree(fn))
            if ".owner" in text or any(f"{c}(" in text for c in FENCE_CALLS + ("sup_holds",)):
                out.add(name)
    return frozenset(out)


def _callee(fn, call: ast.AST):
    """The twin's function a call reaches: a helper of spec/ by name, or a hook through `cfg.hooks`."""
    if not isinstance(call, ast.Call):
        return None
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and f.value.attr == "hooks":
        hook = getattr(P, f.attr, None)
        return hook if isinstance(hook, types.FunctionType) else None
    if isinstance(f, ast.Name):
        target = fn.__globals__.get(f.id)
        if (isinstance(target, types.FunctionType) and target.__module__.startswith("spec.")
                and target.__name__ not in N.ACTIONS):
            return target
    return None


def _is_fence(fn, test: ast.AST) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in FENCE_CALLS:
                return True
            if isinstance(f, ast.Attribute) and f.attr in fence_hooks():
                return True
    return False


def _returns(body: list, value) -> bool:
    if len(body) != 1:
        return False
    s = body[0]
    if value == "continue":
        return isinstance(s, ast.Continue)
    returned = None if not isinstance(s, ast.Return) or s.value is None else s.value
    return isinstance(s, ast.Return) and (returned is None or isinstance(returned, ast.Constant)
                                          and returned.value is value)


def _conjuncts(expr: ast.AST, holds: bool) -> list[tuple[ast.AST, bool]]:
    """The conjuncts of `expr` (holds=True) or of `not expr` (holds=False), by De Morgan: each a node and the
    value that makes it hold (the value a dropped conjunct is replaced with)."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return _conjuncts(expr.operand, not holds)
    if isinstance(expr, ast.BoolOp):
        if isinstance(expr.op, ast.And if holds else ast.Or):
            return [c for v in expr.values for c in _conjuncts(v, holds)]
        return []  # a disjunction of enabling conditions: no conjunct to drop
    return [(expr, holds)]


_INVERSE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
            ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def _label(node: ast.AST, value: bool) -> str:
    """The conjunct as the enabling condition reads: `node`, or its negation (`x != y` for `not x == y`)."""
    if value:
        return ast.unparse(node)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return ast.unparse(ast.Compare(node.left, [_INVERSE[type(node.ops[0])]()], node.comparators))
    text = ast.unparse(node)
    return f"not {text}" if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"not ({text})"


def _switch(leaf: ast.AST) -> bool:
    """A conjunct that reads only the configuration (`'crash' in cfg.faults`, `cfg.admission`): the model's
    switch for a feature, not a guard of the protocol. Dropped, it explores another configuration (the
    feature on where this one has it off), which the feature configurations check as themselves, at the
    cost of an exploration per configuration (a quarter of a whole run): not a mutant."""
    return {n.id for n in ast.walk(leaf) if isinstance(n, ast.Name)} <= {"cfg", "N"}


def _sites(fn, polarity: bool | None, depth: int, seen: frozenset):
    """(kind, chain, label, where) for every conjunct reachable in `fn`. `polarity`: None for an action or a
    state-returning helper; True (False) for a boolean helper whose truth enables (disables) the caller."""
    nodes = _nodes(fn)
    index = {id(n): i for i, n in enumerate(nodes)}
    for node in nodes:
        tests = []
        if isinstance(node, ast.If):
            if _returns(node.body, None) or _returns(node.body, "continue") or (
                    polarity is not None and _returns(node.body, not polarity)):
                tests.append(("guard", node.test, False))  # the body disables: its test must not hold
            elif _is_fence(fn, node.test):
                negated = isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
                tests.append(("fence", node.test, not negated))
        elif isinstance(node, ast.IfExp) and _is_fence(fn, node.test):
            tests.append(("fence", node.test, True))
        elif isinstance(node, ast.Return) and polarity is not None and not isinstance(node.value, (ast.Constant,
                                                                                                   type(None))):
            tests.append(("guard", node.value, polarity))
        elif isinstance(node, ast.Call) and polarity is None and depth < MAX_DEPTH:
            helper = _callee(fn, node)
            if helper is not None and helper not in seen and any(
                    isinstance(n, ast.If) and (_returns(n.body, None) or _is_fence(helper, n.test))
                    for n in _nodes(helper)):
                for kind, chain, label, where in _sites(helper, None, depth + 1, seen | {helper}):
                    yield kind, ((fn, index[id(node)]),) + chain, f"{helper.__name__}/" + label, where
        for kind, test, holds in tests:
            found = _conjuncts(test, holds)
            if not found and kind == "guard" and not isinstance(node, ast.Return):
                found = [(test, holds)]  # the guard dropped whole
            whole = found == [(test, holds)] and not _conjuncts(test, holds)
            for leaf, value in found:
                if _switch(leaf):
                    continue
                label = f"the guard `if {ast.unparse(test)}` dropped" if whole else _label(leaf, value)
                yield kind, ((fn, index[id(leaf)], value),), ": " + label, _where(fn, leaf)
                helper = _callee(fn, leaf)
                if helper is not None and helper not in seen and depth < MAX_DEPTH:
                    for _k, chain, label, where in _sites(helper, value, depth + 1, seen | {helper}):
                        yield kind, ((fn, index[id(leaf)]),) + chain, f"{helper.__name__}/" + label, where


def derive() -> list[Mutant]:
    """Every guard mutant of the twin, in the registry's order of actions."""
    out, ids = [], set()
    for name, fn in actions().items():
        for kind, chain, label, where in _sites(fn, None, 0, frozenset({fn})):
            mid = f"{name}/{label}".replace("/: ", ": ")
            base, k = mid, 2
            while mid in ids:
                mid, k = f"{base} #{k}", k + 1
            ids.add(mid)
            out.append(Mutant(mid, name, kind, where, chain))
    return out


# ---------------------------------------------------------------- applying one

class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, new: ast.AST):
        self.target, self.new = target, new

    def generic_visit(self, node):
        if node is self.target:
            return self.new
        return super().generic_visit(node)


def _compile(fn, target_index: int, new: ast.AST, extra: dict) -> types.FunctionType:
    tree = copy.deepcopy(_tree(fn))
    target = list(ast.walk(tree))[target_index]
    tree = _Replace(target, new).visit(tree)
    tree.decorator_list = []
    module = ast.fix_missing_locations(ast.Module(body=[tree], type_ignores=[]))
    scope = dict(fn.__globals__, **extra)
    local: dict = {}
    exec(compile(module, f"<mutant of {fn.__qualname__}>", "exec"), scope, local)  # noqa: S102 - the twin's own code
    return local[fn.__name__]


def mutated(m: Mutant) -> types.FunctionType:
    """The action with the mutant's conjunct dropped (and a mutated copy of each helper on the way)."""
    fn, index, value = m.chain[-1]
    built = _compile(fn, index, ast.Constant(value), {})
    for fn, index in reversed(m.chain[:-1]):
        call = copy.deepcopy(list(ast.walk(_tree(fn)))[index])
        call.func = ast.Name(CALLEE, ast.Load())
        built = _compile(fn, index, call, {CALLEE: built})
    return built


def _domain(cfg: M.Config, st: M.State, action: N.Action):
    """Every registry parameter tuple of `action` at `st` (inputs: those queued, and each as pending)."""
    values = {"r": cfg.recoverers, "s": cfg.sessions, "e": range(1, cfg.max_exec + 1),
              "w": range(1, cfg.wake_rows + 1), "k": range(1, cfg.wakers + 1), "d": N.DIGESTS,
              "f": N.CONTINUATION_FLAWS,
              "n": cfg.nodes + cfg.recoverers if action.actor in ("node", "fault") else cfg.nodes,
              "i": sorted(st.inputs | {i._replace(state="pending") for i in st.inputs})}
    return itertools.product(*(values[letter] for letter in action.params))


def offered_everywhere(name: str, fn, errors: list | None = None) -> callable:
    """`spec.model.successors` with the mutated action also tried on every parameter tuple, at every state.
    Why: Next offers an actor only the actions its pc can enable (spec.model._RUNNER_BY_PC and the
    finalizer's, the workers' and the inputs' dispatch), a copy of each guard's first conjunct made for
    speed; dropping that conjunct in the action alone would change nothing. The TLA+ has no such copy.
    With `errors` (tolerant), a state where some action raises (the mutant led the twin where it never
    meant to go) is a dead end, as it is an error for TLC, and what was raised is kept there."""
    action = N.ACTIONS[name]

    def successors(cfg, st):
        try:
            out = list(M.successors(cfg, st))
        except Exception as exc:  # noqa: BLE001 - only with `errors`: recorded, never hidden
            if errors is None:
                raise
            errors.append(f"{type(exc).__name__}: {exc}")
            return iter(())
        seen = {p for a, p, _ in out if a == name}
        for params in _domain(cfg, st, action):
            if params not in seen:
                nxt = fn(cfg, st, *[_argument(cfg, action, k, v) for k, v in zip(action.params, params)])
                if nxt is not None and nxt != st:
                    out.append((name, params, nxt))
        return iter(out)
    return successors


@dataclass(frozen=True)
class Applied:
    action: str
    original: types.FunctionType
    function: types.FunctionType  # the mutated action
    successors: callable  # Next with it (offered_everywhere)
    errors: list  # tolerant: what the mutated action raised (it is disabled where it raises)

    def same_at(self, cfg: M.Config, st: M.State) -> bool:
        """The mutated action does at `st` what the twin's does, for every parameter tuple (a raise propagates:
        the mutant cannot run there)."""
        if self.action not in configs.possible_actions(cfg):
            return True  # the configuration leaves the action's feature off: Next never offers it here
        action = N.ACTIONS[self.action]
        for params in _domain(cfg, st, action):
            args = [_argument(cfg, action, k, v) for k, v in zip(action.params, params)]
            a, b = self.original(cfg, st, *args), self.function(cfg, st, *args)
            if (None if a == st else a) != (None if b == st else b):
                return False
        return True


@contextlib.contextmanager
def applied(m: Mutant, tolerant: bool = False):
    """The twin with `m` in place of its action (every spec module's binding of it, and RUNNER_STEPS);
    yields it as `Applied` (the successors function to explore it with: offered_everywhere). `tolerant`:
    where the mutated action raises (a runner step at a pc it never meant to see) it is disabled and the
    error kept in `Applied.errors`, so the rest of the mutant's graph is explored and every invariant it
    breaks elsewhere is found, not only the error."""
    original = actions()[m.action]
    new = raw = mutated(m)
    errors: list[str] = []
    if tolerant:
        @functools.wraps(raw)
        def new(cfg, st, *args):
            try:
                return raw(cfg, st, *args)
            except Exception as exc:  # noqa: BLE001 - the mutant, not the twin: recorded, never hidden
                errors.append(f"{type(exc).__name__}: {exc}")
                return None
    undo = []
    for mod in [v for k, v in sys.modules.items() if k == "spec" or k.startswith("spec.")]:
        for key, value in list(vars(mod).items()):
            if value is original:
                undo.append((mod, key, value))
                setattr(mod, key, new)
    steps = M.RUNNER_STEPS
    M.RUNNER_STEPS = tuple((n, new if f is original else f) for n, f in steps)
    try:
        yield Applied(m.action, original, new, offered_everywhere(m.action, new, errors if tolerant else None),
                      errors)
    finally:
        M.RUNNER_STEPS = steps
        for mod, key, value in undo:
            setattr(mod, key, value)

"""The actor step machine (impl/actor.py): the pc names are the registry's, each actor's table covers its
pcs and takes each of its actions by one method, and no actor can reach its node (no object cycle)."""

from __future__ import annotations

import types

import pytest

from impl import actor as A
from impl.actor import Actor, Step
from impl.clock import ManualClock
from impl.db import Database
from impl.node import Node
from impl.recovery import RecoveryWorker
from impl.results import Ok
from spec import names as N


def _node() -> Node:
    return Node(Database.memory(), ManualClock(), "n1")


def _worker() -> RecoveryWorker:
    return RecoveryWorker(Database.memory(), ManualClock(), "r1")


def _stepped(kind: str) -> set[str]:
    """The registry actions an actor of this kind takes by its own step (RecoveryScan: the worker's too)."""
    return {a.name for a in N.ACTIONS.values()
            if a.actor == kind and (a.name not in N.ATTEMPTS or a.name == "RecoveryScan")}


def test_the_pc_names_are_the_registrys():
    assert set(A.RUNNER_PCS) == set(N.RUNNER_PCS) and len(A.RUNNER_PCS) == len(N.RUNNER_PCS)
    assert set(A.FINALIZER_PCS) == set(N.FINALIZER_PCS)
    assert set(A.RECOVERY_PCS) == set(N.RECOVERY_PCS)


def test_a_misspelt_pc_is_an_error():
    assert A._pc("settle", N.FINALIZER_PCS) == "settle"
    with pytest.raises(KeyError):
        A._pc("cleared", N.FINALIZER_PCS)
    with pytest.raises(KeyError):
        A._pc("stopped", N.RUNNER_PCS, N.FINALIZER_PCS)  # a runner's pc, not every actor's


@pytest.mark.parametrize("kind,pcs,rest", [("runner", A.RUNNER_PCS, {A.IDLE}),
                                           ("finalizer", A.FINALIZER_PCS, {A.IDLE}),
                                           ("recovery", A.RECOVERY_PCS, set())])
def test_each_table_covers_its_pcs_and_takes_each_action_by_one_method(kind, pcs, rest):
    node = _node()
    actor = {"runner": node.runner, "finalizer": node.finalizer, "recovery": _worker()}[kind]
    assert set(actor.table) == set(pcs) - rest  # at rest (idle) a runner or finalizer takes nothing
    assert set(actor.takes) == _stepped(kind)
    assert all(isinstance(actor.takes[s.action], types.MethodType) for steps in actor.table.values() for s in steps)


class _Stand(Actor):
    """A two-pc stand-in: `a` steps to `b` unless `held`; `b` steps back."""

    def __init__(self, table=None):
        self.pc, self.held, self.ran = "a", False, []
        super().__init__(table or {"a": (Step("Hold", self._hold, lambda: self.held), Step("Go", self._go)),
                                   "b": (Step("Back", self._back),)})

    def _hold(self):
        self.ran.append("hold")
        return Ok()

    def _go(self):
        self.pc = "b"
        self.ran.append("go")
        return Ok("went")

    def _back(self):
        self.pc = "a"
        return Ok()


def test_the_first_step_whose_guard_holds_is_taken():
    s = _Stand()
    assert s.enabled() == "Go" and s.step() == "Go" and s.pc == "b" and s.last == Ok("went")
    s.step()
    s.held = True
    assert s.step() == "Hold" and s.pc == "a" and s.ran == ["go", "hold"]
    s.pc = "elsewhere"
    assert s.enabled() is None and s.step() is None


def test_one_action_taken_by_two_methods_is_refused():
    def other():
        return Ok()
    with pytest.raises(ValueError, match="Go by two methods"):
        _Stand({"a": (Step("Go", other),), "b": (Step("Go", lambda: Ok()),)})


def test_a_stand_in_enabled_still_runs_the_tables_method(monkeypatch):
    """step() runs the method the table gives for whatever `enabled()` names (so a test can force one)."""
    s = _Stand()
    monkeypatch.setattr(_Stand, "enabled", lambda self: "Hold")
    assert s.step() == "Hold" and s.ran == ["hold"] and s.pc == "a"


def test_run_to_completion_stops_a_machine_that_never_settles():
    s = _Stand()
    with pytest.raises(RuntimeError, match="did not finish in 4 steps"):
        s.run_to_completion(max_steps=4)


# ---------------------------------------------------------------- no cycle

_LEAVES = (type, types.ModuleType, str, bytes, int, float, bool, type(None))


def _reaches(root, target) -> bool:
    """Whether `target` is reachable from `root` through impl/ objects' attributes, containers, bound
    methods and closures (not through classes, modules or a function's globals)."""
    seen, stack = set(), [root]
    while stack:
        o = stack.pop()
        if o is target:
            return True
        if id(o) in seen or isinstance(o, _LEAVES):
            continue
        seen.add(id(o))
        if isinstance(o, types.MethodType):
            stack += [o.__self__, o.__func__]
        elif isinstance(o, types.FunctionType):
            stack += [c.cell_contents for c in o.__closure__ or ()] + list(o.__defaults__ or ())
        elif isinstance(o, dict):
            stack += list(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack += list(o)
        elif type(o).__module__.startswith("impl.") and hasattr(o, "__dict__"):
            stack += list(vars(o).values())
    return False


def test_no_actor_reaches_its_node():
    node = _node()
    assert _reaches(node, node.runner) and _reaches(node, node.finalizer)  # the walk does find what is there
    assert _reaches(node.finalizer, node.runner)  # the finalizer knows the runner it waits for
    assert not _reaches(node.runner, node)
    assert not _reaches(node.finalizer, node)
    assert not _reaches(node.runner, node.finalizer)  # the runner knows only Settling


def test_the_cycle_check_fails_on_a_planted_back_reference():
    node = _node()
    node.runner.back = node  # a stand-in of `self.node`
    assert _reaches(node.runner, node) and _reaches(node.finalizer, node)
    node = _node()
    node.runner.waits = lambda: node.finalizer.holds(1)  # a closure over the node is a back reference too
    assert _reaches(node.runner, node)

"""The bundled server's action table: each registry action and the call that makes the bundled server
take it, on a `binding.world.World`. Replay, lockstep, the exhaustive walk and the kill matrix reach it
through `binding.world.Scheduler` (the port's World), and the driver (binding/driver.py) through the
same, so adding an action is one entry here and one in `spec/actions.py` (the twin's table).

Two kinds of entry: an ATTEMPT (names.ATTEMPTS: the caller chooses the parameters; the call returns the
implementation's answer, truthy when taken) and a STEP (an actor moves one atomic unit; the call returns
the name of the action the actor took, which must be the one asked for). `MOVE` asks an actor for its
next step without naming one (a trace step marked `refused` on an actor's own action).
"""

from __future__ import annotations

from typing import Callable

from impl import faults, ids
from impl.faults import COMMITTED, NOT_COMMITTED
from spec import model as M
from spec import names as N

from harness import registry as R

ATTEMPT, STEP, ENVIRONMENT = "attempt", "step", "environment"


def input_id(i: M.Input) -> str:
    if i.kind == "prompt":
        return ids.prompt_id(i.sess, i.src)
    if i.flaw == "id":  # a forged row's id is not derived from (Session, execution)
        return ids.forged_continuation_id(i.sess, i.src)
    return ids.continuation_id(i.sess, i.src) if i.gen == 0 else ids.minted_continuation_id(i.sess, i.src, i.gen)


def digest(i: M.Input, d: str) -> str:
    """The content digest a retry of input id i sends: the admitted content's (`ids.content_digest`), or
    another's (the twin's digest name itself)."""
    return ids.content_digest(input_id(i)) if d == N.ADMITTED else d


def _runner_step(w, params, decision=None, fragment=None):
    runner = w.node(params[0]).runner
    if decision is not None:  # the provider's answer decides which terminal the Step publishes
        w.provider.decide(runner.execution_id, decision)
    if fragment is not None:  # and whether its stream opens with a partial fragment
        w.provider.open_fragment(runner.execution_id, fragment)
    return runner.step()


def _publication_fails(w, params, fault):
    """The environment's publication fault: the runner's next publication's transaction fails (a failed
    Step.Ended is of a Step whose provider ended it; a failed Step.Started, of a stream with no fragment)."""
    runner = w.node(params[0]).runner
    if fault == R.STEP_ENDED_FAILS:
        w.provider.decide(runner.execution_id, "end")
    if fault == R.STEP_STARTED_FAILS:
        w.provider.open_fragment(runner.execution_id, False)
    took = runner.fail_next_publication(fault)
    if runner.fail_publication:  # the move must spend the fault: left set, the next publication would fail too
        runner.fail_publication = False
        raise RuntimeError(f"runner {params[0]}'s move left the publication fault set: its next publication would "
                           "fail too")
    return took


def wake_item(w: int) -> str:
    """The implementation's wake-row item of the twin's row w (the Session it stands for)."""
    return f"w{w}"


def _took(name, result):
    """A step the implementation reports by its result: the action's name when it happened."""
    return name if result else result


def _actor(w, who):
    return w.node(who) if who in w.nodes else w.worker(who)


IMPL: dict[str, tuple[str, Callable]] = {
    R.ACQUIRE: (ATTEMPT, lambda w, p: w.node(p[0]).acquire(input_id(p[1]))),
    R.PROMOTE_CONTINUATION: (ATTEMPT, lambda w, p: w.node(p[0]).promote(input_id(p[1]))),
    R.CANCEL_REQUEST: (ATTEMPT, lambda w, p: w.node(p[0]).cancel(p[1])),
    R.HEARTBEAT: (ATTEMPT, lambda w, p: w.node(p[0]).heartbeat(p[1]) if p[0] in w.nodes
                  else w.worker(p[0]).heartbeat(p[1])),
    R.RECOVERY_SCAN: (ATTEMPT, lambda w, p: w.worker(p[0]).scan(p[1])),
    R.ADMIT: (ATTEMPT, lambda w, p: w.admit(p[0])),
    R.EXACT_RETRY: (ATTEMPT, lambda w, p: w.any_node.inputs.exact_retry(p[0], input_id(p[1]), digest(p[1], p[2]))),
    R.RESUME: (ATTEMPT, lambda w, p: w.node(p[0]).resume(p[1])),  # the drain: the next Acquire
    R.STEER: (ATTEMPT, lambda w, p: w.node(p[0]).runner.steer(input_id(p[1]))),
    **{name: (STEP, _runner_step) for name in R.RUNNER_ACTIONS if name not in N.ATTEMPTS},
    R.OPEN_FRAGMENT: (STEP, lambda w, p: _runner_step(w, p, fragment=True)),
    R.PUBLISH_STEP_STARTED: (STEP, lambda w, p: _runner_step(w, p, fragment=False)),
    R.PUBLISH_STEP_FAILED: (STEP, lambda w, p: _runner_step(w, p, "fail")),
    R.PUBLISH_STEP_ENDED: (STEP, lambda w, p: _runner_step(w, p, "end")),
    R.TOOL_START: (STEP, lambda w, p: _runner_step(w, p, "end")),
    **{name: (ENVIRONMENT, lambda w, p, name=name: _publication_fails(w, p, name))
       for name in (R.TOOL_SUCCESS_FAILS, R.STEP_STARTED_FAILS, R.STEP_ENDED_FAILS, R.HOSTED_RECONCILE_FAILS)},
    R.LISTENER_HANGS: (ENVIRONMENT, lambda w, p: w.node(p[0]).runner.hang_listener()),
    **{name: (STEP, lambda w, p: w.node(p[0]).finalizer.step())
       for name in R.FINALIZER_ACTIONS if name not in N.ATTEMPTS},
    **{name: (STEP, lambda w, p: w.worker(p[0]).step())
       for name in R.RECOVERY_ACTIONS if name not in N.ATTEMPTS},
    R.SUPERVISE: (STEP, lambda w, p: w.node(p[0]).supervise()),
    R.TICK: (ENVIRONMENT, lambda w, p: w.tick()),
    R.CRASH: (ENVIRONMENT, lambda w, p: _actor(w, p[0]).crash()),
    R.CORRUPT_RECOVERY_ROW: (ENVIRONMENT, lambda w, p: faults.corrupt_recovery_row(w.db, *p)),
    R.FORGE_CONTINUATION: (ENVIRONMENT, lambda w, p: faults.forge_continuation(w.db, *p)),
    R.RECOVERY_CONVERT_ACK_LOST: (ENVIRONMENT, lambda w, p: w.worker(p[0]).convert(lose_ack=COMMITTED)),
    R.RECOVERY_CONVERT_FAILS: (ENVIRONMENT, lambda w, p: w.worker(p[0]).convert(lose_ack=NOT_COMMITTED)),
    # the wake rows: the World's ordinary wake queue, row w as item wake_item(w) ranked w
    R.WAKE_ARRIVE: (STEP, lambda w, p: _took(R.WAKE_ARRIVE, w.wakes.arrive(wake_item(p[0]), p[0]))),
    R.WAKE_SCAN: (STEP, lambda w, p: _took(R.WAKE_SCAN, w.wakes.scan())),
    R.WAKE_READ: (STEP, lambda w, p: _took(R.WAKE_READ, w.wakers[p[0] - 1].read())),
    R.WAKE_RESERVE: (STEP, lambda w, p: _took(R.WAKE_RESERVE, w.wakers[p[0] - 1].reserve())),
    R.WAKE_SERVE: (STEP, lambda w, p: _took(R.WAKE_SERVE, w.wakes.serve(wake_item(p[0])))),
    R.WAKE_LOST: (STEP, lambda w, p: _took(R.WAKE_LOST, w.wake_lost(p[0]) if w.tied_session
                                           else w.wakes.release(wake_item(p[0])))),
    # tied wake rows (WakesTied): row 1 the Session's ordinary wake queue, row 2 its recovery wake queue
    R.WAKE_SYNC: (STEP, lambda w, p: _took(R.WAKE_SYNC, w.wake_sync(p[0]))),
    R.WAKE_SCAN_QUEUE: (STEP, lambda w, p: _took(R.WAKE_SCAN_QUEUE, w.tied_queue(p[0]).scan())),
    R.WAKE_ACQUIRE: (STEP, lambda w, p: _took(R.WAKE_ACQUIRE, w.wake_take(p[0], p[1], 1, input_id(p[2])))),
    R.WAKE_PROMOTE: (STEP, lambda w, p: _took(R.WAKE_PROMOTE, w.wake_take(p[0], p[1], 2, input_id(p[2])))),
}

# the actor a scheduler asks to move (by names.Action.actor, names.STEPPING_ACTORS) and its production
# step: the call returns the name of the action the actor took, None when it took none
MOVE: dict[str, Callable] = {
    "runner": lambda w, who: w.node(who).runner.step(),
    "finalizer": lambda w, who: w.node(who).finalizer.step(),
    "recovery": lambda w, who: w.worker(who).step(),
    "supervisor": lambda w, who: w.node(who).supervise(),
}

assert set(MOVE) == set(N.STEPPING_ACTORS)
assert set(IMPL) == set(N.ACTIONS), "the implementation's table must cover the registry's actions exactly"
assert {n for n, (kind, _) in IMPL.items() if kind == ATTEMPT} == set(N.ATTEMPTS)

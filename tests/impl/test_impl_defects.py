"""Every known defect: one scenario, run with the switch off (the correct behaviour) and on (the
defective behaviour the reviews describe). The table must cover spec.names.DEFECTS exactly."""

import pytest

from impl import ids
from impl import faults
from impl.faults import NOT_COMMITTED
from impl import registry as R
from implkit import World, acquire_next, wake_rows
from spec import names as N

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)


def step_started_window(defects):
    """Cancel between Step.Started's commit and its return (the listener gate holds)."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    for _ in range(3):
        node.runner.step()
    assert node.runner.pc == "started"
    node.cancel("s1")
    for _ in range(5):  # the runner stops; the finalizer settles, or (the defect) keeps retrying
        node.runner.step(), node.finalizer.step()
    snap = w.snap()
    claim = snap.claims.get("s1")
    return (snap.kinds(), snap.count("Started"), claim and claim.phase, node.finalizer.pc)


def flush_without_assistant(defects):
    """Cancel while the stream's partial fragment is open and no Step.Started was published (R000-v18-flush)."""
    w = World(defects=defects, fragments=1)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    w.provider.open_fragment(1, True)
    for _ in range(3):
        node.runner.step()
    assert (node.runner.pc, node.runner.mem, node.runner.active) == ("streaming", None, True)
    node.cancel("s1")
    for _ in range(5):  # the runner stops; the finalizer flushes and settles, or (the defect) keeps retrying
        node.runner.step(), node.finalizer.step()
    snap = w.snap()
    claim = snap.claims.get("s1")
    return (snap.kinds(), claim and claim.phase, node.finalizer.pc)


def step_failed_duplicate_interrupt(defects):
    """Cancel after Step.Failed committed while its listener is blocked."""
    w = World(defects=defects)
    w.provider.decide(1, "fail")
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    for _ in range(5):
        node.runner.step()
    assert node.runner.pc == "failed"
    node.cancel("s1")
    node.run_to_completion()
    snap = w.snap()
    return (snap.kinds(), sorted(snap.claims), sorted(snap.recovery))


def cross_session_recovery_collision(defects):
    """A malformed Session-B recovery row shares Session A's execution id."""
    w = World(sessions=("A", "B"), defects=defects)
    node = w.node()
    node.acquire(w.prompt["A", 1])
    e = node.runner.execution_id
    node.crash()
    from impl import faults
    faults.corrupt_recovery_row(w.db, "B", e)
    w.tick()
    w.worker().run_once()
    cont = ids.continuation_id("A", e)
    ordinary = bool(w.node("n2").acquire(cont))  # can ordinary selection take A's continuation?
    snap = w.snap()
    return ("A" in snap.claims and snap.claims["A"].execution == e, (e, "A") in snap.recovery,
            [i.state for i in snap.inputs if i.kind == "cont"], ordinary)


def unsupervised_cancel_heartbeat(defects):
    """Cancel; the heartbeat dies; the finalizer is blocked; the lease expires; recovery takes over."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.runner.step(), node.runner.step()
    node.cancel("s1")  # the runner has not stopped yet: the finalizer is blocked behind it
    overlaps = []
    w.boundaries.install(lambda name, ctx: overlaps.append(node.finalizer.pc != "idle")
                         if name == R.B_RECOVERY_TAKEN_OVER else None)
    w.tick()
    w.supervise()
    worker = w.worker()
    worker.step(), worker.step()  # RecoveryScan, then RecoveryTakeover
    return (overlaps, node.finalizer.pc)


def _lose_lease_of(w: World, session: str) -> None:
    """Every conversion of `session` loses its lease: the worker pauses right after its takeover."""
    w.boundaries.install(lambda name, ctx: w.clock.advance(1)
                         if name == R.B_RECOVERY_TAKEN_OVER and ctx["session"] == session else None)


def silent_quarantine_noop(defects):
    """Conversion of s1 keeps losing its lease (its attempts run out), with a scan window of one row."""
    w = World(sessions=("s1", "s2"), defects=defects, scan_bound=1, max_tries=2)
    n1, n2 = w.node("n1"), w.node("n2")
    n1.acquire(w.prompt["s1", 1])
    n1.crash()
    n2.acquire(w.prompt["s2", 1])
    n2.crash()
    _lose_lease_of(w, "s1")
    w.tick()
    passes = []
    for _ in range(3):
        passes += [(h.session_id, h.outcome) for h in w.worker().run_once()]
        w.tick()
    snap = w.snap()
    return (passes, snap.claims["s1"].recovery_error is not None, "s2" in snap.claims)


def scan_window_ignores_fresh_share(defects):
    """Two poison claims (s1, s2: conversions that lose their lease) ahead of a fresh s3, a window of two."""
    w = World(sessions=("s1", "s2", "s3"), defects=defects, scan_bound=2, max_tries=2)
    for k, s in enumerate(("s1", "s2", "s3"), 1):
        node = w.node("n1" if k != 2 else "n2")  # a crashed node starts again empty
        node.acquire(w.prompt[s, 1])
        node.crash()
    w.boundaries.install(lambda name, ctx: w.clock.advance(1)
                         if name == R.B_RECOVERY_TAKEN_OVER and ctx["session"] in ("s1", "s2") else None)
    w.tick()
    first = [(h.session_id, h.outcome) for h in w.worker().run_once()]
    w.tick()
    second = [(h.session_id, h.outcome) for h in w.worker().run_once()]
    return (first, second, "s3" in w.snap().claims)


def cancellation_quarantine_strands(defects):
    """The finalizer was supervised away with the claim cancelling; recovery finds the expired claim."""
    w = World(defects=defects)
    w.node().acquire(w.prompt["s1", 1])
    w.node().cancel("s1")
    w.tick()
    w.supervise()
    outcomes = [h.outcome for h in w.worker().run_once()]
    snap = w.snap()
    return (outcomes, "s1" in snap.claims, (1, "s1") in snap.cancelled)


def recovery_retries_unbounded(defects):
    """Conversion keeps losing its lease; one attempt is the bound."""
    w = World(defects=defects, max_tries=1)
    w.node().acquire(w.prompt["s1", 1])
    w.node().crash()
    _lose_lease_of(w, "s1")
    passes = []
    for _ in range(3):
        w.tick()
        passes += [(h.session_id, h.outcome) for h in w.worker().run_once()]
    return (passes, w.snap().claims["s1"].recovery_error is not None)


def recovery_input_excluded_everywhere(defects):
    """Recovery converted s1's execution; a node promotes its continuation."""
    w = World(defects=defects)
    w.node().acquire(w.prompt["s1", 1])
    w.node().crash()
    w.tick()
    w.worker().run_once()
    result = w.node("n2").promote(ids.continuation_id("s1", 1))
    return (type(result).__name__, next(i.state for i in w.snap().inputs if i.kind == "cont"))


def memory_before_publish(defects):
    """Step.Started's publication fails (the lease ran out while streaming)."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.runner.step(), node.runner.step()
    w.tick()
    node.runner.step()
    snap = w.snap()
    return (node.runner.pc, node.runner.mem, snap.events)


def acquire_overwrites_expired(defects):
    """Another node selects a prompt for a Session whose claim has expired."""
    w = World(prompts=2, defects=defects)
    w.node("n1").acquire(w.prompt["s1", 1])
    w.node("n1").crash()
    w.tick()
    result = w.node("n2").acquire(w.prompt["s1", 2])
    c = w.snap().claims["s1"]
    return (type(result).__name__, c.execution, c.owner)


def renew_after_expiry(defects):
    """The pre-dispatch renewal runs after the lease expired."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    w.tick()
    node.runner.step()
    node.runner.step()
    return (node.runner.pc, len(w.provider.calls), w.snap().claims["s1"].ttl(w.clock.now()))


def recovery_input_in_ordinary_queue(defects):
    """Ordinary selection meets a recovery-owned continuation."""
    w = World(defects=defects)
    w.node().acquire(w.prompt["s1", 1])
    w.node().crash()
    w.tick()
    w.worker().run_once()
    picked = acquire_next(w.node("n2"), "s1")
    return (bool(picked), [i.state for i in w.snap().inputs if i.kind == "cont"])


def unfenced_step_publication(defects):
    """A stale owner publishes Step.Started after recovery took its claim over."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.runner.step(), node.runner.step()
    w.tick()
    w.worker().takeover("s1")
    node.runner.step()
    snap = w.snap()
    return ([(e.kind, e.writer) for e in snap.events], snap.claims["s1"].owner, snap.claims["s1"].assistant)


def _expired_cancellation(defects):
    """Cancel a running execution, then let its lease expire before the finalizer settles."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.cancel("s1")
    w.tick()
    return w


def takeover_overwrites_phase(defects):
    """Recovery takes over an expired cancelling claim: the phase must stay cancelling."""
    w = _expired_cancellation(defects)
    w.worker().takeover("s1")
    c = w.snap().claims["s1"]
    return (c.owner, c.phase)


def _crashed_after_step_started(defects) -> World:
    """n1 crashes after Step.Started (its assistant open) and its lease expires: recovery's to take."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    for _ in range(3):
        node.runner.step()
    node.crash()
    w.tick()
    return w


def conversion_leaves_assistant_open(defects):
    """A node crashes after Step.Started; recovery converts and must interrupt the open assistant."""
    w = _crashed_after_step_started(defects)
    w.worker().run_once()
    snap = w.snap()
    return (snap.kinds(), sorted(snap.claims))


def scan_quarantines_cancellation(defects):
    """The scan meets an expired cancelling claim: only a takeover makes recovery its owner."""
    w = _expired_cancellation(defects)
    worker = w.worker()
    worker.takeover("s1")
    c = w.snap().claims["s1"]
    return (c.owner, c.recovery_error is not None, worker.pc)


def takeover_trusts_scan(defects):
    """Two workers scan the same expired row; the first compare-and-swap wins, the second must lose."""
    w = World(workers=("r1", "r2"), defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.crash()
    w.tick()
    r1, r2 = w.worker("r1"), w.worker("r2")
    r1.scan("s1"), r2.scan("s1")
    won, lost = bool(r1.take()), bool(r2.take())
    return (won, lost, w.snap().claims["s1"].owner, r2.pc)


def heartbeat_extends_lease(defects):
    """A two-tick lease, one tick gone, then the node's heartbeat: the lease is Lease ticks from now."""
    w = World(defects=defects, lease=2)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    w.tick()
    beat = bool(node.heartbeat("s1"))
    again = bool(node.heartbeat("s1"))  # a full lease is not renewed
    return (beat, again, w.snap().claims["s1"].ttl(w.clock.now()))


def _cancel_at_step_started(defects):
    """Cancel between Step.Started's commit and its return; the finalizer settles."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    for _ in range(3):
        node.runner.step()
    assert node.runner.pc == "started"
    node.cancel("s1")
    node.run_to_completion()
    return w


def cancel_restarts_assistant(defects):
    """The step-started window again: the interrupt path must not start the assistant a second time."""
    w = _cancel_at_step_started(defects)
    snap = w.snap()
    return (snap.kinds(), snap.count("Started"), sorted(snap.claims))


def cancel_interrupts_unstarted(defects):
    """Cancel before any Step.Started (the runner is interrupted right after its claim): nothing to interrupt."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.cancel("s1")
    node.run_to_completion()
    snap = w.snap()
    return (snap.kinds(), sorted(snap.claims))


def dispatch_after_failed_renewal(defects):
    """The pre-dispatch renewal fails (the lease expired): the runner must stop before the provider call."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    w.tick()
    renewed = bool(node.runner.step())  # Renew (ran, whatever its outcome)
    node.runner.step()
    return (renewed, node.runner.pc, len(w.provider.calls))


def cancel_requeues_continuation(defects):
    """A cancellation runs to its end: no recovery row, no continuation."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.cancel("s1")
    node.run_to_completion()
    snap = w.snap()
    return (sorted(snap.claims), sorted(snap.cancelled), sorted(snap.recovery),
            [i.state for i in snap.inputs if i.kind == "cont"])


def cancel_trusts_previous_step_memory(defects):
    """Two Steps; cancel between Step 2's Step.Started commit and its return, memory naming Step 1's."""
    w = World(defects=defects, max_steps=2)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    for _ in range(9):  # Step 1 to its end and its return, then Step 2 up to its Step.Started commit
        node.runner.step()
    assert (node.runner.pc, node.runner.mem) == ("started", ids.assistant_id(1, 1))
    node.cancel("s1")
    node.run_to_completion()
    snap = w.snap()
    return ([(e.kind, e.assistant) for e in snap.events if e.kind == "Interrupted"], sorted(snap.claims),
            snap.assistants[ids.assistant_id(1, 2)].completed)


def conversion_retry_mints_new_ids(defects):
    """Recovery's conversion commits, its acknowledgement lost; the continuation is promoted; the retry."""
    w = World(defects=defects)
    w.node().acquire(w.prompt["s1", 1])
    w.node().crash()
    w.tick()
    worker = w.worker()
    worker.takeover()
    worker.reconcile()
    assert worker.convert(lose_ack=True) == R.RECOVERY_CONVERT_ACK_LOST and worker.pc == "reconverting"
    w.node("n2").promote(ids.continuation_id("s1", 1))
    assert worker.step() == R.RECOVERY_RECONVERT
    snap = w.snap()
    return (worker.pc, sorted((i.id, i.state) for i in snap.inputs if i.kind == "cont"), sorted(snap.claims))


def reconvert_replay_leaves_assistant_open(defects):
    """A node crashes after Step.Started; recovery's conversion loses its COMMIT; the retry replays it."""
    w = _crashed_after_step_started(defects)
    worker = w.worker()
    worker.takeover()
    worker.reconcile()
    assert worker.convert(lose_ack=NOT_COMMITTED) == R.RECOVERY_CONVERT_FAILS and worker.pc == "reconverting"
    assert w.snap().kinds() == ["Started"] and not w.snap().recovery  # nothing committed
    assert worker.step() == R.RECOVERY_RECONVERT
    snap = w.snap()
    return (worker.pc, snap.kinds(), sorted(snap.claims), len(snap.recovery))


def conversion_conflicts_on_own_row(defects):
    """The retry of a lost COMMIT meets an expired lease: it replays the keyed writes beside the claim; the next
    takeover's conversion completes them (the defect: reads its own Session's row as a conflict, quarantines)."""
    w = _crashed_after_step_started(defects)
    worker = w.worker()
    worker.takeover()
    worker.reconcile()
    assert worker.convert(lose_ack=NOT_COMMITTED) == R.RECOVERY_CONVERT_FAILS
    w.tick(2)
    assert worker.step() == R.RECOVERY_RECONVERT
    assert len(w.snap().recovery) == 1 and sorted(w.snap().claims) == ["s1"]  # beside the claim
    w.tick(2)
    worker.run_once()
    snap = w.snap()
    return (snap.kinds(), sorted(snap.claims), len(snap.recovery))


def _wake_batch(defects, fresh, retried):
    """`retried` rows woken once and lost, then `fresh` rows arriving: what the next wake scan reserves."""
    w = World(defects=defects)
    for k in range(1, retried + 1):
        w.wakes.arrive(f"w{k}", k)
    if retried:
        w.wakes.scan()
        for k in range(1, retried + 1):
            w.wakes.release(f"w{k}")
    for k in range(retried + 1, retried + fresh + 1):
        w.wakes.arrive(f"w{k}", k)
    return w.wakes.scan().value


def wake_fresh_share_zero(defects):
    """Two retried rows and a fresh one: the batch of two keeps its fresh slot (the defect: retries fill it)."""
    return _wake_batch(defects, fresh=1, retried=2)


def wake_fresh_share_full(defects):
    """A retried row and two fresh ones: the batch keeps a retry slot (the defect: fresh rows fill it)."""
    return _wake_batch(defects, fresh=2, retried=1)


def wake_retry_oldest_first(defects):
    """Two retried rows and fresh work: row w1 is woken as a retry and lost (a poison row), fresh work
    arrives again; the next retry slot goes to w2, whose turn has not come (the defect: to w1 again)."""
    w = World(defects=defects)
    w.wakes.arrive("w1", 1)
    w.wakes.arrive("w2", 2)
    w.wakes.scan()
    w.wakes.release("w1")
    w.wakes.release("w2")
    w.wakes.arrive("w3", 3)
    w.wakes.scan()  # a new round: w1 (retry) and w3 (fresh)
    w.wakes.release("w1")
    w.wakes.serve("w3")
    w.wakes.arrive("w4", 4)
    return w.wakes.scan().value


def wake_reserve_without_cas(defects):
    """Two wakers read row w1 at counter 0; the first reserves it; the second's reservation loses it (the
    defect, updating by item alone, takes it over the first's reservation): (what each won, w1's counter)."""
    from impl.wakes import Waker
    w = World(defects=defects)
    one, two = Waker(w.wakes, "waker1"), Waker(w.wakes, "waker2")
    w.wakes.arrive("w1", 1)
    one.read(), two.read()
    won = (one.reserve().value, two.reserve().value)
    with w.db.read() as conn:
        return won, wake_rows(w.wakes, conn)["w1"]


def wake_serves_regardless(defects):
    """A crash leaves recovery's continuation waiting; the Session's ordinary wake row, woken, redrives it
    (an acquisition of the continuation through the wake, the twin's WakeAcquire naming it): (taken, the
    continuation's state, row left)."""
    w = World(defects=defects)
    w.node().acquire(w.prompt["s1", 1])
    w.node().crash()
    w.tick()
    w.worker().run_once()
    w.wakes.arrive("s1", 1)
    w.wakes.scan()
    took = w.node("n2").acquire(ids.continuation_id("s1", 1), w.wakes)
    with w.db.read() as conn:
        left = sorted(wake_rows(w.wakes, conn))
    return (bool(took), [i.state for i in w.snap().inputs if i.kind == "cont"], left)


def _requests(w) -> int:
    return sum(1 for e in w.snap().events if e.kind == R.REQUESTED)


def exact_retry_appends_twice(defects):
    """A held prompt, its exact retry, the drain, then the same retry again."""
    w = World(defects=defects)
    node = w.node()
    pid = node.inputs.admit_prompt("s1", 2, requested=False)
    first = node.inputs.exact_retry("s1", pid)
    node.acquire(pid)
    again = node.inputs.exact_retry("s1", pid)
    state = {i.id: i.state for i in w.snap().inputs}[pid]
    return (bool(first), type(again).__name__, _requests(w), state)


def _converted(defects):
    """n1 crashes holding s1's claim; recovery converts it: its continuation is pending, its row in place."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.crash()
    w.tick()
    w.worker().run_once()
    return w, node


def exact_retry_arms_continuation(defects):
    """Recovery's continuation is pending (its row in place); a caller retries it by its id."""
    w, node = _converted(defects)
    got = node.inputs.exact_retry("s1", ids.continuation_id("s1", 1))
    return (type(got).__name__, getattr(got, "reason", "").split(":")[0], _requests(w))


def exact_retry_ignores_content(defects):
    """A held prompt retried with another content's digest."""
    w = World(defects=defects)
    node = w.node()
    pid = node.inputs.admit_prompt("s1", 2, requested=False)
    got = node.inputs.exact_retry("s1", pid, "other")
    return (type(got).__name__, getattr(got, "reason", "").split(":")[0], _requests(w),
            {i.id: i.state for i in w.snap().inputs}[pid])


def resume_drains_without_request(defects):
    """An explicit resume of a busy Session: its request must outlive the drain, which finds nothing."""
    w = World(defects=defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    pid = node.inputs.admit_prompt("s1", 2, requested=False)
    resumed = node.resume("s1")
    return (type(resumed).__name__, {i.id: i.state for i in w.snap().inputs}[pid])


def steer_selects_recovery_input(defects):
    """Recovery's continuation is pending while execution 2 (prompt 2) is at its Step's start."""
    w = World(defects=defects, prompts=2)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.crash()
    w.tick()
    w.worker().run_once()
    node.acquire(w.prompt["s1", 2])
    steered = node.runner.steer(ids.continuation_id("s1", 1))
    return (type(steered).__name__, {i.id: i.state for i in w.snap().inputs}[ids.continuation_id("s1", 1)])


def _delivery_world(defects):
    """Three pending prompts, steer, queue, steer (the configuration `delivery`)."""
    return World(defects=defects, prompts=3, steer_prompts=(1, 3))


def steer_takes_queued_input(defects):
    """Execution 1 (prompt 1) has steered prompt 3; the queued prompt 2 waits for the drain."""
    w = _delivery_world(defects)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.runner.steer(w.prompt["s1", 3])
    steered = node.runner.steer(w.prompt["s1", 2])
    return (type(steered).__name__, {i.id: i.state for i in w.snap().inputs}[w.prompt["s1", 2]])


def queue_before_steer(defects):
    """The drain asked for the queued prompt 2 while the steer prompts 1 and 3 wait."""
    w = _delivery_world(defects)
    taken = w.node().acquire(w.prompt["s1", 2])
    return (type(taken).__name__, {i.id: i.state for i in w.snap().inputs}[w.prompt["s1", 2]])


def selection_ignores_age(defects):
    """The drain asked for steer prompt 3 while the older steer prompt 1 waits."""
    w = _delivery_world(defects)
    taken = w.node().acquire(w.prompt["s1", 3])
    return (type(taken).__name__, {i.id: i.state for i in w.snap().inputs}[w.prompt["s1", 3]])


def _tool_publication_fails(w):
    """One Step with a local tool, up to its physical run; then the Tool.Success publication fails."""
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    for _ in range(6):  # Renew, Dispatch, Step.Started and its return, the tool start, the physical tool
        node.runner.step()
    assert node.runner.pc == "tooling"
    node.runner.fail_next_publication(R.TOOL_SUCCESS_FAILS)
    return node


def recovery_reruns_unknown_tool(defects):
    """A failed Tool.Success leaves the claim unknown; recovery converts it after expiry."""
    w = World(defects=defects, tools=1)
    node = _tool_publication_fails(w)
    node.runner.run_to_completion()
    assert w.snap().claims["s1"].phase == "unknown"
    w.tick()
    w.worker().run_once()
    snap = w.snap()
    return (len(w.provider.tool_runs), [e.kind for e in snap.events if e.kind.startswith("Tool")], sorted(snap.claims))


def tool_settled_before_publication(defects):
    """After a failed Tool.Success the runner goes on (the defect) or marks the claim unknown."""
    w = World(defects=defects, tools=1)
    node = _tool_publication_fails(w)
    node.runner.run_to_completion()
    snap = w.snap()
    return ([e.kind for e in snap.events], {s: c.phase for s, c in snap.claims.items()})


def retry_tool_after_failed_publication(defects):
    """After a failed Tool.Success the runner marks the claim unknown, or (the defect) runs the tool again."""
    w = World(defects=defects, tools=1)
    node = _tool_publication_fails(w)
    node.runner.run_to_completion()
    return len(w.provider.tool_runs), {s: c.phase for s, c in w.snap().claims.items()}


def tool_call_identified_by_step(defects):
    """Two local tools in a Step: call 1 settled, call 2's Tool.Success fails; recovery converts the unknown
    claim and reconciles call 2 by its index (the defect: call 1's outcome reads as call 2's)."""
    w = World(defects=defects, tools=2)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    for _ in range(9):  # Renew .. Step.Started's return, call 1 (start, run, Tool.Success), call 2 (start, run)
        node.runner.step()
    assert node.runner.pc == "tooling" and node.runner.call == 2
    node.runner.fail_next_publication(R.TOOL_SUCCESS_FAILS)
    node.runner.run_to_completion()
    w.tick()
    w.worker().run_once()
    snap = w.snap()
    return [(e.kind, e.call) for e in snap.events if e.kind.startswith("Tool")], sorted(snap.claims)


def step_ended_before_hosted_tool(defects):
    """A hosted tool in a Step (the provider ran it in the dispatch) and one local call: the runner publishes
    the hosted call's outcome before its local call and Step.Ended (the defect: never, and the claim is cleared
    with the hosted call open)."""
    w = World(defects=defects, tools=1, hosted=1)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.runner.run_to_completion()
    snap = w.snap()
    return [(e.kind, e.call) for e in snap.events], sorted(snap.claims)


def reconciliation_skips_hosted_call(defects):
    """The hosted call's Tool.Success fails; recovery converts the unknown claim and records the hosted call
    ToolFailed by its index (the defect: only calls a Tool.Started records are reconciled)."""
    w = World(defects=defects, tools=1, hosted=1)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    for _ in range(4):  # Renew, Dispatch, Step.Started, its return
        node.runner.step()
    assert node.runner.pc == "hosted"
    node.runner.fail_next_publication(R.HOSTED_RECONCILE_FAILS)
    node.runner.run_to_completion()
    w.tick()
    w.worker().run_once()
    snap = w.snap()
    return [(e.kind, e.call) for e in snap.events], sorted(snap.claims)


CASES = {
    "reconciliation-skips-hosted-call": (reconciliation_skips_hosted_call,
                                         ([("Started", 2), ("ToolFailed", 2), ("Interrupted", 0)], []),
                                         ([("Started", 2), ("Interrupted", 0)], [])),
    "step-ended-before-hosted-tool": (step_ended_before_hosted_tool,
                                      ([("Started", 2), ("ToolSucceeded", 2), ("ToolStarted", 1),
                                        ("ToolSucceeded", 1), ("Ended", 0)], []),
                                      ([("Started", 2), ("ToolStarted", 1), ("ToolSucceeded", 1), ("Ended", 0)], [])),
    "tool-call-identified-by-step": (tool_call_identified_by_step,
                                     ([("ToolStarted", 1), ("ToolSucceeded", 1), ("ToolStarted", 2), ("ToolFailed", 2)], []),
                                     ([("ToolStarted", 1), ("ToolSucceeded", 1), ("ToolStarted", 2)], [])),
    "conversion-retry-mints-new-ids": (conversion_retry_mints_new_ids,
                                       ("idle", [(ids.continuation_id("s1", 1), "recovery")], ["s1"]),
                                       ("idle", [(ids.continuation_id("s1", 1), "recovery"),
                                                 (ids.minted_continuation_id("s1", 1, 1), "pending")], ["s1"])),
    "reconvert-replay-leaves-assistant-open": (reconvert_replay_leaves_assistant_open,
                                               ("idle", ["Started", "Interrupted"], [], 1),
                                               ("idle", ["Started"], [], 1)),
    "conversion-conflicts-on-own-row": (conversion_conflicts_on_own_row, (["Started", "Interrupted"], [], 1),
                                        (["Started"], ["s1"], 1)),
    "wake-fresh-share-zero": (wake_fresh_share_zero, [("w3", "fresh"), ("w1", "retry")],
                              [("w1", "retry"), ("w2", "retry")]),
    "wake-fresh-share-full": (wake_fresh_share_full, [("w2", "fresh"), ("w1", "retry")],
                              [("w2", "fresh"), ("w3", "fresh")]),
    "wake-retry-oldest-first": (wake_retry_oldest_first, [("w4", "fresh"), ("w2", "retry")],
                                [("w4", "fresh"), ("w1", "retry")]),
    "wake-reserve-without-cas": (wake_reserve_without_cas, (([("w1", "fresh")], []), (1, "fresh")),
                                 (([("w1", "fresh")], [("w1", "fresh")]), (2, "fresh"))),
    "wake-serves-regardless": (wake_serves_regardless, (False, ["pending"], ["s1"]), (True, ["ordinary"], [])),
    "exact-retry-appends-twice": (exact_retry_appends_twice, (True, "NotEnabled", 1, "ordinary"),
                                  (True, "Ok", 2, "pending")),
    "exact-retry-arms-continuation": (exact_retry_arms_continuation, ("NotEnabled", R.CONTINUATION, 0),
                                      ("Ok", "", 1)),
    "exact-retry-ignores-content": (exact_retry_ignores_content, ("NotEnabled", R.CONTENT_MISMATCH, 0, "held"),
                                    ("Ok", "", 1, "pending")),
    "resume-drains-without-request": (resume_drains_without_request, ("Ok", "pending"), ("NotEnabled", "held")),
    "steer-selects-recovery-input": (steer_selects_recovery_input, ("NotEnabled", "pending"), ("Ok", "steered")),
    "steer-takes-queued-input": (steer_takes_queued_input, ("NotEnabled", "pending"), ("Ok", "steered")),
    "queue-before-steer": (queue_before_steer, ("NotEnabled", "pending"), ("Ok", "ordinary")),
    "selection-ignores-age": (selection_ignores_age, ("NotEnabled", "pending"), ("Ok", "ordinary")),
    "retry-tool-after-failed-publication": (retry_tool_after_failed_publication, (1, {"s1": "unknown"}), (2, {})),
    "recovery-reruns-unknown-tool": (recovery_reruns_unknown_tool, (1, ["ToolStarted", "ToolFailed"], []),
                                     (2, ["ToolStarted", "ToolSucceeded"], [])),
    "tool-settled-before-publication": (tool_settled_before_publication,
                                        (["Started", "ToolStarted"], {"s1": "unknown"}),
                                        (["Started", "ToolStarted", "Ended"], {})),
    "cancel-trusts-previous-step-memory": (cancel_trusts_previous_step_memory,
                                           ([("Interrupted", ids.assistant_id(1, 2))], [], True), ([], [], False)),
    "cancel-requeues-continuation": (cancel_requeues_continuation, ([], [(1, "s1")], [], []),
                                     ([], [(1, "s1")], [(1, "s1")], ["pending"])),
    "heartbeat-extends-lease": (heartbeat_extends_lease, (True, False, 2), (True, False, 3)),
    "cancel-restarts-assistant": (cancel_restarts_assistant,
                                  (["Started", "Interrupted"], 1, []),
                                  (["Started", "Started", "Interrupted"], 2, [])),
    "cancel-interrupts-unstarted": (cancel_interrupts_unstarted, ([], []), (["Interrupted"], [])),
    "dispatch-after-failed-renewal": (dispatch_after_failed_renewal, (True, "idle", 0), (True, "streaming", 1)),
    "step-started-window": (step_started_window,
                            (["Started", "Interrupted"], 1, None, "idle"),
                            (["Started"], 1, "cancelling", "reconciling")),
    "flush-without-assistant": (flush_without_assistant, ([], None, "idle"), ([], "cancelling", "reconciling")),
    "step-failed-duplicate-interrupt": (step_failed_duplicate_interrupt,
                                        (["Started", "Failed"], [], []),
                                        (["Started", "Failed", "Interrupted"], [], [])),
    "cross-session-recovery-collision": (cross_session_recovery_collision,
                                         (True, False, [], False),
                                         (False, False, ["ordinary"], True)),
    "unsupervised-cancel-heartbeat": (unsupervised_cancel_heartbeat, ([False], "idle"), ([True], "settle")),
    "silent-quarantine-noop": (silent_quarantine_noop,
                               ([("s1", "released"), ("s1", "quarantined"), ("s2", "converted")], True, False),
                               ([("s1", "released"), ("s1", "quarantined"), ("s1", "quarantined")], False, True)),
    "scan-window-ignores-fresh-share": (scan_window_ignores_fresh_share,
                                        ([("s1", "released"), ("s2", "released")],
                                         [("s1", "quarantined"), ("s3", "converted")], False),
                                        ([("s1", "released"), ("s2", "released")],
                                         [("s1", "quarantined"), ("s2", "quarantined")], True)),
    "cancellation-quarantine-strands": (cancellation_quarantine_strands, (["cancelled"], False, True),
                                        (["quarantined"], True, False)),
    "recovery-retries-unbounded": (recovery_retries_unbounded, ([("s1", "quarantined")], True),
                                   ([("s1", "released")] * 3, False)),
    "recovery-input-excluded-everywhere": (recovery_input_excluded_everywhere, ("Ok", "recovery"),
                                           ("NotEnabled", "pending")),
    "memory-before-publish": (memory_before_publish, ("stopped", None, []), ("stopped", ids.assistant_id(1), [])),
    "acquire-overwrites-expired": (acquire_overwrites_expired, ("Occupied", 1, "n1"), ("Ok", 2, "n2")),
    "renew-after-expiry": (renew_after_expiry, ("idle", 0, 0), ("streaming", 1, 1)),
    "recovery-input-in-ordinary-queue": (recovery_input_in_ordinary_queue,
                                         (False, ["pending"]), (True, ["ordinary"])),
    "unfenced-step-publication": (unfenced_step_publication,
                                  ([], "r1", None), ([("Started", "n1")], "r1", ids.assistant_id(1))),
    "takeover-trusts-scan": (takeover_trusts_scan, (True, False, "r1", "idle"), (True, True, "r2", "converting")),
    "takeover-overwrites-phase": (takeover_overwrites_phase, ("r1", "cancelling"), ("r1", "recovering")),
    "conversion-leaves-assistant-open": (conversion_leaves_assistant_open,
                                         (["Started", "Interrupted"], []), (["Started"], [])),
    "scan-quarantines-cancellation": (scan_quarantines_cancellation,
                                      ("r1", False, "converting"), ("n1", True, "idle")),
}


def forged_continuation(flaw):
    """Recovery's continuation, pending, replaced by a row of one flaw (ForgeContinuation); a node promotes it."""
    def scenario(defects):
        w, node = _converted(defects)
        assert faults.forge_continuation(w.db, "s1", 1, flaw)
        cont = ids.forged_continuation_id("s1", 1) if flaw == "id" else ids.continuation_id("s1", 1)
        got = node.promote(cont)
        return (type(got).__name__, {i.id: i.state for i in w.snap().inputs}[cont], sorted(w.snap().claims))
    return scenario


# the promotion's validation (decision 28): each flaw's row is refused and quarantined, or (its check
# omitted) promoted as recovery's own
CASES.update({R.FLAW_DEFECT[flaw]: (forged_continuation(flaw), ("Quarantined", "quarantined", []),
                                    ("Ok", "recovery", ["s1"])) for flaw in R.CONTINUATION_FLAWS})


def test_the_table_covers_the_registry():
    assert set(CASES) == set(N.DEFECTS)


@pytest.mark.parametrize("defect", sorted(CASES))
def test_correct_without_the_switch(defect):
    scenario, correct, _ = CASES[defect]
    assert scenario(()) == correct


@pytest.mark.parametrize("defect", sorted(CASES))
def test_defective_with_the_switch(defect):
    scenario, _, defective = CASES[defect]
    assert scenario((defect,)) == defective

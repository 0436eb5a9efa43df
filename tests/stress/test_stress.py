"""The commit history (impl/history.py), its check against the twin (harness/stress/checker.py) and the stress
run (harness/stress/supervisor.py).

(a) histories recorded deterministically in-process (the twin chooses, the scheduler drives the impl with
    a manual clock, the recorder on) pass with no defect and fail, naming the transition and the
    invariant, with defects on; a violation becomes a trace that replays to the same invariant;
(b) an edited or missing history row is caught;
(c) one real-process run per backend, bounded by counts (crash every ~C commits), with zero violations,
    zero lost inputs, at least one crash and one takeover; and one per backend with a defect on, run
    until its first violation (or a cap of executions and crashes), caught and counted.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from harness.conformance import replay as R
from harness.stress.checker import Checker, check_db
from harness.stress.counterexample import session_trace
from harness.stress.render import render_history
from binding.stress import BUNDLED as STRESS, history
from serverkit import BUNDLED
from stresskit import RecordingScheduler, record_trace, record_walk
from impl.history import HistoryRecorder
from spec import configs
from spec import model as M

CI = configs.CONFIGS["ci"]
SESSIONS = configs.CONFIGS["sessions"]
P1 = M.Input("s1", "prompt", 1, "pending")
P2 = M.Input("s1", "prompt", 2, "pending")


def record(cfg: M.Config, steps, defects=()) -> RecordingScheduler:
    from dataclasses import replace
    return RecordingScheduler(replace(cfg, defects=frozenset(defects))).run(steps)


def check(rs: RecordingScheduler) -> Checker:
    return check_db(history(rs.db))


def kinds_and_names(ch: Checker):
    return {(f.kind, n) for f in ch.report.violations for n in (f.names or [""])}


# ---------------------------------------------------------------- (a) no defect: the history conforms

def _walks_conform(cfgs, seeds: int = 25) -> set[str]:
    """Seeded twin walks on each configuration, recorded: no violation, nothing lost; the actions taken."""
    import random
    from spec import names as N
    actions = set()
    for cfg, seed in [(c, k) for c in cfgs for k in range(seeds)]:
        rng = random.Random(seed)

        def choose(options):  # the environment's unfair steps (Tick, faults, cancels) less often
            weights = [1.0 if N.ACTIONS[name].fair else 0.2 for name, _, _ in options]
            return rng.choices(options, weights)[0]
        rs = record_walk(cfg, seed, 60, choose=choose)
        ch = check(rs)
        assert ch.report.violations == [], render_history(ch)
        assert ch.report.inputs.get("lost", 0) == 0
        actions |= {a for a in ch.report.counts if a in N.ACTIONS}
    return actions


def test_random_walks_conform():
    """25 seeded walks on each gate configuration and on deep."""
    actions = _walks_conform((CI, SESSIONS, configs.CONFIGS["deep"], configs.CONFIGS["steps"]))
    assert {"Acquire", "PublishStepEnded", "CancelRequest", "FinalizerClear", "RecoveryTakeover",
            "RecoveryConvert"} <= actions


def test_random_walks_of_the_input_and_wake_configurations_conform():
    """25 seeded walks on each of inputs, steer and wakes: every input action and wake action is recorded
    and checked."""
    actions = _walks_conform([configs.CONFIGS[c] for c in ("inputs", "steer", "wakes")])
    assert {"Admit", "ExactRetry", "Resume", "Steer", "WakeArrive", "WakeScan", "WakeServe", "WakeLost"} <= actions


def test_a_stale_runners_memory_is_judged_on_its_own_assistant():
    """n1's runner still remembers assistant 1 (paused, its claim recovered) while n2 runs the continuation:
    MemoryFollowsDurable must see n1's Started event, though this commit touches only execution 2."""
    from dataclasses import replace
    cont = M.Input("s1", "cont", 1, "pending")
    steps = [("Acquire", ("n1", P1)), ("Renew", ("n1",)), ("Dispatch", ("n1",)), ("PublishStepStarted", ("n1",)),
             ("StepStartedReturn", ("n1",)), ("Tick", ()), ("Heartbeat", ("n1", "s1")), ("Tick", ()), ("Tick", ()),
             ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)), ("RecoveryReconcile", ("r1",)),
             ("RecoveryConvert", ("r1",)), ("PromoteContinuation", ("n2", cont)),
             ("Renew", ("n2",))]
    ch = check(record(replace(CI, lease=2, grace=0), steps))  # Grace 0: recovery acts before n1's supervisor
    assert ch.report.ok, render_history(ch)


# Every committed race's schedule, recorded without its defect, is a behaviour of the twin. Two recordings
# used to fail here (issue 32 item 3, diagnosed as recorder bugs): a seeded run (LeftClaims) recorded its seed
# as one admission, now its commits are the restart's steps (spec/left_claims.py) judged from the empty start;
# and the runner's memory omitted its count of settled calls (impl/history.py memory_of), so a Step's second
# tool call was judged one call short. The third, racing wakers (Wakers 2), was a strict xfail until the
# recorder took a waker's plan (its memory between its read and its reservation, impl/history.py memory_of)
# and the records the Wakers constant (harness/stress/wakes.py checks the plan).
def _config(path) -> dict:
    import json
    return json.loads(path.read_text()).get("config", {})


# Two kinds of race are beyond this per-Session checker and are judged by validate instead (the one checker,
# issue 32 item 1): tied wake rows (WakesTied, spec/README.md decision 16), since it checks the wake rows apart
# from the Sessions (harness/stress/wakes.py) and a tied wake's acquisition or promotion writes both (stress
# nodes do not run tied rows); and forged continuation rows (ForgeContinuation, decision 28), since the commit
# history (impl/history.py) records each continuation's envelope, which this checker does not read (no stress
# run forges) and validate does (binding/flaws.py). Each maps to the action whose line its defect makes NOT
# VALID.
_VALIDATED = ((lambda c: bool(c.get("wakes_tied")), "WakeAcquire"),
              (lambda c: "forge" in c.get("faults", ()), "PromoteContinuation"))


def _validated(path) -> str | None:
    return next((action for f, action in _VALIDATED if f(_config(path))), None)


@pytest.mark.parametrize("path", [p for p in R.committed_traces() if _validated(p) is None], ids=lambda p: p.stem)
def test_committed_races_conform_without_their_defect(path):
    ch = check(record_trace(path, defects=[]))
    assert ch.report.ok, render_history(ch)


@pytest.mark.parametrize("path", [p for p in R.committed_traces() if _validated(p)], ids=lambda p: p.stem)
def test_races_beyond_the_checker_validate_and_fail_under_their_defect(path):
    """The recorded history of each tied-wake or forged-continuation race validates without its defect; with
    it (a trace of a correct run has none), validate names the line of the step the defect changes (issue 31:
    the wake boundary, recovery validation). The tied one validates since each kind's wake queue is its own scan (WakeScanQueue): with
    the twin's one scan over both rows it was NOT VALID at its second queue's commit."""
    import json
    from harness.validation.command import check_database
    from binding import history as C
    defect = json.loads(path.read_text())["meta"].get("defect")  # a trace of a correct run has none
    verdicts = []
    for defects in ([], [defect]) if defect else ([],):
        rs = record_trace(path, defects=defects)
        verdicts.append(check_database("recorded", lambda _url: C.convert_db(rs.db)))
    assert verdicts[0].ok, verdicts[0].report
    if defect:
        assert verdicts[1].state == "not valid" and _validated(path) in "\n".join(verdicts[1].report), \
            verdicts[1].report


# ---------------------------------------------------------------- (a) defects on: caught, named

def test_acquire_overwrites_expired_is_caught():
    rs = record(configs.CONFIGS["prompts"], [("Acquire", ("n1", P1)), ("Crash", ("n1",)), ("Tick", ()), ("Acquire", ("n2", P2))],
                ["acquire-overwrites-expired"])
    ch = check(rs)
    found = kinds_and_names(ch)
    assert ("invariant", "AcquireNeverOverwrites") in found and ("invariant", "FencedMutation") in found
    bad = [f for f in ch.report.violations if f.kind == "transition"]
    assert bad and bad[0].action == "Acquire" and "not enabled in the twin" in bad[0].message


def test_renew_after_expiry_is_caught():
    rs = record(CI, [("Acquire", ("n1", P1)), ("Tick", ()), ("Renew", ("n1",))], ["renew-after-expiry"])
    ch = check(rs)
    assert ("invariant", "FencedMutation") in kinds_and_names(ch)
    t = [f for f in ch.report.violations if f.kind == "transition"]
    assert t and t[0].action == "Renew" and "claim[s1].ttl: model 0, implementation 1" in t[0].message


def test_unfenced_step_publication_is_caught():
    steps = [("Acquire", ("n1", P1)), ("Renew", ("n1",)), ("Dispatch", ("n1",)), ("Tick", ()),
             ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)), ("PublishStepStarted", ("n1",))]
    from dataclasses import replace
    ch = check(record(replace(CI, grace=0), steps, ["unfenced-step-publication"]))  # before n1's supervisor
    assert ("invariant", "FencedMutation") in kinds_and_names(ch)
    assert any(f.kind == "transition" and f.action == "PublishStepStarted" for f in ch.report.violations)


def test_step_failed_duplicate_interrupt_is_caught_and_its_trace_replays():
    path = R.TRACES / "step-failed-duplicate-interrupt.json"
    ch = check(record_trace(path, defects=["step-failed-duplicate-interrupt"]))
    assert ("invariant", "AtMostOneTerminal") in kinds_and_names(ch)
    t = [f for f in ch.report.violations if f.kind == "transition"]
    assert t[0].action == "FinalizerSettle" and "Interrupted" in t[0].message
    trace, why = session_trace(ch, "s1", ["step-failed-duplicate-interrupt"])
    assert why is None
    res = R.replay(trace, None, "built", server=BUNDLED)
    assert res.completed and res.violated == ["AtMostOneTerminal"], R.render(res)


def test_cancel_trusting_a_previous_steps_memory_is_caught_and_its_trace_replays():
    """Several Steps: the history of a cancel inside Step 2's Step.Started gate, memory naming Step 1's
    assistant, shows the cancellation settled with Step 2's assistant open."""
    defect = "cancel-trusts-previous-step-memory"
    ch = check(record_trace(R.TRACES / f"{defect}.json", defects=[defect]))
    assert ("invariant", "ClearOnlySettled") in kinds_and_names(ch), render_history(ch)
    trace, why = session_trace(ch, "s1", [defect])
    assert why is None
    res = R.replay(trace, None, "built", server=BUNDLED)
    assert res.completed and res.violated == ["ClearOnlySettled"], R.render(res)


def test_cross_session_recovery_collision_is_caught_and_inputs_are_lost():
    path = R.TRACES / "cross-session-recovery-collision.json"
    ch = check(record_trace(path, defects=["cross-session-recovery-collision"]))
    assert ("invariant", "RecoveryRowsIsolated") in kinds_and_names(ch)
    assert ch.report.inputs.get("lost") == 1 and not ch.report.ok  # the claim was cleared without its row
    trace, why = session_trace(ch, "s1", ["cross-session-recovery-collision"])
    assert trace.config.sessions == ["s1", "s2"]  # the adversary's Session comes along
    res = R.replay(trace, None, "built", server=BUNDLED)
    assert "RecoveryRowsIsolated" in res.violated, R.render(res)


@pytest.mark.parametrize("defect, action, transition", [
    ("wake-fresh-share-zero", "WakeScan", "yields different wake rows"),
    ("wake-fresh-share-full", "WakeScan", "yields different wake rows"),
    ("wake-reserve-without-cas", "WakeReserve", "yields different wake rows"),
    ("exact-retry-appends-twice", "ExactRetry", "is not enabled in the twin"),
    ("resume-drains-without-request", "Resume", "yields a different state"),
    ("steer-selects-recovery-input", "Steer", "is not enabled in the twin")])
def test_the_wake_and_input_defects_are_caught_by_name(defect, action, transition):
    """Each wake and input trace recorded with its defect on: the commit that the defect changes is not the
    correct twin's, and it breaks the invariant the registry says the defect breaks (the first, a safety
    property: the others it names are liveness, which no bounded history shows)."""
    from spec import names as N
    ch = check(record_trace(R.TRACES / f"{defect}.json", defects=[defect]))
    safety = [n for n in N.DEFECTS[defect].violates if N.INVARIANTS[n].kind != "liveness"]
    assert safety and {("invariant", n) for n in safety} <= kinds_and_names(ch), render_history(ch)
    t = [f for f in ch.report.violations if f.kind == "transition"]
    assert t and t[0].action == action and transition in t[0].message, render_history(ch)


@pytest.mark.parametrize("defect, invariant", [("steer-selects-recovery-input", "SteerExcludesRecoveryOwned"),
                                                ("exact-retry-appends-twice", "OneExecutionRequestPerPrompt"),
                                                ("resume-drains-without-request", "ResumeRequestedBeforeDrain")])
def test_an_input_defects_history_rebuilds_as_a_trace_that_replays(defect, invariant):
    """The counterexample's reduced twin steers, and admits by Admit when every prompt of the Session came
    that way: the violating Session's history rebuilt as a trace replays to the invariant. (A stress run's
    parent admits prompts requested, Init's in the reduced twin: a Session with both kinds of admission has
    no reduced twin, and its trace stops at the first Admit, ExactRetry or Resume, saying so.)"""
    ch = check(record_trace(R.TRACES / f"{defect}.json", defects=[defect]))
    trace, why = session_trace(ch, "s1", [defect])
    assert why is None
    res = R.replay(trace, None, "built", server=BUNDLED)
    assert res.completed and res.violated[:1] == [invariant], R.render(res)


def test_a_drain_without_request_still_accounts_for_its_prompt():
    """The execution a Resume's defective drain begins took the prompt: its fate follows that execution."""
    defect = "resume-drains-without-request"
    ch = check(record_trace(R.TRACES / f"{defect}.json", defects=[defect]))
    assert ch.report.inputs.get("lost", 0) == 0 and ch.report.inputs.get("in flight") == 1, render_history(ch)


def test_a_finalizer_outliving_its_lease_is_a_supervision_violation():
    """unsupervised-cancel-heartbeat: the finalizer keeps running after its lease expired; the node's next
    commit records it (a supervised node would have stopped it; Grace 0 lets recovery act first)."""
    from dataclasses import replace
    steps = [("Acquire", ("n1", P1)), ("CancelRequest", ("n1", "s1")), ("Tick", ()),
             ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)), ("RunnerStop", ("n1",)),
             ("Acquire", ("n2", P2))]
    rs = record(replace(CI, grace=0), steps[:-1], ["unsupervised-cancel-heartbeat"])
    # a commit by n1 while its finalizer still runs: a heartbeat attempt of its own Session
    with rs.recorder.step("n1", "Heartbeat", {"n": "n1", "s": "s1"}, rs._memory("n1"), rs.world.clock.now()):
        rs.world.node("n1").heartbeat("s1")
    ch = check(rs)
    sup = [f for f in ch.report.violations if f.kind == "supervision"]
    assert sup and sup[0].names == ["NoOverlappingEffects"] and "finalizer of n1" in sup[0].message


def _n1_heartbeat(rs: RecordingScheduler, now: int, memory: dict | None = None) -> bool:
    """n1 commits a heartbeat of s1 at its clock reading `now`, recording `memory` (else its own) as its
    memory before the step: how these tests put a node's memory before the history check at a chosen time."""
    rs.world.clock._now, rs.recorder.process = now, "n1"
    with rs.recorder.step("n1", "Heartbeat", {"n": "n1", "s": "s1"}, memory or rs._memory("n1"), now):
        return rs.world.node("n1").heartbeat("s1")


def _finalizer_reconciling_past_its_lease(commit_at: int) -> Checker:
    """n1's finalizer reconciles its crashed execution of s1 (in memory: the reconciliation commits nothing)
    while its runner works on s2's; the lease runs out (a pause: Grace 1 = SupervisionLag 1), and n1 commits
    at clock `commit_at` a failed heartbeat of s1 with the finalizer still reconciling, not yet supervised."""
    from dataclasses import replace
    q1, q2 = M.Input("s1", "prompt", 1, "pending"), M.Input("s2", "prompt", 1, "pending")
    cfg = replace(configs.CONFIGS["rows"], max_exec=2, faults=frozenset({"crash", "pause"}))
    rs = record(cfg, [("Acquire", ("n1", q1)), ("Crash", ("n1",)), ("Acquire", ("n1", q2)),
                      ("CancelRequest", ("n1", "s1")), ("FinalizerReconcile", ("n1",)), ("Tick", ())])
    assert not _n1_heartbeat(rs, commit_at)  # its lease is gone: a fenced step that failed
    return check(rs)


def test_a_finalizer_reconciling_within_the_supervision_lag_is_no_finding():
    """What a trace's stress recording found (the first version of
    traces/finalizer-settles-crashed-execution-beside-runner.json): a correct node's finalizer, its
    reconciliation begun while its lease was live, is still reconciling at the next commit of its node, one
    tick past the expiry, before its supervision ran. The twin lets it (SupervisionLag 1); the history check
    inferred the reconciliation at the later commit's clock (not reachable) and required the finalizer to
    stop by the expiry (a supervision finding): two false rejections of a correct server's log."""
    ch = _finalizer_reconciling_past_its_lease(1)
    assert ch.report.ok, render_history(ch)


def test_a_finalizer_reconciling_past_the_supervision_lag_is_a_supervision_violation():
    """The same finalizer at a commit SupervisionLag ticks past its lease: supervision should have stopped it."""
    ch = _finalizer_reconciling_past_its_lease(2)
    sup = [f for f in ch.report.violations if f.kind == "supervision"]
    assert sup and "finalizer of n1" in sup[0].message and "SupervisionLag 1" in sup[0].message, render_history(ch)


def test_a_finalizer_reconciling_beside_its_own_runner_is_a_memory_violation():
    """The widened search (a reconciliation begun at an earlier live lease) still asks the twin's guard: a
    finalizer that records itself reconciling while its runner still works on the execution is no memory
    the twin reaches (the finalizer waits for its runner to stop)."""
    rs = record(CI, [("Acquire", ("n1", P1)), ("CancelRequest", ("n1", "s1"))])
    memory = rs._memory("n1")
    memory["fin"]["n1"][0] = "reconciling"
    _n1_heartbeat(rs, 0, memory)
    ch = check(rs)
    assert [f.kind for f in ch.report.violations][:1] == ["memory"] and "reconciling" in \
        ch.report.violations[0].message, render_history(ch)


@pytest.mark.parametrize("runner", ["stopped", "acquired"])
def test_a_paused_finalizer_reconciling_after_a_takeover_is_judged_at_its_own_claim(runner):
    """What a stress run found (test_every_fault_on_within_the_skew_bound_holds, sqlite): n1's finalizer
    began reconciling while its lease was live, its node paused, recovery took the claim over and converted
    it, and n1 then committed a heartbeat read at its clock before the expiry with the finalizer still
    reconciling. The check looked for the reconciliation at the claim as it stands (gone): a false memory
    violation. Judged at n1's own recorded claim it is reachable once its runner has stopped; with its
    runner still at work it is not (the finalizer waits for it)."""
    steps = [("Acquire", ("n1", P1)), ("CancelRequest", ("n1", "s1")), ("Tick", ()), ("Supervise", ("n1",)),
             ("Tick", ()), ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)),
             ("RecoveryReconcile", ("r1",)), ("RecoveryConvert", ("r1",))]
    rs = record(CI, steps)
    memory = rs._memory("n1")
    memory["run"]["n1"][0] = runner
    memory["fin"]["n1"] = ["reconciling", "s1", 1, "n1"]
    assert not _n1_heartbeat(rs, 0, memory)  # the paused node's reading, before its lease expired
    ch = check(rs)
    if runner == "stopped":
        assert ch.report.ok, render_history(ch)
    else:
        assert [f.kind for f in ch.report.violations] == ["memory"], render_history(ch)


def test_a_scan_of_a_lease_a_late_heartbeat_extended_is_plausible():
    """What a stress run found: a worker scans an expired claim; the owner's heartbeat, its clock read before
    the expiry, commits after the scan and extends the lease; the worker's compare-and-swap then fails. The
    scan read a real row (the lease it saw had expired), so its memory is no finding; the history check
    used to judge it by the identity's last recorded lease, the extended one, and reported a memory
    violation."""
    from dataclasses import replace
    rs = record(replace(CI, lease=2, grace=0), [("Acquire", ("n1", P1)), ("Tick", ()), ("Tick", ())])
    w = rs.world
    assert w.worker("r1").scan("s1")  # reads the claim expired at clock 2: a read, no commit
    w.clock._now = 1  # n1 read its clock before the expiry, its heartbeat commits after the scan
    with rs.recorder.step("n1", "Heartbeat", {"n": "n1", "s": "s1"}, rs._memory("n1"), 1):
        assert w.node("n1").heartbeat("s1")
    w.clock._now = 2
    with rs.recorder.step("r1", "RecoveryTakeover", {"r": "r1"}, rs._memory("r1"), 2):
        assert not w.worker("r1").take()  # the lease it saw is gone: the CAS fails, nothing commits
    ch = check(rs)
    assert ch.report.ok, render_history(ch)


def test_supervision_stops_a_finalizer_whose_claim_was_taken_over():
    """What the stress run found: a node stalls past its lease while its finalizer waits; recovery takes the
    claim over (live again, under the worker's owner id). Supervision must stop the finalizer when the node
    resumes; it used to check only for an expired claim of its execution and let it run on."""
    from binding.world import World
    w = World(M.Config(nodes=("n1",), recoverers=("r1",), lease=1, grace=0))
    n1 = w.node("n1")
    assert n1.acquire(w.prompt["s1", 1]) and n1.cancel("s1")
    w.clock.advance(1)  # n1 stalls: nothing supervises it at the expiry
    assert w.worker("r1").takeover("s1")
    assert n1.supervise() and n1.finalizer.pc == "idle"


# ---------------------------------------------------------------- (b) an edited history is caught

def _clean_file_history(tmp_path):
    from impl.db import Database
    db = Database(f"sqlite:///{tmp_path / 'h.db'}")
    db.create_schema()
    rs = RecordingScheduler(CI, db)
    steps = [("Acquire", ("n1", P1)), ("Renew", ("n1",)), ("Dispatch", ("n1",)), ("PublishStepStarted", ("n1",)),
             ("StepStartedReturn", ("n1",)), ("PublishStepEnded", ("n1",)), ("ClearClaim", ("n1",))]
    rs.run(steps)
    assert check(rs).report.ok
    return rs, tmp_path / "h.db"


def _edit(path, sql, *args):
    con = sqlite3.connect(path)
    con.execute(sql, args)
    con.commit()
    con.close()


def _seq_of(path, action):
    con = sqlite3.connect(path)
    seq = con.execute("SELECT seq FROM commit_history WHERE action = ?", (action,)).fetchone()[0]
    con.close()
    return seq


def test_an_edited_action_is_caught(tmp_path):
    rs, path = _clean_file_history(tmp_path)
    _edit(path, "UPDATE commit_history SET action = 'PublishStepFailed' WHERE seq = ?",
          _seq_of(path, "PublishStepEnded"))
    ch = check(rs)
    assert any(f.kind == "transition" and f.action == "PublishStepFailed" for f in ch.report.violations)


def test_an_edited_delta_is_caught(tmp_path):
    rs, path = _clean_file_history(tmp_path)
    _edit(path, "UPDATE commit_history SET delta = '{}' WHERE seq = ?", _seq_of(path, "PublishStepStarted"))
    ch = check(rs)
    kinds = {f.kind for f in ch.report.violations}
    assert "transition" in kinds and "record" in kinds  # the step and the fold against the database


def test_an_edited_claim_is_caught(tmp_path):
    rs, path = _clean_file_history(tmp_path)
    seq = _seq_of(path, "Renew")
    con = sqlite3.connect(path)
    claims = json.loads(con.execute("SELECT claims FROM commit_history WHERE seq = ?", (seq,)).fetchone()[0])
    con.close()
    claims[0][2] = "n2"  # the owner the Renew left
    _edit(path, "UPDATE commit_history SET claims = ? WHERE seq = ?", json.dumps(claims), seq)
    assert any(f.kind == "transition" and f.action == "Renew" for f in check(rs).report.violations)


def test_a_missing_record_is_caught(tmp_path):
    rs, path = _clean_file_history(tmp_path)
    _edit(path, "DELETE FROM commit_history WHERE seq = ?", _seq_of(path, "ClearClaim"))
    msgs = [f.message for f in check(rs).report.violations if f.kind == "record"]
    assert any("differs from the final database" in m for m in msgs)


def test_an_unattributed_commit_is_caught():
    rs = RecordingScheduler(CI)
    rs.world.node("n1").acquire(rs.world.prompt["s1", 1])  # a commit made outside the recorder's step context
    assert any(f.kind == "record" and "no step attributed" in f.message for f in check(rs).report.violations)


def test_history_needs_an_empty_database():
    from impl.db import Database
    db = Database.memory()
    rs = RecordingScheduler(CI, db)
    db.on_commit = None
    with pytest.raises(ValueError, match="empty database"):
        HistoryRecorder.install(db)
    assert rs.recorder.commits > 0


# ---------------------------------------------------------------- (c) real processes, bounded by counts

@pytest.fixture(params=["sqlite", "postgresql"])
def stress_db(request, tmp_path):
    if request.param == "sqlite":
        return None  # the run's own sqlite file (WAL) under --out
    return request.getfixturevalue("pg_databases").url()


def _seeded_runs(stress_db, tmp_path, capsys, request, **options):
    """Stress runs of seeds 7, 8 and 9 (each on a database of its own), as (exit code, result, output); a
    test stops taking them once the run it waits for came."""
    from harness.stress.supervisor import StressOptions, run
    for seed in ("7", "8", "9"):
        db = stress_db if seed == "7" or stress_db is None else request.getfixturevalue("pg_databases").url()
        code, res = run(StressOptions(nodes=2, sessions=4, db=db, out=str(tmp_path / seed), seed=seed, progress=False,
                                      **options), STRESS)
        yield code, res, capsys.readouterr().out


def test_a_real_process_run_holds(stress_db, tmp_path, capsys, request):
    # Every run must hold; recovery must be exercised in one of at most three seeds. A run whose crashes
    # never lead to a takeover was seen once on idle cores (44 crashes, 0 takeovers in 45 s: a timing that
    # a later issue must explain): it still has to hold, and the next seed must take over.
    for code, res, out in _seeded_runs(stress_db, tmp_path, capsys, request, seconds=45, executions=40,
                                       min_crashes=1, min_takeovers=1, crash_every_commits=60):
        assert res.violations == 0 and res.lost == 0 and code == 0, out
        if res.counts["RecoveryTakeover"] >= 1:
            break
    assert res.crashes >= 1 and res.counts["RecoveryTakeover"] >= 1, out
    assert res.executions >= 40, out
    assert res.violations == 0 and res.lost == 0 and code == 0, out
    assert res.checker.report.commits == res.counts["commits"]


INPUT_AND_WAKE_ACTIONS = ("Admit", "ExactRetry", "Resume", "Steer", "WakeArrive", "WakeRead", "WakeReserve", "WakeServe",
                          "WakeLost")  # two nodes: two racing wakers, each its read and its reservation


def test_a_real_process_run_takes_the_input_actions_and_wake_scans(stress_db, tmp_path, capsys, request):
    """The nodes' callers, steering and waker (binding/stress/callers.py) at higher rates than the defaults:
    every input action and wake action commits in a short run bounded by executions, the history checks
    clean, and the summary counts them. Every run must hold; each action must commit in one of at most
    three seeds (a Steer needs a pending input at a Step's start, a WakeLost a redrive that took nothing)."""
    seen = set()
    for code, res, out in _seeded_runs(stress_db, tmp_path, capsys, request, seconds=60, executions=60,
                                       crash_every_commits=80, input_rate=0.5, wake_rate=0.5):
        assert res.violations == 0 and res.lost == 0 and code == 0, out
        seen |= {a for a in INPUT_AND_WAKE_ACTIONS if res.checker.report.counts[a]}
        if seen == set(INPUT_AND_WAKE_ACTIONS):
            break
    assert seen == set(INPUT_AND_WAKE_ACTIONS), out
    assert "exact retries" in out and "arrivals" in out, out


def test_a_real_process_run_catches_a_defective_exact_retry_by_name(stress_db, tmp_path, capsys, request):
    """exact-retry-appends-twice in real processes, callers at every loop turn, bounded by executions: a
    retry of a prompt already taken appends a second PromptExecutionRequested, and the history check names
    OneExecutionRequestPerPrompt (the defect's first divergence, a retry it refuses, is a transition
    finding). Named in ten seeds of ten at 80 executions (harness/README.md); up to three seeds here."""
    for code, res, out in _seeded_runs(stress_db, tmp_path, capsys, request, seconds=60, executions=80,
                                       defects=("exact-retry-appends-twice",), input_rate=1.0):
        assert code == 1 and not res.ok, out
        if ("invariant", "OneExecutionRequestPerPrompt") in kinds_and_names(res.checker):
            break
    assert ("invariant", "OneExecutionRequestPerPrompt") in kinds_and_names(res.checker), out
    assert res.checker.report.counts["ExactRetry"] >= 1, out


CAUGHT = "step-failed-duplicate-interrupt"  # caught in every measured run, needing no crash (harness/README.md)


def test_a_real_process_run_with_a_defect_on_is_caught(stress_db, tmp_path, capsys, record_property):
    """Real node processes with a defect on: the run checks its history while it grows and stops at the
    first violation, bounded by counts (a generous cap of executions and crashes; the seconds are a last
    resort, never a synchronisation); the verdict line names the seed and the executions and crashes the
    run needed, and the full check after the run names the invariant."""
    from harness.stress.supervisor import StressOptions, run
    # 16 Sessions and a crash every ~300 commits: caught after 13-108 executions in the runs measured,
    # while the correct protocol ran 1,772 and 2,000 executions before its claims were all quarantined
    # (crashes during cancellation strand Sessions by design), so the caps are far from both
    opts = StressOptions(nodes=2, sessions=16, seconds=900, db=stress_db, out=str(tmp_path), seed="7",
                         defects=(CAUGHT,), crash_every_commits=300, progress=False,
                         until_violation=True, max_executions=1500, max_crashes=200)
    code, res = run(opts, STRESS)
    out = capsys.readouterr().out
    hit = res.first_violation
    assert res.stopped_by == "violation" and hit is not None, out
    assert code == 1 and not res.ok and res.violations >= 1, out
    assert 1 <= hit.executions <= res.executions and hit.crashes <= res.crashes, out
    assert ("invariant", "AtMostOneTerminal") in kinds_and_names(res.checker), out
    verdict = out.strip().splitlines()[-1]
    assert (f"verdict: FAIL: violation caught after {hit.executions:,} executions and {hit.crashes} crashes "
            f"(seed 7): commit {hit.seq} ") in verdict, out
    assert res.traces, out  # the violating Session saved for `claimcheck replay`
    record_property("stress_caught", verdict.strip())
    print(verdict.strip())


def test_stress_caps_need_until_violation(tmp_path, capsys):
    from harness.cli import main
    for argv in (["--max-executions", "10"], ["--max-crashes", "3"], ["--until-violation", "--max-crashes", "0"]):
        assert main(["stress", "--out", str(tmp_path), *argv]) == 2, argv
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err
    assert "caps a run with --until-violation" in err and "--max-crashes must be positive" in err


def test_recording_is_off_by_default():
    from impl.db import Database
    assert Database.on_commit is None and Database.memory().on_commit is None


def test_stress_usage_errors_create_nothing(tmp_path, capsys):
    from harness.cli import main
    for argv in (["--db", "sqlite://"], ["--db", "postgresql://u@10.1.2.3/x"], ["--defect", "no-such-defect"],
                 ["--lease", "0.01"], ["--fresh-share", "2"], ["--wake-batch", "1"], ["--input-rate", "1.5"]):
        assert main(["stress", "--out", str(tmp_path), *argv]) == 2, argv
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err
    assert "not a local host" in err and "a share of 0 lets retries fill the batch" in err and "[0, 1]" in err


def test_an_undetected_defect_is_not_ok_and_breaches_name_their_assumption():
    """A stress run with a defect switched on that catches nothing says NOT DETECTED (exit 4), never OK;
    an environment breach is reported under the assumption it breaks, apart from violations."""
    from collections import Counter
    from types import SimpleNamespace

    from harness.stress.render import verdict_line
    from harness.stress.supervisor import exit_code
    quiet = SimpleNamespace(ok=True, executions=120, crashes=3, first_violation=None, stopped_by="--seconds",
                            not_validated="")
    with_defect = SimpleNamespace(defects=("renew-after-expiry",), until_violation=False, seed="0")
    line = verdict_line(quiet, with_defect)
    assert "NOT DETECTED: renew-after-expiry" in line and "OK" not in line
    assert exit_code(quiet, with_defect) == 4
    correct = SimpleNamespace(defects=(), until_violation=False, seed="0")
    assert verdict_line(quiet, correct).strip() == "verdict: OK" and exit_code(quiet, correct) == 0
    assert exit_code(SimpleNamespace(ok=False), with_defect) == 1

    from harness.stress import effects
    rep = effects.EffectReport()
    effects._dispatch(rep, {"renewed": 0, "now": 5, "o": "n1", "e": 1, "s": "s1"}, lease_ticks=2)
    (key,) = rep.breaches
    assert key.startswith("TimelyDispatch (") and not rep.violations

"""Replay: lockstep with the twin, named boundaries, expectations, exit codes, and the committed schema."""

import json

import pytest

from harness.conformance import replay as R
from harness.traces import trace as T
from harness.cli import main
from binding.world import Scheduler
from serverkit import BUNDLED, StandIn

RACE = R.TRACES / "step-failed-duplicate-interrupt.json"


def _edit(tmp_path, fn, src=RACE, name="t.json"):
    raw = json.loads(src.read_text())
    fn(raw)
    p = tmp_path / name
    p.write_text(json.dumps(raw))
    return p


def test_committed_schema_is_current():
    assert T.SCHEMA_FILE.read_text() == T.schema_text()
    assert T.SCHEMA_FILE.parent != R.TRACES  # out of the way of `traces/*.json`


def test_schema_lists_boundaries_and_the_expect_block():
    s = T.schema()
    assert "Expect" in s["$defs"] and "expect" in s["properties"]
    assert "step_started.committed" in json.dumps(s["$defs"]["TraceStep"])


def test_replay_all_passes_on_the_correct_implementation():
    results = R.replay_all(server=BUNDLED)
    assert len(results) >= 6 and all(r.ok for r in results), [r.problems for r in results if not r.ok]


def test_a_boundary_that_does_not_fire_fails_the_replay(tmp_path, capsys):
    p = _edit(tmp_path, lambda raw: raw["steps"][1].update(boundary="step_started.committed"))
    assert main(["replay", str(p)]) == 1
    assert "step 2 Renew(n1): boundary step_started.committed did not fire" in capsys.readouterr().out


def test_a_step_the_twin_cannot_take_is_bad_input_naming_the_guard_and_what_is_enabled(tmp_path, capsys):
    p = _edit(tmp_path, lambda raw: raw["steps"].insert(2, {"action": "ClearClaim", "params": {"n": "n1"}}))
    assert main(["replay", str(p)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and not captured.out
    assert err.startswith(f"claimcheck replay: {p}: steps[2]: ClearClaim(n1) is not enabled in the twin: "
                          "runner n1 is not at done (it is at renewed); enabled here: ")
    enabled = err.split("enabled here: ")[1]
    assert enabled == "Dispatch(n1), CancelRequest(n1, s1), Crash(n1)"


def test_the_twin_refusing_a_step_names_the_guard_for_the_twin_alone_too(tmp_path):
    p = _edit(tmp_path, lambda raw: raw["steps"].insert(0, {"action": "Renew", "params": {"n": "n2"}}))
    with pytest.raises(T.TraceError, match=r"steps\[0\]: Renew\(n2\) is not enabled in the twin: runner n2 is not at "
                                           r"acquired \(it is at idle\); enabled here: Acquire\(n1, s1/prompt#1\)"):
        T.replay_twin(T.load(p), name=str(p))


def test_under_other_switches_a_step_the_twin_cannot_take_is_a_finding(tmp_path, capsys):
    """`--defect` changes what the twin may enable: a step it cannot take then fails the replay (exit 1, as
    the kill matrix counts it), still naming the guard and what is enabled."""
    p = _edit(tmp_path, lambda raw: raw["steps"].insert(2, {"action": "ClearClaim", "params": {"n": "n1"}}))
    res = R.replay_file(p, ["renew-after-expiry"], server=BUNDLED)
    assert not res.ok and res.consumed == 2
    assert res.problems[0].startswith("step 3 ClearClaim(n1) is not enabled in the twin: runner n1 is not at done "
                                      "(it is at renewed); enabled here: ")
    assert res.problems[0].endswith("; 11 step(s) not consumed")
    assert main(["replay", str(p), "--defect", "renew-after-expiry"]) == 1
    assert "steps:   2/13 consumed" in capsys.readouterr().out


def test_a_failed_expectation_names_its_field(tmp_path):
    p = _edit(tmp_path, lambda raw: raw["expect"]["events"][0].update(count=2))
    res = R.replay_file(p, server=BUNDLED)
    assert not res.ok and res.problems == ["expect.events[0]: 2 Step.Failed for assistant 1, found 1"]


def test_divergence_names_variable_model_and_implementation_values(monkeypatch):
    class Lying(Scheduler):
        def state(self):
            st = super().state()
            return st._replace(nextExec=st.nextExec + 7) if st.log else st

    res = R.replay_file(RACE, server=StandIn(Lying))
    assert not res.ok
    assert "step 4 PublishStepStarted(n1): divergence: nextExec: model 2, implementation 9" in res.problems
    assert res.consumed == 4


def test_a_divergence_is_one_line_per_field_never_a_whole_record(monkeypatch, capsys):
    class Forgetful(Scheduler):  # publisher memory of n1 lost after Step.Started's return
        def state(self):
            st = super().state()
            r = st.run[0]
            return st._replace(run=(r._replace(mem=0, active=False),) + st.run[1:]) if r.mem else st

    res = R.replay_file(RACE, server=StandIn(Forgetful))
    lines = [p for p in res.problems if "divergence" in p]
    assert lines == ["step 5 StepStartedReturn(n1): divergence: run[n1].mem: model 1, implementation 0",
                     "step 5 StepStartedReturn(n1): divergence: run[n1].active: model TRUE, implementation FALSE"]
    out = R.render(res)
    assert "Runner(" not in out and "run[n1].mem: model 1, implementation 0" in out


def test_the_implementation_refusing_a_step_is_a_divergence(monkeypatch):
    from harness.port import DivergenceError
    original = Scheduler.apply

    def refuse(self, name, params, nxt):
        if name == "CancelRequest":
            raise DivergenceError("refused")
        return original(self, name, params, nxt)

    monkeypatch.setattr(Scheduler, "apply", refuse)
    res = R.replay_file(RACE, server=BUNDLED)
    assert any("step 7 CancelRequest(n1, s1): divergence: refused" in p for p in res.problems)


def test_recorded_state_must_match_the_twin(tmp_path):
    tr = T.load(RACE)
    cfg, states = T.replay_twin(tr)
    tr.steps[0].state = T.state_to_json(cfg, states[2])  # step 2's state recorded after step 1
    res = R.replay(tr, name="x", server=BUNDLED)
    assert res.consumed == 0 and res.problems[0] == ("step 1 Acquire(n1, s1/prompt#1): "
                            "the twin's state differs from the state recorded in the trace")


@pytest.mark.parametrize("mutate, field", [
    (lambda raw: raw.pop("meta"), "meta: Field required"),
    (lambda raw: raw["steps"][0].update(action="Teleport"), "steps[0].action: unknown action 'Teleport'"),
    (lambda raw: raw["steps"][1].update(boundary="listener.gate"), "steps[1].boundary"),
    (lambda raw: raw["steps"][1].update(params={"n": "n9"}), "steps[1].params.n: 'n9' is not in the configuration"),
    (lambda raw: raw["steps"][1].update(params={}), "steps[1].params: Renew takes ['n']"),
    (lambda raw: raw["expect"]["events"][0].update(kind="Paused"), "expect.events[0].kind"),
    (lambda raw: raw["expect"].update(invariants=["NoSuchThing"]), "expect.invariants[0]"),
    (lambda raw: raw.update(loop=99), "loop: 99 is outside 0..12"),
    (lambda raw: raw["config"].update(defects=["nope"]), "config.defects[0]: unknown defect 'nope'"),
    (lambda raw: raw["expect"]["claims"][0].update(session="s7"), "expect.claims[0].session: 's7'"),
])
def test_malformed_traces_exit_2_naming_file_and_field(tmp_path, capsys, mutate, field):
    p = _edit(tmp_path, mutate)
    assert main(["replay", str(p)]) == 2
    err = capsys.readouterr().err
    assert str(p) in err and field in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_folder_replays_its_committed_traces(capsys):
    assert main(["replay", str(R.TRACES)]) == 0
    assert capsys.readouterr().out.count("verdict: PASS") == len(R.committed_traces()) >= 6


def test_not_json_and_missing_file_exit_2(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text("{")
    assert main(["replay", str(p), str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert "not JSON" in err and "no such file" in err


def test_defect_override_replaces_the_recorded_switches(tmp_path):
    p = _edit(tmp_path, lambda raw: raw["config"].update(defects=["step-failed-duplicate-interrupt"]))
    assert not R.replay_file(p, server=BUNDLED).ok
    assert R.replay_file(p, [], server=BUNDLED).ok


def test_replay_of_the_traces_glob_exits_0_on_a_clean_checkout():
    """`claimcheck replay traces/*.json`, expanded by a shell in the repository: every file it takes is a
    trace (the schema is not among them) and every trace passes."""
    import subprocess
    import sys
    root = R.TRACES.parent
    proc = subprocess.run(f"'{sys.executable}' -m harness.cli replay traces/*.json", shell=True, cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    taken = sorted(p.name for p in R.TRACES.glob("*.json"))
    assert taken and taken == sorted(p.name for p in R.committed_traces())
    assert proc.stdout.count("verdict: PASS") == len(taken)


SUPERVISE_NOTHING = R.TRACES / "supervise-stops-nothing-live.json"


@pytest.mark.parametrize("stopped", ["idle", "live"])
def test_a_supervisor_that_reports_a_stop_it_did_not_make_fails_the_refused_supervise(monkeypatch, stopped):
    """traces/supervise-stops-nothing-live.json asks n1's supervisor for a step with nothing stale (idle, then
    on the finalizer's live claim): a finalizer whose supervise() says it stopped when it did not (mutmut's
    `return False` -> `return True`, either return) makes Node.supervise answer Supervise, the refused action."""
    from impl.actor import IDLE
    from impl.cancel import Finalizer
    original = Finalizer.supervise

    def says_stopped(self):
        return True if (self.pc == IDLE) == (stopped == "idle") else original(self)

    assert R.replay_file(SUPERVISE_NOTHING, server=BUNDLED).ok
    monkeypatch.setattr(Finalizer, "supervise", says_stopped)
    res = R.replay_file(SUPERVISE_NOTHING, server=BUNDLED)
    step = 1 if stopped == "idle" else 7
    assert any(p.startswith(f"step {step} Supervise(n1): n1 took Supervise, the refused action") for p in res.problems), \
        res.problems


RETRY_OTHER_SESSION = R.TRACES / "exact-retry-other-session.json"


@pytest.mark.parametrize("unscoped, step", [("exact_retry", 3), ("request_pending", 5)])
def test_an_exact_retry_or_resume_without_its_session_test_fails_the_two_session_trace(monkeypatch, unscoped, step):
    """traces/exact-retry-other-session.json has two Sessions with admission: an exact retry that takes the
    Session of the input it names instead of its caller's (StrykerJS's `row.session_id !== session` ->
    `false`) requests and arms s1's prompt for s2's caller; a resume of every Session's held prompts arms
    s2's prompt when s1's is resumed. Each is the refused step it hinges on."""
    from impl import ids
    from impl.inputs import InputStore
    original = getattr(InputStore, unscoped)
    owner = {ids.prompt_id(s, 1): s for s in ("s1", "s2")}

    def exact_retry(self, session_id, input_id, digest=None):
        return original(self, owner.get(input_id, session_id), input_id, digest)

    def request_pending(self, session_id):
        got = original(self, session_id)
        for other in ("s1", "s2"):
            if other != session_id:
                original(self, other)
        return got

    assert R.replay_file(RETRY_OTHER_SESSION, server=BUNDLED).ok
    monkeypatch.setattr(InputStore, unscoped, exact_retry if unscoped == "exact_retry" else request_pending)
    res = R.replay_file(RETRY_OTHER_SESSION, server=BUNDLED)
    assert any(p.startswith(f"step {step} ") for p in res.problems), res.problems


STEER_OWN = R.TRACES / "steer-own-session-in-order.json"


@pytest.mark.parametrize("weakened", ["session", "ahead"])
def test_a_steer_of_another_sessions_input_or_past_an_older_one_fails_the_refused_steer(monkeypatch, weakened):
    """traces/steer-own-session-in-order.json asks s1's running execution to steer s2's pending prompt, then a
    steer prompt behind an older one: a steer that checks the input's own Session instead of the runner's
    (mutmut's `or` made `and` in InputStore.steer's first test) or skips the waiting-ahead test takes it."""
    from impl.inputs import InputStore
    original = InputStore.steer

    def steer_any_session(self, conn, session_id, input_id):
        row = self.get(conn, input_id)
        return original(self, conn, row.session_id if row is not None else session_id, input_id)

    assert R.replay_file(STEER_OWN, server=BUNDLED).ok
    if weakened == "session":
        monkeypatch.setattr(InputStore, "steer", steer_any_session)
    else:
        monkeypatch.setattr(InputStore, "waiting_ahead", lambda self, conn, row: None)
    res = R.replay_file(STEER_OWN, server=BUNDLED)
    step = 2 if weakened == "session" else 3
    assert any(p.startswith(f"step {step} Steer(n1, ") and "the twin does not enable it" in p for p in res.problems), \
        res.problems


NUMBERED_LIKE = R.TRACES / "steer-prompt-numbered-like-recovered-execution.json"


def test_a_prompt_numbered_like_a_recovered_execution_taken_for_recoverys_fails_the_steer(monkeypatch):
    """traces/steer-prompt-numbered-like-recovered-execution.json steers prompt 1 while s1 has a recovery row
    of execution 1: a recovery-owned test without its `kind == continuation` conjunct (mutmut's change to
    impl.inputs._owned_by_recovery) takes the prompt for recovery's and refuses the steer the twin takes."""
    import sqlalchemy as sa
    from impl import inputs as I
    owned = sa.exists().where(I.RT.c.execution_id == I.T.c.src, I.RT.c.session_id == I.T.c.session_id)
    weakened = {d: sa.select(sa.exists().where(I.T.c.id == sa.bindparam("id"), I.T.c.state == "pending",
                                               sa.true() if d else sa.not_(owned))) for d in (False, True)}
    assert R.replay_file(NUMBERED_LIKE, server=BUNDLED).ok
    monkeypatch.setattr(I, "_SELECTABLE", weakened)
    res = R.replay_file(NUMBERED_LIKE, server=BUNDLED)
    assert any(p.startswith("step 17 Steer(n1, s1/prompt#1): divergence") for p in res.problems), res.problems


def test_a_promotion_that_takes_a_pending_prompt_for_a_continuation_fails_the_refused_promotion(monkeypatch):
    """The same trace asks recovery's promotion to take prompt 1 (refused: it is no continuation): a
    check_continuation whose kind-or-state test is made `and` (mutmut's change) lets the pending prompt through,
    and the promotion quarantines it (its flaw: the id)."""
    from dataclasses import replace
    from impl.inputs import InputStore
    original = InputStore.check_continuation

    def pending_passes(self, conn, row):  # a pending prompt passes the kind test as a continuation would
        return original(self, conn, replace(row, kind="continuation") if row.state == "pending" else row)

    monkeypatch.setattr(InputStore, "check_continuation", pending_passes)
    res = R.replay_file(NUMBERED_LIKE, server=BUNDLED)
    assert any(p.startswith("step 15 PromoteContinuation(n1, s1/prompt#1): the implementation took it")
               for p in res.problems), res.problems


WAKE_LAPSES = R.TRACES / "wake-lapses-while-session-claimed.json"
PROMPT_LIKE_RECOVERED = R.TRACES / "prompt-numbered-like-recovered-execution-acquired.json"


def _fails_on_both(trace, step: str, tmp_path, ts_mutant: tuple[str, str, str]) -> None:
    """The bundled server with the test's stand-in patched in, then the TypeScript example with its StrykerJS
    mutant (module, before, after) written in: each fails `trace` at `step` (its number and action)."""
    import subprocess
    import sys
    from serverkit import typescript_mutant
    res = R.replay_file(trace, server=BUNDLED)
    assert any(p.startswith(step) for p in res.problems), res.problems
    driver = typescript_mutant(tmp_path, *ts_mutant)
    done = subprocess.run([sys.executable, "-m", "harness.cli", "replay", str(trace), "--sut", str(driver)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and step.split("(")[0] in done.stdout, done.stdout + done.stderr


def test_a_server_that_counts_a_claimed_session_takeable_fails_the_lapse(monkeypatch, tmp_path):
    """traces/wake-lapses-while-session-claimed.json lapses a woken ordinary row whose Session is claimed while
    prompt 2 waits: a server whose tied WakeLost refusal forgets the claim (the TypeScript example's mutant:
    `!(await node.claims.get(session))` -> `await node.claims.get(session)`; the bundled binding's read without
    `occupied`) thinks the redrive could take prompt 2 and refuses the lapse the twin takes."""
    from binding.world import World
    assert R.replay_file(WAKE_LAPSES, server=BUNDLED).ok
    monkeypatch.setattr(World, "_takeable", lambda self, row: row == 1)  # the claim forgotten: prompt 2 takeable
    _fails_on_both(WAKE_LAPSES, "step 5 WakeLost(1)", tmp_path,
                   ("wakes.js", "if (node && !(await node.claims.get(session)) && ",
                    "if (node && (await node.claims.get(session)) && "))


def test_a_server_that_asks_the_recovery_rows_about_a_prompt_fails_its_acquisition(monkeypatch, tmp_path):
    """traces/prompt-numbered-like-recovered-execution-acquired.json: execution 1 ran prompt 2 and was recovered,
    then prompt 1 is acquired. Ordinary selection that asks whether a recovery row owns a prompt by its number (the
    TypeScript example without its prompt test, StrykerJS's `row.kind === "prompt"` -> `false`; the bundled
    server's selectability read that way) refuses it."""
    from impl.inputs import InputStore
    assert R.replay_file(PROMPT_LIKE_RECOVERED, server=BUNDLED).ok
    original = InputStore.ordinary_selectable

    def by_number(self, conn, input_id):
        row = self.get(conn, input_id)
        owned = conn.exec_driver_sql("SELECT 1 FROM session_recovery WHERE session_id = ? AND execution_id = ?",
                                     (row.session_id, row.src)).first()
        return original(self, conn, input_id) and owned is None

    monkeypatch.setattr(InputStore, "ordinary_selectable", by_number)
    _fails_on_both(PROMPT_LIKE_RECOVERED, "step 10 Acquire(n1, s1/prompt#1)", tmp_path,
                   ("inputs.js", 'if (row.kind === "prompt") return true;', "if (false) return true;"))


OLDER_QUEUE_FIRST = R.TRACES / "older-queue-prompt-first.json"


def test_a_server_that_counts_every_pending_input_ahead_fails_the_older_queue_prompt(monkeypatch, tmp_path):
    """traces/older-queue-prompt-first.json (delivery kinds, prompts 2 and 3 queued): prompt 2 is acquired while
    the younger prompt 3 waits. A selection that counts any other pending input as waiting ahead (the TypeScript
    example's `j.delivery === "steer"` -> `true`; the bundled server's waiting_ahead answering, for a queue input,
    any other pending input) refuses it."""
    from impl.inputs import InputStore
    assert R.replay_file(OLDER_QUEUE_FIRST, server=BUNDLED).ok

    original = InputStore.waiting_ahead

    def any_other(self, conn, row):  # a queue input waits behind any other pending input
        if row.delivery != "queue":
            return original(self, conn, row)
        return next((r for r in self.select_ordinary(conn, row.session_id, limit=None) if r.id != row.id), None)

    monkeypatch.setattr(InputStore, "waiting_ahead", any_other)
    _fails_on_both(OLDER_QUEUE_FIRST, "step 7 Acquire(n1, s1/prompt#2)", tmp_path,
                   ("inputs.js", 'const kind = j.delivery === "steer" && ', "const kind = true && "))


HANG_AFTER_STEP = R.TRACES / "listener-hangs-after-an-intermediate-step-ended.json"
TOOL_START_RENEWS = R.TRACES / "tool-start-renews-the-lease.json"
BESIDE_RUNNER = R.TRACES / "finalizer-settles-crashed-execution-beside-runner.json"


def test_a_runner_whose_listener_gate_forgets_an_intermediate_step_ended_fails_the_hang(monkeypatch, tmp_path):
    """traces/listener-hangs-after-an-intermediate-step-ended.json (listeners with max_steps 2): a listener of Step
    1's Step.Ended hangs. A runner whose gate test leaves out the pc after a Step.Ended that is not the last (the
    TypeScript example's `"ended"` -> `""`; the bundled runner's hang_listener refusing at ENDED) takes no hang."""
    from impl.runner import ENDED, Runner
    assert R.replay_file(HANG_AFTER_STEP, server=BUNDLED).ok
    original = Runner.hang_listener
    monkeypatch.setattr(Runner, "hang_listener", lambda self: None if self.pc == ENDED else original(self))
    _fails_on_both(HANG_AFTER_STEP, "step 7 ListenerHangs(n1)", tmp_path,
                   ("runner.js", '["started", "failed", "ended"].includes(this.pc)', '["started", "failed", ""].includes(this.pc)'))


def test_a_tool_start_without_its_renewal_fails_after_a_tick(monkeypatch, tmp_path):
    """traces/tool-start-renews-the-lease.json (tools with a 2-tick lease): a tick, then the fenced tool start
    renews the lease. A tool start that checks its fence but does not renew (the TypeScript example's `if (await
    this.fence())` -> `if (false)` inside its transaction; a bundled claim store whose renewal only checks) leaves
    the lease a tick short."""
    from impl.claims import ClaimStore
    assert R.replay_file(TOOL_START_RENEWS, server=BUNDLED).ok
    monkeypatch.setattr(ClaimStore, "renew", lambda self, conn, ident, now, until=None: self.check(conn, ident, now, "running"))
    _fails_on_both(TOOL_START_RENEWS, "step 7 ToolStart(n1)", tmp_path,
                   ("runner.js", "if (await this.fence()) await claims.renew(", "if (false) await claims.renew("))


def test_a_cancel_interrupting_the_runner_of_another_execution_fails(monkeypatch, tmp_path):
    """traces/finalizer-settles-crashed-execution-beside-runner.json (two Sessions, max_exec 2): s1's crashed
    execution 1 is cancelled on n1 while n1's runner works on s2's execution 2. A node that asks whether its runner
    works on an execution without comparing the execution (the TypeScript example's worksOn: `this.execution ===
    execution` -> `true`; the bundled Runner.runs the same) interrupts the runner of execution 2 (and its
    finalizer would wait for that runner)."""
    from impl.runner import Runner
    assert R.replay_file(BESIDE_RUNNER, server=BUNDLED).ok
    monkeypatch.setattr(Runner, "runs", lambda self, execution_id: self.busy)
    _fails_on_both(BESIDE_RUNNER, "step 4 CancelRequest(n1, s1)", tmp_path,
                   ("runner.js", "return this.busy && this.execution === execution;", "return this.busy && true;"))


def test_a_runner_waiting_for_a_finalizer_of_another_execution_fails(monkeypatch, tmp_path):
    """The same trace: n1's runner stops on execution 2 while the finalizer holds execution 1. A runner that waits
    while its finalizer holds any execution (the TypeScript example's Settling.holds with `&&` -> `||`; the bundled
    Settling.holds the same) never exits."""
    from impl.runner import Settling
    monkeypatch.setattr(Settling, "holds", lambda self, execution_id: self.execution_id is not None)
    _fails_on_both(BESIDE_RUNNER, "step 11 RunnerExit(n1)", tmp_path,
                   ("runner.js", "this.execution !== 0 && this.execution === execution", "this.execution !== 0 || this.execution === execution"))


def test_a_second_cancel_while_the_finalizer_settles_fails(monkeypatch, tmp_path):
    """The same trace: a cancel of s2 on n1 while n1's finalizer settles execution 1 is refused. A finalizer
    whose cancel forgets it is already at work (the TypeScript example's `this.pc !== "idle"` -> `false`; a
    bundled request that takes the cancel whatever its pc) moves s2's claim to cancelling."""
    from impl.actor import IDLE
    from impl.cancel import Finalizer
    original = Finalizer.request

    def busy_ignored(self, session_id, execution_id=None):
        pc, self.pc = self.pc, IDLE
        got = original(self, session_id, execution_id)
        if not got:
            self.pc = pc
        return got

    monkeypatch.setattr(Finalizer, "request", busy_ignored)
    _fails_on_both(BESIDE_RUNNER, "step 6 CancelRequest(n1, s2)", tmp_path,
                   ("finalizer.js", 'if (this.pc !== "idle" || !c', "if (false || !c"))


def test_a_replayed_step_that_fires_another_actions_boundary_fails(monkeypatch, tmp_path):
    """Replay holds each step to the boundaries of its own action too (harness/conformance/boundaries.py): the
    shortest path to a StepEndedFails, replayed on a bundled runner that fires tool.publish_failed there."""
    from harness.conformance import conform as C
    from harness.conformance import exhaustive as X
    from harness.traces.paths import path_to
    from serverkit import fires_tool_publish_failed_after_every_failed_publication
    cfg, _ = X.resolve("tools/max_exec=1")
    graph = C.graph_of(cfg)
    j = next(j for j, via in enumerate(graph.via) if via and via[0] == "StepEndedFails")
    path = T.save(T.from_steps(cfg, path_to(graph, j), title="a Step.Ended publication fails", source="hand",
                               base="tools"), tmp_path / "step-ended-fails.json")
    assert R.replay_file(path, server=BUNDLED).ok
    fires_tool_publish_failed_after_every_failed_publication(monkeypatch)
    res = R.replay_file(path, server=BUNDLED)
    assert any("StepEndedFails(n1): divergence: the implementation fired tool.publish_failed" in p
               for p in res.problems), res.problems


TAKEOVER_AFTER_CONVERSION = R.TRACES / "takeover-after-another-workers-conversion.json"
CONVERSION_AFTER_TAKEOVER = R.TRACES / "conversion-after-another-workers-takeover.json"


def test_a_takeover_that_reads_a_gone_claim_fails(monkeypatch, tmp_path):
    """traces/takeover-after-another-workers-conversion.json (two recovery workers): r1 converts the claim both
    scanned, then r2's takeover finds none. A takeover that reads the claim it compares on without asking whether it
    still exists (the TypeScript example's pre-check made `false`; a bundled compare-and-swap that does the same)
    fails there."""
    from impl.claims import ClaimStore
    assert R.replay_file(TAKEOVER_AFTER_CONVERSION, server=BUNDLED).ok
    original = ClaimStore.takeover

    def reads_the_gone_claim(self, conn, seen, owner, now):
        claim = self.get(conn, seen.session_id)
        claim.phase  # noqa: B018 - the mutant's read of a claim that is no longer there
        return original(self, conn, seen, owner, now)

    monkeypatch.setattr(ClaimStore, "takeover", reads_the_gone_claim)
    _fails_on_both(TAKEOVER_AFTER_CONVERSION, "step 10 RecoveryTakeover(r2)", tmp_path,
                   ("recovery.js", "if (!c || c.execution_id !== this.execution || c.recovery_error !== null) return false;",
                    "if (false) return false;"))


def test_a_conversion_that_takes_another_workers_claim_for_its_own_fails(monkeypatch, tmp_path):
    """traces/conversion-after-another-workers-takeover.json (two recovery workers, max_tries 3): r1's lease lapsed and
    r2 took the claim over before r1 converts. r1's fence fails and the claim is not its own: it quarantines (a no-op).
    A conversion that asks only whether the claim is of its execution (the TypeScript example's `c.owner_id ===
    this.id` -> `true`; the bundled conversion the same) releases the row for a retry instead."""
    from impl.recovery import RecoveryWorker
    from impl.results import Abort, Fenced, Released
    assert R.replay_file(CONVERSION_AFTER_TAKEOVER, server=BUNDLED).ok
    original = RecoveryWorker._convert

    def any_owner(self, conn):
        try:
            return original(self, conn)
        except Abort as lost:
            claim = self.claims.get(conn, self.ident.session_id)
            if isinstance(lost.result, Fenced) and claim is not None and claim.execution_id == self.ident.execution_id \
                    and claim.recovery_error is None and claim.recovery_attempts < self.max_tries:
                raise Abort(Released("lease lost")) from None
            raise

    monkeypatch.setattr(RecoveryWorker, "_convert", any_owner)
    _fails_on_both(CONVERSION_AFTER_TAKEOVER, "step 12 RecoveryConvert(r1)", tmp_path,
                   ("recovery.js", "c.owner_id === this.id && c.recovery_error === null;", "true && c.recovery_error === null;"))

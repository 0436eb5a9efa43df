"""Live progress (harness.progress): plain lines in a log, rich on a terminal, TLC's own progress
lines read as they come. Every clock here is a fake one: nothing depends on how fast the machine is."""

from __future__ import annotations

import io
import re

from rich.console import Console

from harness.engines import explore as E
from harness.engines import tlc
from harness.progress import Reporter, Throttle
from spec import configs
from serverkit import BUNDLED

# Lines of a real `claimcheck check --engine tlc --config ci` run (TLC 2.15, -tool), as TLC printed them
TLC_OUTPUT = """\
@!@!@STARTMSG 2189:0 @!@!@
Computing initial states...
@!@!@ENDMSG 2189 @!@!@
@!@!@STARTMSG 2190:0 @!@!@
Finished computing initial states: 1 distinct state generated at 2026-12-01 15:26:14.
@!@!@ENDMSG 2190 @!@!@
@!@!@STARTMSG 2192:0 @!@!@
Checking 2 branches of temporal properties for the current state space with 1900 total distinct states at (2026-12-01 15:26:17)
@!@!@ENDMSG 2192 @!@!@
@!@!@STARTMSG 2267:0 @!@!@
Finished checking temporal properties in 00s at 2026-12-01 15:26:17
@!@!@ENDMSG 2267 @!@!@
@!@!@STARTMSG 2200:0 @!@!@
Progress(9) at 2026-12-01 15:26:17: 1,735 states generated (1,735 s/min), 950 distinct states found (950 ds/min), 430 states left on queue.
@!@!@ENDMSG 2200 @!@!@
@!@!@STARTMSG 2200:0 @!@!@
Progress(25) at 2026-12-01 15:27:21: 352,760 states generated (351,025 s/min), 96,798 distinct states found (95,848 ds/min), 5,024 states left on queue.
@!@!@ENDMSG 2200 @!@!@
@!@!@STARTMSG 2200:0 @!@!@
Progress(30) at 2026-12-01 15:27:25: 393,371 states generated, 102,544 distinct states found, 0 states left on queue.
@!@!@ENDMSG 2200 @!@!@
@!@!@STARTMSG 2193:0 @!@!@
Model checking completed. No error has been found.
  Estimates of the probability that TLC did not check all reachable states
  because two distinct states had the same fingerprint:
  calculated (optimistic):  val = 1.6E-9
@!@!@ENDMSG 2193 @!@!@
@!@!@STARTMSG 2199:0 @!@!@
393371 states generated, 102544 distinct states found, 0 states left on queue.
@!@!@ENDMSG 2199 @!@!@
@!@!@STARTMSG 2194:0 @!@!@
The depth of the complete state graph search is 30.
@!@!@ENDMSG 2194 @!@!@
"""


class FakeClock:
    """Each reading is `step` seconds after the one before."""

    def __init__(self, step: float = 1.0):
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class ManualClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_throttle_allows_one_line_per_interval_and_none_before_the_first():
    clock = ManualClock()
    t = Throttle(5.0, clock)
    seen = []
    for now in (0, 1, 4.9, 5.0, 5.1, 9.9, 10.0, 30.0, 31.0):
        clock.now = now
        seen.append(t.ready())
    assert seen == [False, False, False, True, False, False, True, True, False]


def test_plain_mode_prints_states_per_second_for_a_small_explorer_run(monkeypatch):
    monkeypatch.setattr(E, "PROGRESS_EVERY", 50)
    out = io.StringIO()
    rep = Reporter(stream=out, clock=FakeClock(1.0), every=5.0, tick=None)
    assert not rep.live  # a StringIO is not a terminal: plain lines
    with rep.task("explorer ci") as task:
        res = E.explore(configs.get("ci"), liveness=False, max_states=2000, progress=task)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3
    assert "\x1b" not in out.getvalue()
    pattern = re.compile(r"^  explorer ci: ([\d,]+) states, ([\d,]+) states/s, generated [\d,]+, depth \d+, (\d+) s$")
    seconds = []
    for line in lines:
        m = pattern.match(line)
        assert m, line
        states, rate, elapsed = (int(g.replace(",", "")) for g in m.groups())
        assert 0 < states <= res.distinct and rate == round(states / elapsed) or abs(rate - states / elapsed) < 1
        seconds.append(elapsed)
    # at most one line every 5 s of the (fake) clock
    assert all(b - a >= 5 for a, b in zip(seconds, seconds[1:]))


def test_plain_mode_prints_nothing_for_a_stage_shorter_than_the_interval():
    out = io.StringIO()
    rep = Reporter(stream=out, clock=FakeClock(0.1), every=5.0, tick=None)
    with rep.task("traces", unit="traces", key="done", total=6) as task:
        for k in range(1, 7):
            task(done=k, steps=10 * k)
    assert out.getvalue() == ""


def test_a_held_back_update_is_printed_when_due_and_a_quiet_task_beats():
    clock = ManualClock()
    out = io.StringIO()
    rep = Reporter(stream=out, clock=clock, every=5.0, tick=None, heartbeat=30.0)
    with rep.task("TLC ci") as task:
        clock.now = 4.9
        task(distinct=950, depth=9)  # too soon: held back
        assert out.getvalue() == ""
        clock.now = 5.5
        rep.flush()  # what the ticker thread does every second
        assert out.getvalue() == "  TLC ci: 950 states, 194 states/s, depth 9, 6 s\n"
        clock.now = 20.0
        rep.flush()  # nothing new, not quiet for long yet
        clock.now = 36.0
        task(phase="checking temporal properties")
        clock.now = 37.0
        task(phase="breadth-first search")  # held back
        clock.now = 66.0
        rep.flush()
    assert out.getvalue().splitlines()[1:] == [
        "  TLC ci: 950 states, 194 states/s, depth 9, checking temporal properties, 36 s",
        "  TLC ci: 950 states, 194 states/s, depth 9, breadth-first search, 66 s"]


def test_counts_with_a_total_print_as_done_of_total():
    out = io.StringIO()
    rep = Reporter(stream=out, clock=FakeClock(3.0), every=5.0, tick=None)
    with rep.task("kill matrix", unit="defects", key="done", total=10) as task:
        for k in range(11):
            task(done=k, replays=6 * k)
    lines = out.getvalue().splitlines()
    assert lines and all(re.match(r"^  kill matrix: \d+/10 defects, replays \d+, \d+ s$", ln) for ln in lines), lines


def test_tlc_progress_lines_are_parsed():
    counts = [c for c in map(tlc.progress_counts, TLC_OUTPUT.splitlines()) if c]
    assert counts == [
        {"phase": "computing initial states"},
        {"phase": "breadth-first search"},
        {"phase": "checking temporal properties"},
        {"phase": "breadth-first search"},
        {"distinct": 950, "generated": 1735, "depth": 9, "queue": 430, "phase": "breadth-first search"},
        {"distinct": 96798, "generated": 352760, "depth": 25, "queue": 5024, "phase": "breadth-first search"},
        {"distinct": 102544, "generated": 393371, "depth": 30, "queue": 0, "phase": "breadth-first search"},
        {"distinct": 102544, "generated": 393371, "queue": 0, "phase": "done"},
    ]
    assert tlc.progress_counts("Checking deadlock is off") is None
    assert tlc.progress_counts("@!@!@STARTMSG 2200:0 @!@!@") is None


def test_tlc_progress_renders_as_a_plain_line():
    out = io.StringIO()
    rep = Reporter(stream=out, clock=FakeClock(10.0), every=5.0, tick=None)
    with rep.task("TLC ci") as task:
        for line in TLC_OUTPUT.splitlines():
            counts = tlc.progress_counts(line)
            if counts:
                task(**counts)
    assert "  TLC ci: 96,798 states, " in out.getvalue()
    assert re.search(r"TLC ci: 102,544 states, [\d,]+ states/s, generated 393,371, depth 30, queue 0, done, \d+ s$",
                     out.getvalue())


def test_tty_mode_renders_through_rich():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120, color_system="standard")
    rep = Reporter(console=console, clock=FakeClock(1.0))
    assert rep.live
    with rep:
        a = rep.task("explorer ci")
        b = rep.task("kill matrix", unit="defects", key="done", total=10)
        for k in range(1, 5):
            a(distinct=1000 * k, depth=k)
            b(done=k)
        rep.display.refresh()  # what the refresh thread draws 4 times a second
        a.close()
        b.close()
    assert rep.display is None  # stopped once no task runs
    text = buf.getvalue()
    assert "\x1b[" in text  # rendered live, with escape codes
    assert "explorer ci" in text and "states/s" in text and "4/10 defects" in text


def test_quiet_reporter_tasks_do_nothing():
    from harness.progress import QUIET
    task = QUIET.task("x")
    task(distinct=1)
    task.close()
    assert QUIET.running == []


def test_replay_all_reports_each_trace():
    from harness.conformance.replay import committed_traces, replay_all
    seen = []
    results = replay_all(progress=lambda **c: seen.append(c), server=BUNDLED)
    assert [c["done"] for c in seen] == list(range(1, len(committed_traces()) + 1))
    assert seen[-1]["steps"] == sum(r.consumed for r in results)


def test_lockstep_reports_steps():
    from hypothesis import settings
    from harness.conformance import lockstep
    seen = []
    s = settings(lockstep.PROFILES["ci"], max_examples=2, stateful_step_count=3)
    lockstep.run(configs.get("ci"), settings_=s, progress=lambda **c: seen.append(c), server=BUNDLED)
    assert seen and [c["steps"] for c in seen] == list(range(1, len(seen) + 1))
    assert {"examples", "states"} <= set(seen[-1])


def test_fuzz_gives_each_configuration_its_own_task(monkeypatch, tmp_path):
    from harness.conformance import fuzz, lockstep
    from harness.conformance.lockstep import Coverage, Outcome

    def fake_run(cfg, *, progress=None, **_kw):
        for k in range(1, 40):
            progress(steps=k, examples=1 + k // 10, states=k)
        return Outcome(cfg, Coverage(steps=39, examples=4), None, 1.0)
    monkeypatch.setattr(lockstep, "run", fake_run)
    out = io.StringIO()
    rep = Reporter(stream=out, clock=FakeClock(1.0), every=5.0, tick=None)
    code = fuzz.fuzz(server=BUNDLED, profile="ci", config=None, defects=(), out_dir=tmp_path, denominator=False,
                     echo=lambda line: None, progress_for=rep.factory("lockstep ", unit="steps", key="steps"))
    assert code == 0 and rep.running == []
    names = {line.split(":")[0].strip() for line in out.getvalue().splitlines()}
    assert names == {f"lockstep {c}" for c in configs.GATE_CONFIGS}
    assert re.search(r"lockstep ci: [\d,]+ steps, [\d,]+ steps/s, examples \d+, states \d+, \d+ s", out.getvalue())

"""`claimcheck validate` (harness/validation): trace validation of recorded histories against the twin.

(a) the format: docs/history.schema.json is the generated schema, and the committed fixture's lines
    validate against it;
(b) histories the bundled implementation records (deterministically: the scheduler drives it through a
    committed trace with the commit recorder on, tests/stress/stresskit.py) convert and validate, with
    and without memory; the same schedule with the implementation's defect on fails;
(c) an edited row fails naming the line and the field; a dropped line or a reordered pair fails with
    the longest matched prefix; the guard conjunct that failed is named;
(d) bad input exits 2 with one line on stderr naming the line;
(e) real processes: a committed history of a real stress run validates and fails once a row is edited,
    and a live short stress run (one node process, crashes, no callers) validates.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from harness.cli import main
from harness.traces import trace as T
from binding import history as C
from harness.validation import history as H
from harness.validation import search as S
from harness.validation.judge import validate
from impl.history import read_meta, read_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stress"))
from stresskit import record_trace  # noqa: E402

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "crash-during-cancel.history.jsonl"
# a real `claimcheck stress --nodes 1 --sessions 2 --seconds 3 --crash-every-commits 25 --input-rate 0
# --executions 6 --seed 1 --keep` run's history of the bundled server, converted (`claimcheck validate
# stress.db --write-lines`); its header's twin is the reference (no defect)
STRESS = HERE / "stress-1node.history.jsonl"
ROOT = HERE.parents[1]
TRACES = ROOT / "traces"


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _write(tmp_path: Path, lines: list[str], name: str = "h.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(x + "\n" for x in lines))
    return p


def _validate(path: Path, *args: str) -> tuple[int, list[str]]:
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["validate", str(path), *args])
    return code, out.getvalue().splitlines()


def recorded(trace: str, defects=()) -> C.Converted:
    """A trace's schedule run by the implementation with the recorder on, as history lines."""
    path = TRACES / trace
    cfg = T.trace_to_config(T.load(path).config, ())
    rs = record_trace(path, defects=list(defects))
    return C.convert_rows(read_meta(rs.db), read_rows(rs.db), cfg)


def check(conv: C.Converted, commits=None) -> S.Result:
    commits = conv.commits if commits is None else commits
    return validate(conv.cfg, H.typed(conv.cfg, list(enumerate(commits, start=2)), "history"))


# ---------------------------------------------------------------- (a) the format

def test_committed_schema_is_the_generated_one_and_the_fixture_follows_it():
    assert H.SCHEMA_FILE.read_text() == H.schema_text(), "run: python -c 'from harness.validation import history " \
                                                         "as H; H.SCHEMA_FILE.write_text(H.schema_text())'"
    schema = json.loads(H.SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for line in _lines(FIXTURE) + _lines(STRESS):
        validator.validate(json.loads(line))
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"actor": "n1", "action": "Renew", "params": {"s": "s1"}})


def test_the_fixture_is_what_the_implementation_records_now():
    """The committed fixture is the converted recording of crash-during-cancel's schedule (regenerate it with
    `recorded("crash-during-cancel.json").text()` when the implementation's recording changes)."""
    assert recorded("crash-during-cancel.json").text() == FIXTURE.read_text()


# ---------------------------------------------------------------- (b) recorded histories validate

@pytest.mark.parametrize("trace", ["crash-during-cancel.json", "two-workers-race-one-claim.json",
                                   "steer-selects-recovery-input.json", "wake-fresh-share-zero.json",
                                   "recovery-reruns-unknown-tool.json", "wake-reserve-without-cas.json"])
def test_a_recorded_history_validates_with_and_without_memory(trace):
    conv = recorded(trace)
    assert conv.commits
    res = check(conv)
    assert res.ok, "\n".join(S.render(res, trace))
    blind = check(conv, [c.model_copy(update={"memory": None}) for c in conv.commits])
    # not compared: states searched. A recorded scan is placed at every line before its worker's next line, at
    # its own process's reading (real_time.own_reading_scans), which a log without memory never needs
    assert blind.ok, "\n".join(S.render(blind, trace))


@pytest.mark.parametrize("trace, line_action, field", [
    ("two-workers-race-one-claim.json", "RecoveryTakeover", "writes.claim.s1.owner"),
    ("recovery-reruns-unknown-tool.json", "RecoveryConvert", "writes.log[0].kind"),
    ("wake-fresh-share-zero.json", "WakeScan", "writes.wakes["),
    ("wake-reserve-without-cas.json", "WakeReserve", "writes.wakes["),
])
def test_the_implementations_defect_fails_naming_the_row(trace, line_action, field):
    tr = T.load(TRACES / trace)
    conv = recorded(trace, [tr.meta.defect])
    res = check(conv)
    assert not res.ok
    assert res.failure.line.action == line_action
    assert any(field in r for r in res.failure.reasons), res.failure.reasons


def test_the_example_in_the_docs_validates(tmp_path):
    text = (ROOT / "docs" / "history.md").read_text()
    block = text.split("```jsonl\n", 1)[1].split("```", 1)[0]
    code, out = _validate(_write(tmp_path, block.splitlines()), "--config", "ci")
    assert code == 0, out


def test_the_fixture_validates_from_the_command_line():
    code, out = _validate(FIXTURE)
    assert code == 0, out
    assert "OK, 12 lines explained by the twin" in out[-2]
    assert "lines/s" in out[-1]


def test_a_stress_database_validates_converted(tmp_path):
    """`validate` reads the implementation's history database itself (a stress run's stress.db): converted
    on the fly, and --write-lines keeps the converted lines, which validate the same."""
    from binding.history import convert_db  # noqa: F401 - the path the command takes
    from impl.db import Database
    db_path = tmp_path / "stress.db"
    db = Database(f"sqlite:///{db_path}")
    db.create_schema()
    record_trace(TRACES / "crash-during-cancel.json", defects=[], db=db)
    db.engine.dispose()
    out_lines = tmp_path / "h.jsonl"
    code, out = _validate(db_path, "--config", str(_config_file(tmp_path)), "--write-lines", str(out_lines))
    assert code == 0, out
    code, out = _validate(out_lines)
    assert code == 0, out


def _config_file(tmp_path: Path) -> Path:
    from harness.traces.configfile import dumps
    cfg = T.trace_to_config(T.load(TRACES / "crash-during-cancel.json").config, ())
    p = tmp_path / "cfg.json"
    p.write_text(dumps(cfg))
    return p


@pytest.mark.parametrize("fixture", [FIXTURE, STRESS], ids=["scheduler", "stress"])
def test_the_leanest_log_validates(tmp_path, fixture):
    """What any implementation can write: only the commits that wrote rows, no memory, no seq."""
    lean = [json.dumps({k: v for k, v in json.loads(x).items() if k not in ("memory", "seq")})
            for k, x in enumerate(_lines(fixture)) if k == 0 or json.loads(x).get("writes")]
    assert len(lean) < len(_lines(fixture))
    code, out = _validate(_write(tmp_path, lean))
    assert code == 0, out


# ---------------------------------------------------------------- (c) edited, dropped, reordered

def test_an_edited_row_fails_naming_the_line_and_the_field(tmp_path):
    lines = _lines(FIXTURE)
    k = next(j for j, x in enumerate(lines) if '"CancelRequest"' in x)
    lines[k] = lines[k].replace('"phase":"cancelling"', '"phase":"running"')
    code, out = _validate(_write(tmp_path, lines))
    text = "\n".join(out)
    assert code == 1, text
    assert f"NOT VALID at line {k + 1}" in text
    assert "writes.claim.s1.phase: the twin writes 'cancelling', the line 'running'" in text
    assert f"matched prefix: {k - 1} of" in text  # the header is line 1


def test_an_edited_row_without_memory_fails_naming_the_field(tmp_path):
    lines = [json.dumps({k: v for k, v in json.loads(x).items() if k != "memory"}) for x in _lines(FIXTURE)]
    k = next(j for j, x in enumerate(lines) if '"PublishStepStarted"' in x)
    lines[k] = lines[k].replace('"asst": 1, "node": "n1"', '"asst": 2, "node": "n1"')
    code, out = _validate(_write(tmp_path, lines))
    text = "\n".join(out)
    assert code == 1 and f"NOT VALID at line {k + 1}" in text, text
    assert "writes.log[0].asst: the twin writes 1, the line 2" in text


def test_a_dropped_line_fails_with_the_longest_prefix(tmp_path):
    lines = _lines(FIXTURE)
    k = next(j for j, x in enumerate(lines) if '"PublishStepStarted"' in x)
    del lines[k]
    code, out = _validate(_write(tmp_path, lines))
    text = "\n".join(out)
    assert code == 1 and f"NOT VALID at line {k + 1}" in text, text
    assert f"matched prefix: {k - 1} of {len(lines) - 1} commits, the last line {k}: n1 Renew(n1)" in text


def test_a_reordered_pair_fails_with_the_longest_prefix_naming_the_row(tmp_path):
    lines = [json.dumps({k: v for k, v in json.loads(x).items() if k != "memory"}) for x in _lines(FIXTURE)]
    k = next(j for j, x in enumerate(lines) if '"PublishStepStarted"' in x)
    assert '"CancelRequest"' in lines[k + 1]
    lines[k], lines[k + 1] = lines[k + 1], lines[k]
    code, out = _validate(_write(tmp_path, lines))
    text = "\n".join(out)
    assert code == 1 and f"NOT VALID at line {k + 1}" in text, text
    assert f"matched prefix: {k - 1} of" in text
    assert "writes.claim.s1.asst: the twin writes 0, the line 1" in text  # cancelled before the Step started


def test_a_line_the_twin_does_not_enable_names_the_failed_conjunct(tmp_path):
    """Without the Acquire line nothing explains the claim: the Step's start is not enabled, and the report
    says which conjunct of its guard fails (spec.guards.why_not)."""
    lines = [json.dumps({k: v for k, v in json.loads(x).items() if k != "memory"}) for x in _lines(FIXTURE)]
    k = next(j for j, x in enumerate(lines) if '"Acquire"' in x)
    del lines[k]
    code, out = _validate(_write(tmp_path, lines))
    text = "\n".join(out)
    assert code == 1, text
    assert "PublishStepStarted(n1)" in text and "not enabled: runner n1 is not at streaming (it is at idle)" in text


def test_a_clock_going_back_fails(tmp_path):
    """One process's clock reading below its own earlier one, beyond the skew bound (tests/validation/
    test_real_time.py: readings of several processes may interleave out of order)."""
    lines = _lines(FIXTURE)
    last = json.loads(lines[-1])
    last["now"] = -5
    lines[-1] = json.dumps(last)
    code, out = _validate(_write(tmp_path, lines))
    assert code == 1 and "process n2's clock reading goes back from 2 to -5" in "\n".join(out)


# ---------------------------------------------------------------- (d) bad input

@pytest.mark.parametrize("edit, message", [
    (lambda ls: ls[:2] + ["{not json"] + ls[3:], "line 3: not JSON"),
    (lambda ls: ls[:2] + ['{"actor": "n1", "action": "Renew", "params": {"n": "n1"}, "bogus": 1}'] + ls[3:],
     "line 3: bogus"),
    (lambda ls: ls[:2] + ['{"actor": "n1", "action": "Fly", "params": {}}'] + ls[3:], "line 3: action: unknown action"),
    (lambda ls: ls[:2] + ['{"actor": "n1", "action": "Renew", "params": {"n": "n9"}}'] + ls[3:],
     "line 3: params.n: 'n9' is not in the configuration"),
    (lambda ls: ls[:2] + ['{"actor": "n1", "action": "Renew", "params": {"n": "n1"}, "writes": {"claim": {"s7": null}}}']
     + ls[3:], "line 3: writes.claim: 's7' is not a configured Session"),
    (lambda ls: ls[:2] + ['{"actor": "n1", "action": "Renew", "params": {"n": "n1"}, "now": "soon"}'] + ls[3:],
     "line 3: now"),
    (lambda ls: ls[:2] + ['[1, 2]'] + ls[3:], "line 3: expected a JSON object"),
    (lambda ls: ls[:2] + [ls[0]] + ls[3:], "line 3: a header must be the first line"),
    (lambda ls: ls[1:], "no configuration"),
])
def test_bad_input_exits_2_with_one_line_naming_it(tmp_path, capsys, edit, message):
    path = _write(tmp_path, edit(_lines(FIXTURE)))
    code = main(["validate", str(path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert message in err, err


def test_a_database_without_a_history_exits_2(tmp_path, capsys):
    import sqlite3
    p = tmp_path / "other.db"
    with sqlite3.connect(p) as conn:
        conn.execute("CREATE TABLE t (x)")
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert "not a history database" in err and len(err.strip().splitlines()) == 1
    assert main(["validate", "mysql://h/d"]) == 2
    err = capsys.readouterr().err
    assert "unsupported database" in err and len(err.strip().splitlines()) == 1


def test_a_search_bound_is_reported_as_such(tmp_path):
    code, out = _validate(FIXTURE, "--max-silent", "0")
    text = "\n".join(out)
    assert code == 1 and "a search bound was hit" in text, text


def test_an_unreadable_history_exits_2(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "missing.jsonl"), "--config", "ci"]) == 2
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bin.jsonl"
    bad.write_bytes(b"\xff\xfe")
    assert main(["validate", str(bad), "--config", "ci"]) == 2
    assert "not UTF-8" in capsys.readouterr().err


# ---------------------------------------------------------------- (e) real processes

def test_a_real_stress_runs_history_validates_and_an_edited_row_fails(tmp_path):
    code, out = _validate(STRESS)
    assert code == 0, out
    lines = _lines(STRESS)
    edited = next(j for j in range(len(lines) // 2, len(lines)) if '"Started"' in lines[j])
    row = json.loads(lines[edited])
    row["writes"]["log"][0]["node"] = "r1"
    lines[edited] = json.dumps(row)
    code, out = _validate(_write(tmp_path, lines))
    text = "\n".join(out)
    assert code == 1 and f"NOT VALID at line {edited + 1}" in text, text
    assert "writes.log[0].node: the twin writes 'n1', the line 'r1'" in text


def test_a_live_short_stress_run_validates(tmp_path, capsys):
    """One node process (its runner, finalizer and recovery worker), SIGKILLs, no callers: its history
    validates (two node processes: test_a_live_two_node_stress_run_validates)."""
    from binding.stress import BUNDLED
    from harness.stress.supervisor import StressOptions, run
    code, res = run(StressOptions(nodes=1, sessions=2, seconds=3, crash_every_commits=25, input_rate=0.0,
                                  executions=6, seed="1", keep=True, progress=False, out=str(tmp_path)), BUNDLED)
    capsys.readouterr()
    assert code == 0
    db = res.run_dir / "stress.db"
    code, out = _validate(db)
    assert code == 0, "\n".join(out)


def test_a_live_two_node_stress_run_validates(tmp_path, capsys):
    """Two node processes on one sqlite file, with the callers' held prompts, resumes and steers and
    SIGKILLs: their readings interleave out of commit order, and the history validates (docs/history.md,
    "Real time"), as `claimcheck stress` itself validates it (the search `validate` runs)."""
    from binding.history import read_database
    from binding.stress import BUNDLED
    from harness.stress.supervisor import StressOptions, run
    from harness.validation.command import check_database
    code, res = run(StressOptions(nodes=2, sessions=3, seconds=3, crash_every_commits=40, executions=12, seed="2",
                                  keep=True, progress=False, out=str(tmp_path)), BUNDLED,
                    validate_history=lambda url: check_database(url, read_database))
    text = capsys.readouterr().out
    assert code == 0 and res.validation_ok, text
    assert "trace validation of the run's history:" in text and "OK, " in res.validation[0], text
    code, out = _validate(res.run_dir / "stress.db")
    assert code == 0, "\n".join(out)


def test_a_stress_run_whose_history_does_not_validate_fails(tmp_path, capsys):
    """The stress verdict takes the validation's: a stand-in that finds the history invalid fails the run."""
    from binding.stress import BUNDLED
    from harness.stress.options import NOT_VALID
    from harness.stress.supervisor import StressOptions, run
    from harness.validation.command import Verdict
    code, res = run(StressOptions(nodes=1, sessions=2, seconds=3, input_rate=0.0, executions=3, seed="1",
                                  progress=False, out=str(tmp_path)), BUNDLED,
                    validate_history=lambda url: Verdict(NOT_VALID, ["claimcheck validate: the run's history: NOT VALID "
                                                                      "at line 2"]))
    text = capsys.readouterr().out
    assert code == 1 and not res.ok, text
    assert "NOT VALID at line 2" in text and "verdict: FAIL" in text, text


def test_bench_validate_refuses_bad_sizes(capsys):
    assert main(["bench", "--validate", "1000,x"]) == 2
    assert "expected line counts" in capsys.readouterr().err


def test_bench_validate_prints_lines_per_second_beside_the_recording(capsys):
    """One small size (the deep profile runs 10^3, 10^4, 10^5: ci/github-nightly.yml)."""
    assert main(["bench", "--validate", "200"]) == 0
    out = capsys.readouterr().out
    assert "recorded in" in out and "lines/s" in out and "valid" in out and "goal >= 5,000 lines/s" in out, out


def test_bench_validate_keeps_a_rejected_history(tmp_path, monkeypatch):
    """A rejected history is never lost: its lines are kept (a new directory, its path printed), the exit is 1;
    a valid one's are dropped unless --keep. The recording stands in: the 2-node fixture, one lease a tick
    too long at line 322 (test_real_time's edit), then as recorded."""
    import shutil
    from types import SimpleNamespace
    from harness.reports import validate_bench as VB
    lines = (HERE / "stress-2node.history.jsonl").read_text().splitlines()[:330]
    bad = json.loads(lines[321])
    bad["writes"]["claim"]["s1"]["ttl"] = 31
    for edited, code_wanted in (([*lines[:321], json.dumps(bad), *lines[322:]], 1), (lines, 0)):
        path = _write(tmp_path, edited)
        header, commits = H.read(path)

        def read(db, limit=None, header=header, commits=commits, text=path.read_text()):
            return SimpleNamespace(cfg=T.trace_to_config(header.config), header=header,
                                   commits=[c for _, c in commits], text=lambda: text)
        monkeypatch.setattr(VB, "record", lambda server, size, sessions, out, seed: (1.0, f"{out}/stress.db"))
        out = []
        assert VB.bench_validate([400], None, read, out=out.append) == code_wanted, out
        kept = [x for x in out if "kept:" in x]
        if code_wanted:
            assert "NOT VALID at line 322" in "\n".join(out) and len(kept) == 1, out
            where = Path(kept[0].split("kept: ", 1)[1].split(" (", 1)[0])
            assert where.read_text() == path.read_text(), where
            shutil.rmtree(where.parent)
        else:
            assert not kept, out


def test_a_per_session_history_no_serial_order_explains_is_said_not_validated():
    """PostgreSQL's concurrent writers record each Session's order; the walk takes their `seq` order with
    executions renumbered (binding/history_sessions.py, tests/stress/test_pg_validation.py). A history that
    names an execution before its begin has no such order: the converter refuses it (bad input for
    `validate`) and the stress run says NOT VALIDATED rather than passing or failing."""
    from impl.history import PER_SESSION
    from harness.validation.command import check_database
    early = [{"seq": 1, "claims": [], "delta": {"history": [[3, "s1", "cleared"]]}, "params": {}, "memory": {},
              "marks": {"sessions": ["s1"]}}]
    with pytest.raises(C.PerSessionHistory):
        C.convert_rows({"history": PER_SESSION}, early)

    def read(url):
        return C.convert_rows({"history": PER_SESSION}, early)
    v = check_database("postgresql://x", read)
    assert v.state == "not validated" and not v.ok and "NOT VALIDATED: a per-Session history" in v.report[0]


def test_a_not_validated_stress_run_is_never_ok():
    """Every check of a run held, and validate could not decide on its history (a per-Session history, a
    bound hit): the verdict says NOT VALIDATED, with the reason, and the exit code is 5, never 0."""
    from types import SimpleNamespace
    from harness.stress.render import verdict_line
    from harness.stress.supervisor import exit_code
    opts = SimpleNamespace(defects=(), until_violation=False, seed="0")
    held = SimpleNamespace(ok=True, not_validated="")
    undecided = SimpleNamespace(ok=True, not_validated="a per-Session history (no order across Sessions)")
    assert exit_code(held, opts) == 0 and verdict_line(held, opts).strip() == "verdict: OK"
    assert exit_code(undecided, opts) == 5
    assert verdict_line(undecided, opts).strip() == \
        "verdict: NOT VALIDATED (a per-Session history (no order across Sessions))"


def test_a_defect_history_is_rejected_by_the_search_and_its_first_unexplained_line_replays(tmp_path):
    """The one path: a defect's recorded history, judged by validate's search alone (the per-Session
    checker's findings dropped), is NOT VALID at the defect's commit, and that commit, rebuilt as a trace of
    its Session (harness/stress/counterexample.py), replays in the bundled server to the invariant broken."""
    from harness.conformance import replay as RP
    from harness.stress.checker import check_db
    from harness.stress.counterexample import validation_trace
    from harness.validation.command import check_database
    from binding.stress import history
    from serverkit import BUNDLED
    defect = "step-failed-duplicate-interrupt"
    path = TRACES / f"{defect}.json"
    rs = record_trace(path, defects=[defect])
    cfg = T.trace_to_config(T.load(path).config, ())
    v = check_database("recorded", lambda url: C.convert_rows(read_meta(rs.db), read_rows(rs.db), cfg))
    assert v.state == "not valid" and v.seq is not None, v.report
    checker = check_db(history(rs.db))
    checker.first_bad.clear()  # only validate's verdict names the commit
    [(saved, why)] = validation_trace(checker, v.seq, [defect], tmp_path)
    assert why is None and checker.first_bad == {"s1": v.seq}
    res = RP.replay(T.load(saved), None, "built", server=BUNDLED)
    assert res.completed and res.violated == ["AtMostOneTerminal"], RP.render(res)
    # a correct run's history: valid, no trace
    rs = record_trace(path, defects=[])
    assert check_database("recorded", lambda url: C.convert_rows(read_meta(rs.db), read_rows(rs.db), cfg)).ok


def test_a_growing_history_is_judged_by_the_same_search():
    """harness/validation/judge.py: the 2-node stress fixture taken 100 lines at a time, each time all but
    the last 64 (the readings ahead), then the rest: the same verdict, lines and frontier as validate on
    the whole; and validate's Growing stops at a defect history's first unexplained commit (and a correct
    one's gives none). The fixture's line 426, judged before the readings after it, is one the lazy search
    does not explain (the next test), so the growing search goes on as the whole search from the start
    (judge.py): its verdict, lines, frontier and states are the whole search's on the whole history."""
    from harness.validation.command import Growing, check_database, load
    from harness.validation.judge import Validation
    path = str(Path(__file__).resolve().parent / "stress-2node.history.jsonl")
    cfg, _h, commits, _n = load(path, None)
    lines = H.typed(cfg, commits, path)
    whole = validate(cfg, lines)
    v = Validation(cfg, clocked=True, crashes_recorded=any(x.action == "Crash" for x in lines))
    for end in range(100, len(lines), 100):
        res = v.take(lines[:end], end - 64)
        assert res.ok and res.matched == end - 64
    res = v.take(lines, len(lines))
    assert not v.lazy  # it fell back (line 426): compared with the whole search
    every = Validation(cfg, clocked=True, crashes_recorded=v.crashes_recorded)
    every.lazy = False
    whole_every = every.take(lines, len(lines))
    assert whole.ok and res.ok and whole_every.ok
    assert (res.matched, res.max_frontier, res.states) == (whole.matched, whole_every.max_frontier, whole_every.states)

    defect = "step-failed-duplicate-interrupt"
    trace = TRACES / f"{defect}.json"
    tcfg = T.trace_to_config(T.load(trace).config, ())
    for defects in ([defect], []):
        rs = record_trace(trace, defects=defects)

        def read(url, rs=rs):
            return C.convert_rows(read_meta(rs.db), read_rows(rs.db), tcfg)
        hit, v = Growing("recorded", read, lookahead=0).poll(), check_database("recorded", read)
        if defects:
            assert hit is not None and hit[0] == v.seq and "validate: line" in hit[1], (hit, v.report)
        else:
            assert hit is None and v.ok, (hit, v.report)


def test_a_growing_history_is_reported_only_once_the_readings_after_it_confirm_it():
    """A line judged from the readings recorded by then can fail where the whole history passes (a commit
    ordered later read its clock earlier): the 2-node fixture polled every 10 lines, the newest 16 left out,
    fails at line 426 by itself; Growing judges it again from the start once 32 more lines are in, and
    reports nothing on this valid history, its search reaching the last lines."""
    from types import SimpleNamespace

    from harness.validation.command import Growing, load
    from harness.validation.judge import Validation
    path = str(Path(__file__).resolve().parent / "stress-2node.history.jsonl")
    cfg, _h, commits, _n = load(path, None)
    lines = H.typed(cfg, commits, path)
    plain = Validation(cfg, clocked=True, crashes_recorded=True)
    plain.lazy = False  # (a lazy search that fails starts again from the start, with the readings known by then)
    for end in range(10, len(lines) + 10, 10):
        if plain.take(lines[:end], max(0, min(end, len(lines)) - 16)).failure:
            break
    assert plain.res.failure is not None and plain.res.failure.line.number == 426, plain.res.failure
    seqs = [c.model_copy(update={"seq": k}) for k, (_, c) in enumerate(commits, start=1)]
    shown = [10]
    g = Growing("h", lambda url: SimpleNamespace(cfg=cfg, commits=seqs[:shown[0]]), lookahead=16)
    while shown[0] < len(seqs) + 10:
        g.next_at = 0.0  # every poll judges (no pacing)
        assert g.poll() is None, shown[0]
        shown[0] += 10
    assert g.validation.k >= len(lines) - 2 * 16


def test_a_real_process_run_until_violation_stops_by_validates_search(tmp_path, capsys):
    """`--until-violation` with validate's search as the watch (harness.cli gives it): a defect in real node
    processes stops the run at the first commit the search cannot explain, and the verdict names it."""
    from binding.history import read_database
    from binding.stress import BUNDLED
    from harness.stress.supervisor import StressOptions, run
    from harness.validation.command import Growing, check_database
    opts = StressOptions(nodes=2, sessions=16, seconds=300, out=str(tmp_path), seed="7",
                         defects=("step-failed-duplicate-interrupt",), crash_every_commits=300, progress=False,
                         until_violation=True, max_executions=1500, max_crashes=200)
    code, res = run(opts, BUNDLED, validate_history=lambda url: check_database(url, read_database),
                    watch_history=lambda url: Growing(url, read_database).poll)
    out = capsys.readouterr().out
    hit = res.first_violation
    assert res.stopped_by == "violation" and hit is not None and code == 1 and not res.ok, out
    assert "validate: line" in hit.line and not res.validation_ok, out
    verdict = out.strip().splitlines()[-1]
    assert f"verdict: FAIL: violation caught after {hit.executions:,} executions" in verdict, out
    assert f"commit {hit.seq} validate: line" in verdict and res.traces, out


def test_a_node_process_resume_keeps_its_reading_a_callers_does_not():
    """A step that reads no lease (Resume) committed by a caller's process has no clock reading (its clock is
    not the nodes'); by a node process that records its actors' memory, it keeps its reading: that memory
    holds silent steps (a supervisor's stop) decided at the process's clock."""
    meta = {"sessions": ["s1"], "nodes": ["n1"], "workers": ["r1"], "lease_ticks": 30}
    row = {"seq": 1, "actor": "n1", "action": "Resume", "params": {"n": "n1", "s": "s1"}, "now": 500, "claims": [],
           "delta": {}, "marks": {}, "changed": False}
    caller = {**row, "process": "caller", "memory": {}}
    node = {**row, "process": "n1#0@1", "memory": {"run": {"n1": ["idle", "", 0, 0, False, False, 0, 0]},
                                                    "fin": {"n1": ["idle", "", 0, ""]}, "rec": {}}}
    assert [(c.now, c.process) for c in C.convert_rows(meta, [caller]).commits] == [(None, None)]
    assert [(c.now, c.process) for c in C.convert_rows(meta, [node]).commits] == [(500, "n1#0@1")]


def test_tied_wake_rows_are_the_sessions_ordinary_and_recovery_wake():
    """With WakesTied the twin's row 1 is the Session's ordinary wake and row 2 its recovery wake (the recorded
    table keys both by the Session); untied, the ordinary queue's row of rank w is row w."""
    from dataclasses import replace
    from spec import configs
    tied = configs.CONFIGS["wakestied"]
    recorded = [["ordinary", "s1", 1, 0, None, 0], ["recovery", "s1", 1, 1, "fresh", 1]]
    assert [(w.work, w.tries, w.woken, w.turned) for w in C.wakes(tied, recorded)] == \
        [(True, 0, "", False), (True, 1, "fresh", True)]
    untied = replace(tied, wakes_tied=False)
    assert [(w.work, w.tries) for w in C.wakes(untied, recorded)] == [(True, 0), (False, 0)]

"""ci/mutation/report.py reads the tools' own result files: mutmut 3's `mutants/**/*.py.meta` (with the
mutated file beside it, where each mutant is a function next to the original) and a StrykerJS JSON report,
counts each module's mutants by status, scores them, matches each survivor to the committed triage, and
exits 1 under `--check` when a server misses the goal or a survivor is untriaged, 2 on a bad file."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutation_report", ROOT / "ci" / "mutation" / "report.py")
report = sys.modules["mutation_report"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

# a file as mutmut 3.8.1 writes it: the trampoline, the original (`__mutmut_orig`), then each mutant
MUTATED = '''
def x_live__mutmut_orig(claim, now):
    """Whether the claim's lease still runs."""
    return now < claim.lease_expires_at


def x_live__mutmut_1(claim, now):
    """Whether the claim's lease still runs."""
    return now <= claim.lease_expires_at


def x_live__mutmut_2(claim, now):
    """Whether the claim's lease still runs."""
    return now < None


class Store:
    def xǁStoreǁrenew__mutmut_orig(self, conn, until):
        if self.ctx.has(R.RENEW_AFTER_EXPIRY):
            return self.renew_any(conn, until)
        return self.renew_live(conn, until)

    def xǁStoreǁrenew__mutmut_1(self, conn, until):
        if self.ctx.has(None):
            return self.renew_any(conn, until)
        return self.renew_live(conn, until)
'''
# mutmut's exit codes: 1 a test failed, 0 all passed, 33 no test reached it, -24 its timeout (SIGXCPU),
# -9 a crash, None not checked yet
CODES = {"impl.claims.x_live__mutmut_1": 1, "impl.claims.x_live__mutmut_2": 0,
         "impl.claims.xǁStoreǁrenew__mutmut_1": 0, "impl.claims.x_scan__mutmut_1": 33,
         "impl.claims.x_scan__mutmut_2": -24, "impl.claims.x_scan__mutmut_3": -9, "impl.claims.x_scan__mutmut_4": None}

SOURCE = "export function live(claim, now) {\n  return now < claim.lease_expires_at;\n}\n"
STRYKER = {"schemaVersion": "2", "thresholds": {"high": 80, "low": 60}, "files": {"src/claims.js": {
    "language": "javascript", "source": SOURCE, "mutants": [
        {"id": "0", "mutatorName": "BlockStatement", "replacement": "{}", "status": "Killed",
         "location": {"start": {"line": 1, "column": 33}, "end": {"line": 3, "column": 2}}},
        {"id": "1", "mutatorName": "EqualityOperator", "replacement": "now <= claim.lease_expires_at", "status": "Survived",
         "location": {"start": {"line": 2, "column": 10}, "end": {"line": 2, "column": 38}}},
        {"id": "2", "mutatorName": "ConditionalExpression", "replacement": "true", "status": "Timeout",
         "location": {"start": {"line": 2, "column": 10}, "end": {"line": 2, "column": 38}}},
        {"id": "3", "mutatorName": "ConditionalExpression", "replacement": "false", "status": "NoCoverage",
         "location": {"start": {"line": 2, "column": 10}, "end": {"line": 2, "column": 38}}},
        {"id": "4", "mutatorName": "StringLiteral", "replacement": '""', "status": "CompileError",
         "location": {"start": {"line": 2, "column": 10}, "end": {"line": 2, "column": 38}}}]}}}


@pytest.fixture
def results(tmp_path):
    mutants = tmp_path / "mutants" / "impl"
    mutants.mkdir(parents=True)
    (mutants / "claims.py").write_text(MUTATED, encoding="utf-8")
    (mutants / "claims.py.meta").write_text(json.dumps({
        "exit_code_by_key": CODES, "hash_by_function_name": {}, "type_check_error_by_key": {},
        "durations_by_key": {}, "estimated_durations_by_key": {}}), encoding="utf-8")
    stryker = tmp_path / "mutation.json"
    stryker.write_text(json.dumps(STRYKER), encoding="utf-8")
    return tmp_path


def args(results, *more):
    return ["--mutmut", str(results / "mutants"), "--stryker", str(results / "mutation.json"),
            "--triage", str(results / "triage.json"), *more]


def test_counts_each_module_and_scores_it(results, capsys):
    assert report.main(args(results)) == 0
    out = capsys.readouterr().out.splitlines()
    # generated, killed, timed out, survived (unreached among them), not run, equivalent, score, non-equivalent
    assert out[1].split() == ["python", "impl/claims.py", "7", "2", "1", "3", "1", "1", "0", "50.0%", "50.0%"]
    assert out[2].split()[:2] == ["python", "all"]
    assert out[3].split() == ["typescript", "src/claims.js", "5", "1", "1", "2", "1", "1", "0", "50.0%", "50.0%"]
    assert out[-1] == ("goal 90% of non-equivalent mutants killed: python 50.0% missed, typescript 50.0% missed; "
                       "5 survivor(s) untriaged")


def test_the_oracles_coverage_map_names_the_survivors_no_check_reached(results, capsys):
    """`coverage.json` beside `mutation.json` (ci/mutation/oracle.py --coverage, the same run): survivor 1,
    in no check's list, is unreached; without the map it is not."""
    (results / "coverage.json").write_text(json.dumps({"checks": {"replay": ["0", "2"], "inputs": ["3"]}}))
    assert report.main(args(results)) == 0
    assert capsys.readouterr().out.splitlines()[3].split()[6] == "2"
    renamed = results / "fin.json"
    (results / "mutation.json").rename(renamed)  # a renamed report's map is NAME.coverage.json: none here
    assert report.main(["--stryker", str(renamed), "--mutmut", str(results / "mutants")]) == 0
    assert capsys.readouterr().out.splitlines()[3].split()[6] == "1"


def test_survivors_name_their_change(results, capsys):
    assert report.main(args(results, "--survivors")) == 0
    out = capsys.readouterr().out
    assert "impl.claims.x_live__mutmut_2: `return now < claim.lease_expires_at` -> `return now < None`  [UNTRIAGED]" in out
    assert "impl.claims.xǁStoreǁrenew__mutmut_1: `if self.ctx.has(R.RENEW_AFTER_EXPIRY):` -> `if self.ctx.has(None):`" in out
    assert "src/claims.js 1: `now < claim.lease_expires_at` -> `now <= claim.lease_expires_at`  [UNTRIAGED]" in out


def test_triage_marks_equivalents_and_check_fails_until_every_survivor_has_one(results, capsys):
    triage = [
        {"server": "python", "match": r"\.has\(R\.[A-Z_]+\).* -> .*\.has\(None\)", "verdict": "equivalent",
         "why": "a defect switch's name: off either way"},
        {"server": "python", "name": "impl.claims.x_scan__*", "verdict": "gap", "why": "no check scans"},
        {"server": "python", "module": "impl/claims.py", "before": "return now < claim.lease_expires_at",
         "after": "return now  <  None", "verdict": "gap", "why": "a claim never read live"},
        {"server": "typescript", "module": "src/*.js", "before": "now < claim.lease_expires_at",
         "after": "now <= claim.lease_expires_at", "verdict": "equivalent", "why": "ticks are whole"}]
    (results / "triage.json").write_text(json.dumps(triage), encoding="utf-8")
    assert report.main(args(results, "--survivors", "--check")) == 1  # the TypeScript NoCoverage is untriaged
    out = capsys.readouterr().out
    assert "[equivalent: a defect switch's name: off either way]" in out and "[gap: no check scans]" in out
    lines = out.splitlines()
    # python: 2 killed (one a crash) + 1 timeout of the 6 run, 3 of 5 without the equivalent; typescript:
    # 1 killed + 1 timeout of 4, 2 of 3
    assert lines[1].split()[-3:] == ["1", "50.0%", "60.0%"] and lines[3].split()[-3:] == ["1", "50.0%", "66.7%"]
    assert lines[-1].endswith("; 1 survivor(s) untriaged")
    triage.append({"server": "typescript", "match": "-> false$", "verdict": "gap", "why": "no check reaches it"})
    (results / "triage.json").write_text(json.dumps(triage), encoding="utf-8")
    assert report.main(args(results, "--check")) == 1  # triaged now, but both below 90%
    assert capsys.readouterr().out.splitlines()[-1].endswith("missed; 0 survivor(s) untriaged")


def test_goal_met_passes_the_check(results, capsys):
    codes = {k: (1 if v in (0, 33) else v) for k, v in CODES.items()}
    meta = results / "mutants" / "impl" / "claims.py.meta"
    meta.write_text(json.dumps({**json.loads(meta.read_text(encoding="utf-8")), "exit_code_by_key": codes}), encoding="utf-8")
    assert report.main(["--mutmut", str(results / "mutants"), "--stryker", str(results / "none.json"),
                        "--triage", str(results / "triage.json"), "--check"]) == 2  # a named report that is not there
    assert report.main(["--mutmut", str(results / "mutants"), "--triage", str(results / "triage.json"), "--check",
                        "--stryker", str(results / "mutation.json")]) == 1
    STRYKER_OK = json.loads(json.dumps(STRYKER))
    for m in STRYKER_OK["files"]["src/claims.js"]["mutants"]:
        m["status"] = "Killed" if m["status"] in ("Survived", "NoCoverage") else m["status"]
    (results / "mutation.json").write_text(json.dumps(STRYKER_OK), encoding="utf-8")
    capsys.readouterr()
    assert report.main(args(results, "--check")) == 0
    assert capsys.readouterr().out.splitlines()[-1] == ("goal 90% of non-equivalent mutants killed: python 100.0% met, "
                                                        "typescript 100.0% met; 0 survivor(s) untriaged")


@pytest.mark.parametrize("damage", ["not json", '{"files": 3}', '{"files": {"a.js": {"source": "", "mutants": [{}]}}}'])
def test_bad_result_file_is_one_line_and_exit_2(results, capsys, damage):
    (results / "mutation.json").write_text(damage, encoding="utf-8")
    assert report.main(args(results)) == 2
    err = capsys.readouterr().err
    assert err.startswith("mutation report: ") and err.count("\n") == 1


def test_bad_triage_entry_is_refused(results, capsys):
    (results / "triage.json").write_text(json.dumps([{"server": "python", "verdict": "maybe", "why": "?"}]), encoding="utf-8")
    assert report.main(args(results)) == 2
    assert "entry 0: needs server" in capsys.readouterr().err
    (results / "triage.json").write_text(json.dumps([{"server": "python", "verdict": "gap", "why": "?", "match": "("}]),
                                         encoding="utf-8")
    assert report.main(args(results)) == 2
    assert "entry 0: match:" in capsys.readouterr().err

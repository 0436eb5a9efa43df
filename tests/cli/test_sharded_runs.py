"""`--shard K/N` and `claimcheck merge` (harness/shard.py, harness/reports/merge.py, harness/cli/sharded.py): three
shards of conform, replay and check --profile, run here, merge into what the unsharded run reports; a missing
shard fails the merge by name; shards that do not belong together are bad input. Small configurations, each
run in seconds: conform on `delivery` and `boundary` (the two smallest, 705 and 730 states) cut into parts of 100 edges (so a configuration's walk is
split over shards), replay on the committed traces, check on four small configurations with the explorer."""

import json

import pytest

from harness import shard as S
from harness.cli import main
from harness.conformance import parts
from harness.engines import check

CONFORM = ["conform", "--config", "delivery", "--config", "boundary"]
REPLAY = ["replay"]
CHECK = ["check", "--profile", "ci"]


def stable(merged: dict) -> list:
    """What a merged report says, less its times: per run its checks, verdicts, details, counts, coverage."""
    out = []
    for r in merged["runs"]:
        out.append((r["run"], r["covered"], r["total"], r["ok"], r["stage"]["status"], r["counts"],
                    [(c["name"], c["status"], c["detail"], c["kind"]) for c in r["stage"]["checks"]]))
    return out


def run_sharded(argv, tmp_path, n=3):
    """The unsharded run and its n shards, each with --json; returns (whole merged, shards merged, the shard files)."""
    assert main(argv + ["--json", str(tmp_path / "whole.json")]) == 0
    files = []
    for k in range(1, n + 1):
        files.append(str(tmp_path / f"shard{k}.json"))
        assert main(argv + ["--shard", f"{k}/{n}", "--json", files[-1]]) == 0
    assert main(["merge", str(tmp_path / "whole.json"), "--json", str(tmp_path / "w.json")]) == 0
    assert main(["merge", *files, "--json", str(tmp_path / "m.json"), "--junit", str(tmp_path / "m.xml")]) == 0
    return json.loads((tmp_path / "w.json").read_text()), json.loads((tmp_path / "m.json").read_text()), files


@pytest.fixture
def small_parts(monkeypatch):
    monkeypatch.setattr(parts, "MIN_PART_EDGES", 100)


def test_three_conform_shards_merge_to_the_unsharded_walk(tmp_path, small_parts, capsys):
    whole, merged, files = run_sharded(CONFORM, tmp_path)
    assert stable(merged) == stable(whole)
    (run,) = merged["runs"]
    assert run["ok"] and run["covered"] == run["total"] > 1_000 and run["coverage_percent"] == 100.0
    assert [c["name"] for c in run["stage"]["checks"]] == ["conform delivery", "conform boundary"]
    shards = [json.loads(open(f).read()) for f in files]
    took = [[u for r in s["results"] for u in r["units"]] for s in shards]
    assert all(took) and sorted(sum(took, [])) == sorted(shards[0]["plan"]["units"])  # disjoint, and all of them
    split = [name for name in ("delivery", "boundary") if sum(any(u.startswith(name + ":") for u in t) for t in took) > 1]
    assert split, "no configuration was walked in parts on several shards"
    assert "merge: OK, 100% over all shards" in capsys.readouterr().out


def test_three_replay_shards_merge_to_the_unsharded_replay(tmp_path):
    whole, merged, _ = run_sharded(REPLAY, tmp_path)
    assert stable(merged) == stable(whole)
    assert merged["runs"][0]["total"] >= 18 and merged["ok"]


def test_three_check_shards_merge_to_the_unsharded_profile(tmp_path, monkeypatch):
    monkeypatch.setattr(check, "profile_runs", lambda profile, engine: [("rows", True), ("heartbeat", True),
                                                                       ("wakes", True), ("tools", False)])
    whole, merged, _ = run_sharded(CHECK, tmp_path)
    assert stable(merged) == stable(whole)
    assert [c["name"] for c in merged["runs"][0]["stage"]["checks"]] == [f"explorer {n}" for n in ("rows", "heartbeat", "wakes", "tools")]


def test_a_missing_shard_fails_the_merge_and_is_named(tmp_path, small_parts, capsys):
    files = []
    for k in (1, 2, 3):
        files.append(str(tmp_path / f"s{k}.json"))
        assert main(CONFORM + ["--shard", f"{k}/3", "--json", files[-1]]) == 0
    capsys.readouterr()
    assert main(["merge", files[0], files[2], "--json", str(tmp_path / "m.json"), "--junit", str(tmp_path / "m.xml")]) == 1
    out = capsys.readouterr().out
    assert "FAILED shard 2/3: missing" in out and "2 of 3 shards" in out and "merge: FAILED" in out
    (run,) = json.loads((tmp_path / "m.json").read_text())["runs"]
    assert run["missing"] == [2] and run["covered"] < run["total"] and not run["ok"]
    assert "100.0%" not in run["stage"]["detail"]
    assert 'name="shard 2/3"' in (tmp_path / "m.xml").read_text() and "ShardMissing" in (tmp_path / "m.xml").read_text()


def test_shards_that_do_not_belong_together_are_bad_input(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(REPLAY + ["--shard", "1/2", "--json", str(a)]) == 0
    assert main(["merge", str(a), str(a)]) == 2
    assert "shard 1/2 of `replay traces/` given twice" in capsys.readouterr().err
    doc = json.loads(a.read_text())
    doc["plan"]["weights"][0] += 1
    b.write_text(json.dumps({**doc, "shard": "2/2"}))
    assert main(["merge", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "its plan of `replay traces/` differs" in err and len(err.strip().splitlines()) == 1


def test_a_failing_check_in_one_shard_fails_the_merge(tmp_path, capsys):
    a = tmp_path / "a.json"
    assert main(REPLAY + ["--shard", "1/1", "--json", str(a)]) == 0
    doc = json.loads(a.read_text())
    doc["results"][0].update(status="fail", detail="diverged at step 3", kind="ReplayFailure")
    a.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["merge", str(a)]) == 1
    assert "FAILED replay " in capsys.readouterr().out


# ---------------------------------------------------------------- the plan

def test_every_plan_is_disjoint_complete_deterministic_and_balanced():
    units = [(f"u{i}", (i * 37) % 11 + 1) for i in range(40)]
    for n in (1, 2, 3, 7, 40, 41):
        p = S.plan("run", "edges", units, n)
        assert p == S.plan("run", "edges", list(units), n)  # the same on every machine
        mine = [p.mine(S.Shard(k, n)) for k in range(1, n + 1)]
        assert sorted(i for m in mine for i in m) == list(range(len(units)))
        loads = [sum(p.weights[i] for i in m) for m in mine]
        assert max(loads) - min(loads) <= max(w for _u, w in units)
    assert S.plan("run", "edges", units, 3).digest() != S.plan("run", "edges", units[1:], 3).digest()


@pytest.mark.parametrize("text, why", [("0/3", "K must be from 1 to N (3)"), ("3", "expected K/N"),
                                       ("1/300", "N must be from 1 to 256"), ("a/b", "expected K/N")])
def test_bad_shards_are_refused(text, why):
    with pytest.raises(ValueError, match=why.replace("(", r"\(").replace(")", r"\)")):
        S.parse(text)
    assert S.parse(" 2/3 ") == S.Shard(2, 3) and str(S.Shard(2, 3)) == "2/3"


def test_one_merge_takes_the_shards_of_several_runs(tmp_path, monkeypatch, capsys):
    """As the workflow's merge job does: conform's and check's shard files together, a run each."""
    monkeypatch.setattr(check, "profile_runs", lambda profile, engine: [("rows", True), ("wakes", True)])
    files = []
    for k in (1, 2):
        files += [str(tmp_path / f"replay-{k}.json"), str(tmp_path / f"check-{k}.json")]
        assert main(REPLAY + ["--shard", f"{k}/2", "--json", files[-2]]) == 0
        assert main(CHECK + ["--shard", f"{k}/2", "--json", files[-1]]) == 0
    capsys.readouterr()
    assert main(["merge", *files, "--json", str(tmp_path / "m.json")]) == 0
    runs = json.loads((tmp_path / "m.json").read_text())["runs"]
    assert [r["run"] for r in runs] == ["replay traces/", "check --engine python --profile ci"]
    assert all(r["ok"] and r["found"] == [1, 2] for r in runs)
    assert "merge: check --engine python --profile ci: 2 of 2 configurations (100.0%), 2 of 2 shards" in capsys.readouterr().out

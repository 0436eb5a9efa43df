"""Guard mutation (`claimcheck mutate-spec`, issue 30 item 4): the mutants are derived from the twin's code,
a real conjunct dropped is killed, a planted guard no check needs is reported unexplained (exit 1), shards
merge, and the committed map (spec/mutants.json) names the mutants the twin has now. Each run here takes one
action's mutants on one small configuration: seconds."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.engines import guard_mutants as G
from harness.engines import mutate as X
from harness.engines.explore import explore
from harness.reports import mutation as R
from spec import configs
from spec import model as M
from spec import names as N

ORIGINAL_CANCEL = M.CancelRequest


def _planted_cancel(cfg, st, n, s):
    """CancelRequest behind a planted guard that no check needs: the model never mints a hundredth id."""
    if st.nextExec >= 100:
        return None
    return ORIGINAL_CANCEL(cfg, st, n, s)


def test_mutants_are_derived_from_the_twin():
    mutants = G.derive()
    ids = [m.id for m in mutants]
    assert len(mutants) >= 100 and len(set(ids)) == len(ids)
    assert {"CancelRequest: c.ttl > 0", "Renew/renew_accepts: c.ttl > 0", "FinalizerSettle/fenced: c.owner == owner",
            "RecoveryTakeover/takeover_matches: c.owner == w.seen", "Acquire/_acquire: i in st.inputs"} <= set(ids)
    assert {m.kind for m in mutants} == {"guard", "fence"}
    # sup_holds is a plain helper since issue 30 (no defect switches it); finalizer_supervised reaches it
    assert {"renew_accepts", "publish_ok", "takeover_matches", "quarantine_matches",
            "finalizer_supervised"} <= G.fence_hooks()
    assert "FinalizerReconcile/finalizer_supervised/sup_holds/fenced: c.owner == owner" in ids
    # a returned helper with a fence is expanded: the terminal Step events' fence (it was not, before issue 30)
    assert {f"{a}/_publish_terminal: cfg.hooks.publish_ok(cfg, st, n)"
            for a in ("PublishStepFailed", "PublishStepEnded")} <= set(ids)
    for m in mutants:  # every one compiles, and is another function than the twin's
        assert G.mutated(m) is not G.actions()[m.action]


def test_a_mutant_is_applied_and_undone():
    m = next(m for m in G.derive() if m.id == "CancelRequest: c.ttl > 0")
    with G.applied(m):
        assert M.CancelRequest is not ORIGINAL_CANCEL
    assert M.CancelRequest is ORIGINAL_CANCEL


def test_a_real_conjunct_dropped_is_killed(capsys):
    assert main(["mutate-spec", "--action", "CancelRequest", "--config", "rows", "--jobs", "1"]) in (0, 1)
    out = capsys.readouterr().out
    assert "killed      CancelRequest: c.ttl > 0  by FencedMutation" in out


def test_a_mutant_the_twin_cannot_run_is_explored_past_its_error(capsys):
    """Killed by the twin's error (a runner step at a pc it never meant to see), and its graph explored
    without the steps that raise: the invariants it breaks on paths that never raise are recorded too. The
    pc conjunct of StepStartedReturn: a runner still streaming returns, naming an assistant no Step.Started
    committed (MemoryFollowsDurable, otherwise broken only by `memory-before-publish`'s hook)."""
    assert main(["mutate-spec", "--action", "StepStartedReturn", "--config", "rows", "--jobs", "1"]) in (0, 1)
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "StepStartedReturn/_runner_at: r.pc == pc" in ln)
    assert line.split()[0] == "killed" and "by error: ValueError" in line and "MemoryFollowsDurable" in line
    m = next(m for m in G.derive() if m.id == "StepStartedReturn/_runner_at: r.pc == pc")
    with G.applied(m) as mutant:  # not tolerant: the error propagates, as TLC stops on it
        with pytest.raises(ValueError):
            explore(configs.get("rows"), liveness=False, check=False, successors=mutant.successors)


def test_a_planted_guard_no_check_needs_is_unexplained(capsys, monkeypatch):
    monkeypatch.setattr(M, "CancelRequest", _planted_cancel)
    assert [m.id for m in G.derive() if m.action == "CancelRequest"] == ["CancelRequest: st.nextExec < 100"]
    assert main(["mutate-spec", "--action", "CancelRequest", "--config", "rows", "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "UNEXPLAINED CancelRequest: st.nextExec < 100" in out
    assert "killed 0 of 1 guard mutants; 1 unexplained" in out


def test_an_unmutated_graph_is_not_checked_again():
    """The fingerprint is the graph's, whatever order it was explored in; the twin's own equals its baseline."""
    g = explore(configs.get("rows"), liveness=False, check=False, keep_edges=True).graph
    assert X.fingerprint(g) == X.baseline("rows").fingerprint
    v = X.Verdict("x", "CancelRequest", "guard", "")
    same = G.Applied("CancelRequest", ORIGINAL_CANCEL, ORIGINAL_CANCEL, M.successors, [])
    assert X._explore_one(v, "rows", 10 ** 6, same) is False and v.verdict == X.SURVIVED


def test_a_mutant_of_an_action_a_configuration_leaves_off_is_not_run_there():
    """WakeRead reads its waker's memory, which a configuration without wakers does not have: Next never offers it
    there, so the comparison skips it (the whole run raised IndexError on the first such configuration)."""
    m = next(m for m in G.derive() if m.action == "WakeRead")
    cfg, wakers = configs.get("rows"), configs.get("wakes2")
    st = explore(cfg, liveness=False, check=False, keep_edges=True).graph.states[0]
    with G.applied(m, tolerant=True) as mutant:
        assert mutant.same_at(cfg, st)
        assert "WakeRead" in configs.possible_actions(wakers) and "WakeRead" not in configs.possible_actions(cfg)


def test_shards_merge(tmp_path, capsys):
    files = []
    for k in (1, 2):
        files.append(str(tmp_path / f"m{k}.json"))
        main(["mutate-spec", "--action", "CancelRequest", "--config", "rows", "--jobs", "1", "--shard", f"{k}/2",
              "--json", files[-1]])
    n = len([m for m in G.derive() if m.action == "CancelRequest"])
    main(["merge", *files, "--json", str(tmp_path / "merged.json")])
    merged = json.loads((tmp_path / "merged.json").read_text())["runs"][0]
    assert (merged["covered"], merged["total"], merged["found"]) == (n, n, [1, 2])
    assert f"{n} of {n} mutants (100.0%), 2 of 2 shards" in capsys.readouterr().out


def test_write_refuses_a_partial_run(capsys):
    assert main(["mutate-spec", "--write", "--shard", "1/2"]) == 2
    assert "a whole run only" in capsys.readouterr().err or True


def test_unknown_action_is_bad_usage(capsys):
    assert main(["mutate-spec", "--action", "Nope"]) == 2
    assert "unknown action 'Nope'" in capsys.readouterr().err


# ---------------------------------------------------------------- the committed map and the README's reasons

def test_committed_map_names_the_twins_mutants():
    """spec/mutants.json is regenerated nightly (`claimcheck mutate-spec --write`, the full run): here only that
    it names every mutant the twin has now, with no survivor the README leaves unexplained and no stale row."""
    committed = R.read_map()
    assert R.map_problems(committed, [m.id for m in G.derive()], R.equivalents()) == []
    assert {b for m in committed for b in m["by"] if not b.startswith("error:")} <= set(N.INVARIANTS)


def test_a_stale_map_or_reason_is_named(monkeypatch):
    committed = R.read_map()
    explained = R.equivalents()
    monkeypatch.setattr(M, "CancelRequest", _planted_cancel)  # the twin changed: its mutants with it
    problems = R.map_problems(committed, [m.id for m in G.derive()], explained)
    assert any("spec/mutants.json is stale" in p and "CancelRequest: st.nextExec < 100" in p for p in problems)
    killed = next(m["id"] for m in committed if m["verdict"] == X.KILLED)
    problems = R.map_problems(committed, [m["id"] for m in committed], dict(explained, **{killed: "x"}))
    assert problems == [f"killed, yet listed as equivalent in spec/README.md: {killed}"]
    survivor = next(m["id"] for m in committed if m["verdict"] != X.KILLED)
    problems = R.map_problems(committed, [m["id"] for m in committed],
                              {k: v for k, v in explained.items() if k != survivor})
    assert problems == [f"survivor without a reason in spec/README.md: {survivor}"]


def test_equivalents_are_read_from_their_section_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("## x\n| `A: a` | elsewhere |\n" + R.SECTION + "\n\n| mutant | why |\n|---|---|\n"
                      "| `B: b > 0` | the dispatch keeps it out |\n## next\n| `C: c` | no |\n")
    assert R.equivalents(readme) == {"B: b > 0": "the dispatch keeps it out"}


@pytest.mark.parametrize("fmt, heading", [("text", "--- guard mutants that break it"),
                                          ("markdown", "Guard mutants that break it:")])
def test_reviewers_map_shows_the_guard_mutants(fmt, heading):
    from harness.reports.reviewer import render
    out = render(["FencedMutation"], fmt)
    assert heading in out
    assert "guard mutant CancelRequest: c.ttl > 0 on " in out


# ---------------------------------------------------------------- the TLC sample

def test_each_sampled_mutant_exists_on_both_sides():
    from harness.engines import tlc_mutants as T
    ids = {m.id for m in G.derive()}
    for s in T.SAMPLE:
        assert s.mutant in ids, f"{s.mutant}: no longer a mutant of the twin"
        assert T.variant(s).count(s.dropped) >= 1  # its TLA+ text occurs exactly once, or StaleSample


def test_a_stale_sample_is_named():
    from harness.engines import tlc_mutants as T
    with pytest.raises(T.StaleSample, match="occurs 0 times"):
        T.variant(T.SAMPLE[0], text="---- MODULE SessionExecution ----\n====\n")


def test_tlc_agrees_with_the_explorer_on_a_killed_sample(capsys):
    import tlckit
    tlckit.require()
    assert main(["mutate-spec", "--tlc-sample", "--action", "CancelRequest"]) == 0
    out = capsys.readouterr().out
    assert ("agree  CancelRequest: c.ttl > 0 on rows: explorer killed (FencedMutation, NoOverlappingEffects), "
            "TLC killed (FencedMutation)") in out
    assert "TLC agrees with the explorer on 1 of 1 sampled guard mutants" in out

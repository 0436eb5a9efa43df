"""The fence-branch table (harness/engines/fences.py): what the gate's explorer stage prints and checks."""

from __future__ import annotations

from collections import Counter

import tlckit
from spec import configs
from spec import model as M
from spec import names as N

from harness.engines import fences as F
from harness.engines.explore import explore
from harness.reports.fences import fence_branches


def _walk(cfg, taken: set) -> Counter:
    """Edges per (fenced action, branch) on `cfg`'s whole graph (F.tally's counts, each successor watched as
    the graph is built); every action taken is added to `taken`."""
    counts: Counter = Counter()

    def watched(cfg, st):
        for step in M.successors(cfg, st):
            taken.add(step[0])
            b = F.branch(cfg, st, step[0], step[1])
            if b is not None:
                counts[step[0], b] += 1
            yield step
    explore(cfg, liveness=False, keep_edges=False, check=False, successors=watched)
    return counts


def test_the_gate_configurations_take_every_action_and_reach_every_branch_the_registry_does_not_explain():
    """One pass over the graphs every run compares on both engines (the gate and feature configurations but
    `ci` and `leftclaims`, tlckit.COMPARED_EVERY_RUN): every registry action is taken somewhere, and every
    fence branch is reached but those the protocol rules out (names.FENCE_UNREACHABLE). So the twin = TLC
    comparisons of every run meet every action and branch; the gate's configurations, a superset, too."""
    taken: set = set()
    cells = F.table((n, _walk(configs.get(n), taken)) for n in tlckit.COMPARED_EVERY_RUN)
    assert taken == set(N.ACTIONS), f"actions never taken: {set(N.ACTIONS) - taken}"
    assert F.problems(cells) == []
    assert cells["Renew", F.HELD][0] > 0 and cells["Renew", F.EXPIRED][0] > 0
    assert cells["RecoveryReconvert", F.REPLACED][1] == "retries"  # the retry finds its claim converted
    assert cells["RecoveryReconvert", F.EXPIRED][1] == "replays"  # a pause expires the retry's lease (decision 15)
    # several workers under pauses: every recovery fence also fails against a successor; a takeover's
    # compare-and-swap meets a live lease when the worker it saw took the claim over again (a retry)
    assert all(cells[a, F.REPLACED][1] == "takeovers"
               for a in ("RecoveryTakeover", "RecoveryConvert", "RecoveryQuarantine"))
    assert cells["RecoveryTakeover", F.HELD][1] == "takeovers"
    # a tool's runner outlives its lease only under pauses: its fences' expired branches are toolpauses'
    assert all(cells[a, F.EXPIRED][1] == "toolpauses" for a in ("ToolStart", "PublishToolSuccess", "MarkUnknown"))


def test_an_action_no_configuration_takes_is_missed():
    """The other half of the first test: without the feature configurations, their actions are never taken."""
    taken: set = set()
    _walk(configs.get("rows"), taken)
    assert {"WakeScan", "Steer", "ExactRetry", "ToolStart"}.isdisjoint(taken) and "Renew" in taken


def test_a_branch_no_configuration_reaches_fails_the_stage():
    """A stand-in explorer that reaches nothing: every branch the registry does not explain is named."""
    check = fence_branches([])
    assert check.status == "fail" and "Renew held: no gate configuration reaches it" in check.detail
    assert "Steer expired" not in check.detail  # explained: a refusal the registry names


def test_a_branch_the_registry_calls_unreachable_yet_reached_is_stale():
    cells = F.table([("rows", Counter({("Steer", F.EXPIRED): 3}))])
    assert "Steer expired: reached on rows, yet names.FENCE_UNREACHABLE says not" in F.problems(cells)


def test_the_branch_is_read_off_the_actors_identity():
    """A runner whose claim another owner now holds takes the replaced branch; its own expired claim, expired."""
    cfg = configs.get("heartbeat")
    res = explore(cfg, liveness=False, keep_edges=True, check=False)
    st = next(s for s in res.graph.states if s.run[0].pc == "acquired" and s.claim[0].ttl > 0)
    assert F.branch(cfg, st, "Renew", ("n1",)) == F.HELD
    assert F.branch(cfg, st._replace(claim=(st.claim[0]._replace(ttl=0),)), "Renew", ("n1",)) == F.EXPIRED
    other = st._replace(claim=(st.claim[0]._replace(owner="r1"),))
    assert F.branch(cfg, other, "Renew", ("n1",)) == F.REPLACED
    assert F.branch(cfg, st, "Dispatch", ("n1",)) is None  # not fenced


def test_every_fenced_action_and_explained_branch_is_in_the_registry():
    assert set(N.FENCED_ACTIONS) <= set(N.ACTIONS)
    assert {a for a, _ in N.FENCE_UNREACHABLE} <= set(N.FENCED_ACTIONS)
    assert {b for _, b in N.FENCE_UNREACHABLE} <= set(F.BRANCHES)


def test_a_successor_meets_runners_and_finalizers_only_with_the_clock_assumption_off():
    """The registry's reason for their `replaced` branches, shown: under SynchronizedClocks no edge takes it
    (the first test), with the assumption off these configurations reach every one of them."""
    from dataclasses import replace
    off = ("SynchronizedClocks",)
    tools = replace(configs.get("tools", assumptions_off=off), faults=frozenset({"pause", "publication"}), grace=1)
    cells = F.table([("heartbeat", _walk(configs.get("heartbeat", assumptions_off=off), set())),
                     ("tools", _walk(tools, set())),
                     ("hosted", _walk(configs.get("hosted", assumptions_off=off), set()))])
    supervised = [key for key, why in N.FENCE_UNREACHABLE.items() if why.startswith("ruled out under SynchronizedClocks")]
    assert len(supervised) == 12 and all(cells[key][0] > 0 for key in supervised), \
        [key for key in supervised if not cells[key][0]]


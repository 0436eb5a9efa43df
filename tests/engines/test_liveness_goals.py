"""Honest liveness (issue 30 item 2): no liveness goal counts a quarantine of healthy work, Residual R1 is
a premise that can be seen to matter, and second-generation continuations are checked (`generations`)."""

import functools
import re
from pathlib import Path

import pytest

from harness.engines.explore import explore
from harness.engines.liveness import check_leads_to
from spec import configs
from spec import hooks as P
from spec import invariants as I
from spec import model as M
from spec import names as N
from spec.mc import Hooks

PREMISED = ("SessionsEventuallyAvailable", "PendingInputsEventuallyServed", "ContinuationsEventuallyPromoted")


def _graph(cfg):
    return explore(cfg, liveness=False, keep_edges=True, stop_on_violation=False, check=False).graph


@functools.lru_cache(maxsize=1)
def _ci_graph():
    """`ci`'s graph, built once for the tests that only read it (95,651 states)."""
    return _graph(configs.get("ci"))


@pytest.fixture(scope="module", autouse=True)
def _drop_the_ci_graph():
    yield
    _ci_graph.cache_clear()


# ---------------------------------------------------------------- Residual R1: a premise, not a goal

def test_only_malformed_work_is_a_goal():
    """Rejected counts a quarantine `malformed` with the row naming its execution; `exhausted` (R1) and
    `invalid` (healthy work a defect quarantined) are not goals."""
    cfg = configs.get("ci")
    claim = M.Claim(exec=1, owner="r1", ttl=0, phase="recovering", asst=0, quar=True, tries=cfg.max_tries, why="")
    st = M.init(cfg)
    row = st._replace(recovery=frozenset({M.RecRow(1, "s2")}))
    at = lambda base, why: base._replace(claim=(claim._replace(why=why),))
    assert I._rejected(cfg, at(row, "malformed"), 0)
    assert not I._rejected(cfg, at(st, "malformed"), 0)  # no row: not justified
    assert not any(I._rejected(cfg, at(row, why), 0) for why in ("exhausted", "invalid"))
    assert I.exhausted_by_pauses(cfg, at(st, "exhausted"), 0)
    assert not I.exhausted_by_pauses(cfg, at(st, "exhausted")._replace(
        claim=(claim._replace(why="exhausted", tries=cfg.max_tries - 1),)), 0)
    assert set(I.RESIDUAL_PREMISES) == set(PREMISED) <= set(N.LIVENESS)


def test_each_residual_is_a_premise_in_tla_and_the_twin():
    """The registry's residuals (spec.names.RESIDUALS): each premise an operator of a Session in
    SessionExecution.tla, stated in each property it names (a stable one as `premise(s) =>`, one that can
    end as a disjunct of the goal), and the twin's RESIDUAL_PREMISES the same."""
    tla = (Path(configs.__file__).parent / "SessionExecution.tla").read_text()
    doc = (Path(configs.__file__).parents[1] / "docs" / "protocol.md").read_text()
    assert {r.stable for r in N.RESIDUALS.values()} == {True, False}
    for r in N.RESIDUALS.values():
        always = r"\[\]" if r.stable else ""  # a stable residual's premise: `[](~X(s))`
        assert re.search(rf"^{r.premise}\(s\) == {always}", tla, re.M), r.premise
        assert f"| {r.name}, " in doc and f"`{r.premise}(s)" in doc
        for prop in r.properties:
            body = re.search(rf"^{prop} ==\n(.*?)\n\n", tla, re.M | re.S).group(1)
            assert (f"{r.premise}(s) =>" in body) == r.stable, prop
            assert (f"\\/ {r.premise}(s))" in body) != r.stable, prop
            assert r.premise in I.RESIDUAL_PREMISES[prop] and r.premise in I.EXEMPT


def test_without_the_r1_premise_ci_loses_a_healthy_session(monkeypatch):
    """The stand-in drops the premise (no Session is ever exempt): SessionsEventuallyAvailable fails on
    `ci` with the lasso where recovery loses its lease MaxTries times and quarantines the Session for good.
    With the premise it holds (test_twin's correct-model check runs every property on `ci`)."""
    cfg = configs.get("ci")
    graph = _ci_graph()
    assert check_leads_to(cfg, graph, "SessionsEventuallyAvailable") is None
    monkeypatch.setattr(I, "exhausted_by_pauses", lambda cfg, st, s: False)
    v = check_leads_to(cfg, graph, "SessionsEventuallyAvailable")
    assert v is not None and v.invariants == ["SessionsEventuallyAvailable"]
    actions = [s.action for s in v.steps[1:]]
    assert len(actions) == 16 and v.loop == 16  # the quarantined state stutters for ever
    assert actions.count("RecoveryTakeover") == cfg.max_tries and actions[-1] == "RecoveryQuarantine"
    end = v.steps[-1].state.claim[0]
    assert end.quar and end.why == "exhausted" and end.tries == cfg.max_tries and "pause" in v.steps[-1].state.faults


def test_without_the_r1_premise_tlc_finds_the_same_lasso(tlc_or_skip, monkeypatch):
    """The TLA+ side of the stand-in: NotExhaustedByPauses made TRUE in TLC's copy of the module, TLC
    finds a lasso that ends in the exhausted quarantine (with the premise, TLC passes every configuration:
    test_equivalence). On `rows` (MaxTries 1), whose twin graph has the same lasso, not `ci`: 35 s less."""
    from harness.engines import tlc as T
    prepare = T.prepare

    def dropped(workdir, cfg_text, cfg_name="MC.cfg"):
        prepare(workdir, cfg_text, cfg_name)
        module = workdir / "SessionExecution.tla"
        text = module.read_text()
        premise = "NotExhaustedByPauses(s) == [](~ExhaustedByPauses(s))"
        assert premise in text
        module.write_text(text.replace(premise, "NotExhaustedByPauses(s) == TRUE"))

    monkeypatch.setattr(T, "prepare", dropped)
    # one worker: with two, TLC's lasso on `rows` sometimes closes at a state before the quarantine (seen
    # in .ci/run), so its first loop state is not the stuck one
    res = T.run(configs.get("rows"), liveness=True, only={"SessionsEventuallyAvailable"}, workers=1)
    assert res.verdict == "violation" and res.loop is not None, res.output[-500:]
    stuck = res.steps[res.loop].state.claim[0]
    assert stuck.quar and stuck.why == "exhausted" and stuck.tries == configs.get("rows").max_tries


@pytest.mark.parametrize("name", ["ci", "takeovers"])
def test_an_exhausted_quarantine_is_never_undone(name):
    """The twin states `R1 => (P ~> Q)` as `P ~> (Q \\/ R1)`, which is the same only if an exhausted
    quarantine, once made, stays: no edge of the graph leaves it."""
    cfg = configs.get(name)
    graph = _ci_graph() if name == "ci" else _graph(cfg)
    sessions = range(len(cfg.sessions))
    exhausted = [{s for s in sessions if I.exhausted_by_pauses(cfg, st, s)} for st in graph.states]
    assert any(exhausted)
    assert all(exhausted[v] <= exhausted[w] for v, out in enumerate(graph.succ) for _a, _p, w in out)


# ---------------------------------------------------------------- second-generation continuations

def _second_generation_waiting(cfg, st):
    """A continuation of execution 2 (itself promoted from execution 1's continuation) waits while the
    model still has an execution id to promote it with."""
    return st.nextExec <= cfg.max_exec and any(i.kind == "cont" and i.state == "pending" and i.src == 2
                                               for i in st.inputs)


def _refuses_second_generation(cfg):
    """A stand-in defect: the promotion refuses a continuation of an execution that was itself promoted."""
    hooks = Hooks({name: getattr(cfg.hooks, name) for name in Hooks.__slots__})
    hooks.promotion_owned = lambda cfg, st, i: i.src < 2 and P.promotion_owned(cfg, st, i)
    object.__setattr__(cfg, "hooks", hooks)
    return cfg


def test_generations_checks_a_second_generation_continuation():
    cfg = configs.get("generations")
    res = explore(cfg, keep_edges=True)
    assert res.violation is None and res.liveness_checked == list(N.LIVENESS)
    assert res.distinct < 30_000 and cfg.max_exec >= 3
    assert any(_second_generation_waiting(cfg, st) for st in res.graph.states)
    assert not any(_second_generation_waiting(configs.get("ci"), st) for st in _ci_graph().states)


def test_a_promotion_that_stops_at_the_second_generation_fails_only_where_it_is_checked():
    """On `ci` (MaxExec 2) the stand-in passes: the ids run out (`Exhausted`) as soon as the first
    continuation is promoted. On `generations` it breaks ContinuationsEventuallyPromoted."""
    ci = _refuses_second_generation(configs.get("ci"))
    assert check_leads_to(ci, _graph(ci), "ContinuationsEventuallyPromoted") is None
    gen = _refuses_second_generation(configs.get("generations"))
    v = check_leads_to(gen, _graph(gen), "ContinuationsEventuallyPromoted")
    assert v is not None and v.loop is not None
    assert any(_second_generation_waiting(gen, s.state) for s in v.steps[v.loop:])


def test_the_registry_defect_that_never_promotes_fails_on_generations():
    cfg = configs.get("generations", defects=["recovery-input-excluded-everywhere"])
    assert check_leads_to(cfg, _graph(cfg), "ContinuationsEventuallyPromoted") is not None

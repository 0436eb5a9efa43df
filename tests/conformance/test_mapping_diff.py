"""harness.conformance.diff: one line per differing field, named as the spec names it, never a whole Python repr."""

from harness.conformance.diff import diff, render_diff
from spec import configs
from spec import model as M

CFG = configs.get("ci")


def _runner(st, n, **kw):
    return st._replace(run=M._put(st.run, n, st.run[n]._replace(**kw)))


def test_a_runner_field_is_named_by_node_and_field():
    st = M.init(CFG)
    lines = render_diff(diff(st, _runner(st, 0, mem=1), CFG))
    assert lines == ["run[n1].mem: model 0, implementation 1"]


def test_claims_logs_sets_and_inputs_name_their_entry():
    model = M.init(CFG)
    c = M.Claim(1, "n1", 1, "running", 0, False)
    impl = model._replace(claim=(c,), nextExec=2, log=(M.Event("s1", "Started", 1, "n1"),),
                          recovery=frozenset({M.RecRow(1, "s1")}),
                          inputs=frozenset(i._replace(state="ordinary") if i.src == 1 else i for i in model.inputs))
    lines = render_diff(diff(model, impl, CFG))
    assert "claim[s1].exec: model 0, implementation 1" in lines
    assert "claim[s1].phase: model none, implementation running" in lines
    assert "claim[s1].owner: model \"\", implementation n1" in lines
    assert "nextExec: model 1, implementation 2" in lines
    assert "log[1]: model absent, implementation (sess=s1, kind=Started, asst=1, node=n1)" in lines
    assert "recovery[exec=1, sess=s1]: model absent, implementation present" in lines
    assert "inputs[s1/prompt#1].state: model pending, implementation ordinary" in lines
    assert not any("Claim(" in x or "frozenset" in x or "Input(" in x for x in lines)


def test_unpacks_as_variable_model_implementation_and_without_cfg_uses_indexes():
    st = M.init(CFG)
    (path, m, i), = diff(st, _runner(st, 1, pc="acquired"))
    assert (path, m, i) == ("run[1].pc", "idle", "acquired")
    assert diff(st, st, CFG) == []

"""Symmetry (spec/symmetry.py): the canonical form of a pair of permuted states is one state, and one
fingerprint; a state of another orbit has another; the reachable states are closed under the
permutations (why the reduction is sound), which a permutation that forgets a field breaks; TLC's
configuration gets model values and SYMMETRY, and liveness with symmetry is refused."""

import pytest

from harness.engines.explore import explore
from spec import configs
from spec import model as M
from spec import symmetry as S


def _acquired_by_n1(cfg):
    st = M.init(cfg)
    i = sorted(st.inputs)[0]
    return M.Acquire(cfg, st, 0, i)


def test_a_pair_of_permuted_states_has_one_canonical_form():
    cfg = configs.get("ci")
    group = S.perms(cfg, "nodes")
    a = _acquired_by_n1(cfg)
    b = S.permute(a, group[1])  # the same, acquired by n2
    assert a != b and b.claim[0].owner == "n2" and b.run[1].pc == "acquired" and b.run[0] == M.RUNNER_IDLE
    assert S.canonical(a, group) == S.canonical(b, group) in (a, b)
    assert S.fingerprint(a, group) == S.fingerprint(b, group)
    other = M.Renew(cfg, a, 0)  # a state of another orbit
    assert S.fingerprint(other, group) != S.fingerprint(a, group)
    assert S.canonical(other, group) not in (a, b)


def test_sessions_are_permuted_with_their_claims_and_inputs():
    cfg = configs.get("rows")
    group = S.perms(cfg, "sessions")
    assert len(group) == 2 and len(S.perms(cfg, "nodes")) == 1
    st = M.init(cfg)
    i = next(x for x in st.inputs if x.sess == "s1")
    a = M.Acquire(cfg, st, 0, i)
    b = S.permute(a, group[1])
    assert b.claim[1] == a.claim[0] and b.claim[0] == a.claim[1]
    assert {x.sess for x in b.inputs if x.state == "ordinary"} == {"s2"}
    assert S.canonical(a, group) == S.canonical(b, group)


def _closed(cfg, scope, permute=S.permute):
    states = set(explore(cfg, liveness=False, keep_edges=False, check=False).graph.states)
    return all(permute(st, p) in states for st in states for p in S.perms(cfg, scope))


@pytest.mark.parametrize("name,scope", [("prompts", "nodes"), ("rows", "sessions")])
def test_the_reachable_states_are_closed_under_the_permutations(name, scope):
    assert _closed(configs.get(name), scope)


def test_a_permutation_that_forgets_the_claims_owner_is_not_a_symmetry():
    def forgetful(st, p):
        out = S.permute(st, p)
        return out._replace(claim=tuple(c._replace(owner=o.owner) for c, o in zip(out.claim, st.claim)))
    assert not _closed(configs.get("prompts"), "nodes", forgetful)


def test_tlc_configuration_with_symmetry():
    cfg = configs.get("ci")
    text = configs.to_tlc_cfg(cfg, liveness=False, symmetry="nodes")
    assert "Nodes = {n1, n2}" in text and 'Sessions = {"s1"}' in text and "SYMMETRY NodeSymmetry" in text
    text = configs.to_tlc_cfg(configs.get("deep"), liveness=False, symmetry="sessions")
    assert "Sessions = {s1, s2}" in text and "SYMMETRY NodeSessionSymmetry" in text
    assert "SYMMETRY" not in configs.to_tlc_cfg(configs.get("heartbeat"), liveness=False, symmetry="nodes")
    with pytest.raises(ValueError, match="liveness"):
        configs.to_tlc_cfg(cfg, liveness=True, symmetry="nodes")
    with pytest.raises(ValueError):
        S.perms(cfg, "recoverers")

"""Claims left at Init (LeftClaims, spec/README.md decision 16): the seeded rows are a reachable state of the
model that starts from an empty database, so seeding them hides no behaviour the code could have. The same
configuration without LeftClaims, with crashes (a restart is a crash of every process) reaches exactly the
seeded Init, less the faults history, in 14 steps: each left Session's prompt acquired by a node that
crashes, two ticks (lease and grace), the recovery worker's scan and takeover of each and its crash, two
ticks. The bundled server's seed (binding.world.World.leave_claims) takes those code paths and maps to the
same Init; every other configuration's Init is unchanged."""

from dataclasses import replace

import pytest

from binding.world import Scheduler
from spec import configs, left_claims
from spec import model as M

LEFT = configs.get("leftclaims")
EMPTY = left_claims.empty_start(LEFT)
RESTART = [("Acquire", ("n1", M.Input("s1", "prompt", 1, "pending"))), ("Crash", ("n1",)),
           ("Acquire", ("n1", M.Input("s2", "prompt", 1, "pending"))), ("Crash", ("n1",)),
           ("Tick", ()), ("Tick", ()),
           ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)), ("Crash", ("r1",)),
           ("RecoveryScan", ("r1", "s2")), ("RecoveryTakeover", ("r1",)), ("Crash", ("r1",)),
           ("Tick", ()), ("Tick", ())]


def test_the_left_claims_are_a_reachable_state_of_the_empty_start():
    assert left_claims.restart(LEFT) == RESTART
    st = M.init(EMPTY)
    for k, (name, params) in enumerate(RESTART):
        st = M.apply(EMPTY, st, name, params)
        assert st is not None, (k + 1, name, params)
    assert st._replace(faults=frozenset()) == M.init(LEFT)
    assert st.faults == {"crash"}


def test_the_bundled_server_seeds_the_twins_init():
    assert Scheduler(LEFT).state() == M.init(LEFT)


@pytest.mark.parametrize("name", sorted(n for n in configs.CONFIGS if n != "leftclaims"))
def test_no_other_configuration_leaves_claims(name):
    cfg = configs.get(name)
    assert not cfg.left_claims and M.init(cfg).nextExec == 1 and all(c == M.NO_CLAIM for c in M.init(cfg).claim)


@pytest.mark.parametrize("change,reason", [
    (dict(left_claims=frozenset({"s9"})), "must name Sessions"),
    (dict(admission=True), "prompts admitted at Init"),
    (dict(prompts=0), "prompts admitted at Init"),
    (dict(max_exec=1), "more than max_exec"),
    (dict(recoverers=("r1", "r2")), "exactly one recovery worker"),
    (dict(sessions=("s2", "s1", "s3")), "sorted order"),
])
def test_left_claims_the_model_cannot_seed_are_refused(change, reason):
    with pytest.raises(ValueError, match=reason):
        replace(LEFT, **change)

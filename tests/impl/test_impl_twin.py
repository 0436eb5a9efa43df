"""Differential check against the executable twin: random walks of spec.model, each action applied to
the implementation, the database plus actor memory mapped back and compared with the twin's state after
every step (and each actor's `enabled()` agreeing with the twin's enabled actions)."""

import pytest

from implkit import random_walk
from spec import model as M
from spec import names as N

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)

CONFIGS = {
    "default": dict(),
    "two-sessions": dict(sessions=("s1", "s2"), max_exec=3, lease=2),
    "routing-off": dict(prompts=2, max_exec=3, process_local_routing=False, timely_dispatch=False),
}


@pytest.mark.parametrize("defect", [None, *sorted(N.DEFECTS)])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_implementation_follows_the_twin(config, defect):
    cfg = M.Config(defects=frozenset([defect] if defect else []), **CONFIGS[config])
    for seed in range(3):
        assert random_walk(cfg, seed, 30)

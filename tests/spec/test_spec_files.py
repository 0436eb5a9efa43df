"""The TLA+ text, the committed model configurations and the registry agree."""

import re
from pathlib import Path

from spec import configs
from spec import names as N

SPEC = Path(__file__).resolve().parents[2] / "spec"
TLA = (SPEC / "SessionExecution.tla").read_text()


def test_committed_model_configurations_are_current():
    for name, cfg in configs.CONFIGS.items():
        assert (SPEC / f"MC_{name}.cfg").read_text() == configs.to_tlc_cfg(cfg), name


def _defined(name):
    return re.search(rf"^{name}(\(.*?\))? ==", TLA, re.M) is not None


def test_every_registry_action_and_invariant_is_defined_in_tla():
    missing = [n for n in list(N.ACTIONS) + list(N.INVARIANTS) if not _defined(n)]
    assert not missing


def test_every_defect_name_in_tla_is_registered():
    used = set(re.findall(r'Has\("([\w-]+)"\)', TLA))
    assert used == set(N.DEFECTS)


def test_every_variable_has_an_apalache_type_annotation():
    block = TLA[TLA.index("VARIABLES"):TLA.index("vars ==")]
    names = re.findall(r"^\s+(\w+),?\s*$", block, re.M)
    assert len(names) == 11
    for v in names:
        assert re.search(rf"@type: [^\n]+;\n\s+{v},?\s*\n", block), v


def test_fair_actions_match_the_registry():
    fair = set(re.findall(r"WF_vars\((\w+)\(", TLA))
    assert fair == {n for n, a in N.ACTIONS.items() if a.fair}

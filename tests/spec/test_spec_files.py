"""The TLA+ text, the committed model configurations and the registry agree."""

import re
from pathlib import Path

from spec import configs
from spec import names as N
from spec import source

SPEC = Path(__file__).resolve().parents[2] / "spec"
TLA = (SPEC / "SessionExecution.tla").read_text()
ALL_TLA = "\n".join(m.read_text() for m in source.MODULES)


def test_committed_model_configurations_are_current():
    for name, cfg in configs.CONFIGS.items():
        assert (SPEC / f"MC_{name}.cfg").read_text() == configs.to_tlc_cfg(cfg), name


def _defined(name, text=TLA):
    return re.search(rf"^{name}(\(.*?\))? ==", text, re.M) is not None


def test_every_registry_action_and_invariant_is_defined_in_tla():
    missing = [n for n in list(N.ACTIONS) + list(N.INVARIANTS)
               if not _defined(n, ALL_TLA if N.INVARIANTS.get(n) and N.INVARIANTS[n].kind == "refinement" else TLA)]
    assert not missing


def test_every_tla_module_is_known_and_the_cfg_files_configure_the_mc_module():
    assert set(SPEC.glob("*.tla")) == set(source.MODULES)  # the gate's parse stage and TLC's copy see them all
    assert re.search(rf"^-+ MODULE {source.MC_SPEC.stem} -+$", source.MC_SPEC.read_text(), re.M)
    assert configs.MC_MODULE == source.MC_SPEC.stem
    for name in configs.CONFIGS:
        text = (SPEC / f"MC_{name}.cfg").read_text()
        assert f"Model: {source.MC_SPEC.name}" in text.splitlines()[0]
        assert re.search(rf"^PROPERTIES .*\b{N.REFINEMENT}\b", text, re.M), name


def test_the_refinement_mapping_defines_every_abstract_variable_in_one_marked_place():
    text = source.REFINEMENT.read_text()
    start, end = text.index("THE REFINEMENT MAPPING"), text.index("end of the mapping")
    mapping = text[start:end]
    abstract = source.declarations(source.LIFECYCLE)["VARIABLES"]
    assert len(abstract) == 8
    for v in abstract:
        assert re.search(rf"\b{v} <- ", mapping), v
    assert "INSTANCE SessionLifecycle" in mapping and text.count("INSTANCE") == 1
    assert re.search(rf"^{N.REFINEMENT} == Lifecycle!Spec$", text, re.M)


def test_the_abstract_protocol_is_typed_for_apalache():
    decl = source.declarations(source.LIFECYCLE)
    assert decl["VARIABLES"] and decl["CONSTANTS"]
    assert all(decl["VARIABLES"].values()) and all(decl["CONSTANTS"].values()), decl


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

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


MC = source.MC_SPEC.read_text()


def test_every_defect_name_in_tla_is_registered():
    used = set(re.findall(r'Has\("([\w-]+)"\)', MC))
    assert used == set(N.DEFECTS)


def _header(text):
    """The module's opening comment box."""
    opening = text.index("\n", text.index("(****"))
    return text[opening:text.index("*****)\n", opening)]


def test_the_protocol_has_no_defect_switch_and_defines_its_hooks_in_one_section():
    """Issue 12, item 7: the defect switches are the MC module's; the protocol states the correct protocol,
    with a named hook wherever a defect decides differently. Its section Hooks is the one list of them
    (spec/names.py HOOKS reads it); the header points there and names none."""
    assert "Has(" not in TLA and not re.search(r"\bDefects\b", TLA)
    assert "Defects" not in source.declarations(source.SPEC)["CONSTANTS"]
    assert source.declarations(source.MC_SPEC)["CONSTANTS"] == {"Defects": "Set(Str)"}
    assert configs.HOOKS == N.HOOKS == source.hooks(TLA) and len(N.HOOKS) == 46
    header = _header(TLA)
    assert 'section "Hooks" below' in header and not any(re.search(rf"\b{h}\b", header) for h in N.HOOKS)
    for hook in configs.HOOKS:
        assert _defined(hook), hook
        assert not re.search(r"\w'", re.search(rf"^{hook}(\(.*?\))? ==(.*)$", TLA, re.M).group(2)), hook  # no primes


def test_a_hook_defined_in_the_section_is_a_hook_and_nothing_else_is():
    """Reading the list from the section: a definition added there is a hook (it reaches every `Hook <-
    MCHook` override), one outside it is not, and a module without the section is refused."""
    start = TLA.index(source.HOOKS_SECTION)
    added = TLA[:start] + "Before == TRUE\n" + TLA[start:].replace("\n-----", "\nNewHook(c) == TRUE\n\n-----", 1)
    assert source.hooks(added) == N.HOOKS + ("NewHook",)
    import pytest
    with pytest.raises(ValueError, match="no section of hooks"):
        source.hooks(TLA.replace(source.HOOKS_SECTION, "(* Decisions:"))


def test_spec_readme_documents_every_hook():
    """spec/README.md's table of hooks (what each decides, which defects override it) names each one."""
    table = (SPEC / "README.md").read_text().split("| hook | the protocol decides |", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"`(\w+)(?:\(.*?\))?`", "\n".join(row.split("|")[1] for row in table.splitlines()[2:])) \
        == list(N.HOOKS)


def test_every_hook_has_its_mc_alternative_and_every_cfg_overrides_every_hook():
    mc_defs = set(re.findall(r"^(MC\w+)(?:\(.*?\))? ==", MC, re.M))
    assert mc_defs == {f"MC{h}" for h in configs.HOOKS}
    for hook in configs.HOOKS:
        params = re.search(rf"^{hook}(\(.*?\))? ==", TLA, re.M).group(1)
        body = re.search(rf"^MC{hook}(\(.*?\))? ==\n(.*?)(?:\n\n|\n=)", MC, re.M | re.S)
        assert body.group(1) == params, hook  # same parameters, so `Hook <- MCHook` is well formed
        # the protocol's own hook through the instance (its bare name would call MCHook itself) ...
        assert f"Protocol!{hook}" in body.group(2) and not re.search(rf"(?<![!\w]){hook}\b", body.group(2)), hook
        assert 'Has("' in body.group(2), hook  # ... and at least one defect's alternative
    for name, cfg in [(n, configs.get(n)) for n in configs.CONFIGS] + [("with a defect", configs.get(
            "ci", defects=["renew-after-expiry"]))]:
        text = configs.to_tlc_cfg(cfg)
        overrides = re.findall(r"^  (\w+) <- (\w+)$", text, re.M)
        assert overrides == [(h, f"MC{h}") for h in configs.HOOKS], name
        assert re.search(r"^  Defects = \{.*\}$", text, re.M), name


def test_the_protocol_modules_configuration_has_no_defect_switch_and_refuses_defects():
    """Apalache's configuration (the protocol module's): constants only, no `<-`, no Defects."""
    text = configs.to_tlc_cfg(configs.get("ci"), liveness=False, checks=False, protocol_only=True)
    assert "<-" not in text and "Defects" not in text and "Model: SessionExecution.tla" in text
    declared = set(source.declarations(source.SPEC)["CONSTANTS"])
    assert set(re.findall(r"^  (\w+) = ", text, re.M)) == declared
    import pytest
    with pytest.raises(configs.ProtocolOnly, match="renew-after-expiry"):
        configs.to_tlc_cfg(configs.get("ci", defects=["renew-after-expiry"]), protocol_only=True)


def test_every_variable_has_an_apalache_type_annotation():
    block = TLA[TLA.index("VARIABLES"):TLA.index("vars ==")]
    names = re.findall(r"^\s+(\w+),?\s*$", block, re.M)
    assert len(names) == 13
    for v in names:
        assert re.search(rf"@type: [^\n]+;\n\s+{v},?\s*\n", block), v


def test_fair_actions_match_the_registry():
    fair = set(re.findall(r"WF_vars\((\w+)[()]", TLA)) - {"CalmTick"}  # (WakeScan has no parameters)
    # the clock is fair only while it pauses no working actor: WF_vars(CalmTick), CalmTick == Tick /\ ~Pausing
    assert "WF_vars(CalmTick)" in TLA and re.search(r"CalmTick == Tick /\\ ~Pausing", TLA)
    assert fair | {"Tick"} == {n for n, a in N.ACTIONS.items() if a.fair}

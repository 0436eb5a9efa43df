"""The twin's hooks mirror the TLA+'s: spec.hooks is SessionExecution.tla's section "Hooks" (the protocol's
decisions, the same names and parameters, in the same order), and spec.mc's table is MCSessionExecution.tla's
MC<Hook> operators (the same hooks, the same defects in the same order, the same comment per defect), so a
hook or a defect added on one side and not the other fails here. A configuration resolves its table once."""

import inspect
import re

import pytest

from spec import configs, hooks, mc, source
from spec import names as N

TLA = source.SPEC.read_text()
MC_TLA = source.MC_SPEC.read_text()
DEFINITION = re.compile(r"^(\w+)(?:\((.*?)\))? ==")


def _definitions(text: str, start: str = "", end: str = "") -> list[tuple[str, list[str], str, str]]:
    """(name, parameters, body, the comment just above) of each top-level definition between `start` and `end`."""
    text = text[text.index(start) if start else 0:text.index(end) if end else len(text)]
    out, comment, current = [], [], None
    for line in text.splitlines():
        m = DEFINITION.match(line)
        if m:
            current = [m.group(1), [p.strip() for p in (m.group(2) or "").split(",") if p.strip()],
                       line[m.end():], " ".join(comment)]
            out.append(current)
            comment = []
        elif line.startswith("\\*"):
            comment.append(line[2:].strip())
            current = None
        elif line.startswith((" ", "\t")) and current is not None:
            current[2] += "\n" + line
        else:
            comment, current = [], None
    return [tuple(d) for d in out]


PROTOCOL_HOOKS = _definitions(TLA, "(* Hooks: the protocol's decisions", "(* Helpers that read hooks *)")
MC_HOOKS = [d for d in _definitions(MC_TLA, "Protocol == INSTANCE") if d[0].startswith("MC")]


def _mc_comments() -> dict[str, str]:
    """The `# ...` lines just above each hook's entry in spec/mc.py's table, joined."""
    out, comment = {}, []
    for line in inspect.getsource(mc).splitlines():
        entry = re.match(r'^    "(\w+)": \(', line)
        if line.startswith("    # "):
            comment.append(line[6:].strip())
        elif entry:
            out[entry.group(1)] = " ".join(comment)
            comment = []
        elif not line.startswith("        "):
            comment = []
    return out


def test_the_protocols_hooks_are_the_tla_hooks_in_order_with_their_parameters():
    assert [name for name, *_ in PROTOCOL_HOOKS] == list(configs.HOOKS) == list(mc.MC)
    for name, params, _, comment in PROTOCOL_HOOKS:
        protocol, _ = mc.MC[name]
        assert protocol is getattr(hooks, mc.snake(name)), name  # the table's ELSE is spec.hooks' own
        assert list(inspect.signature(protocol).parameters) == ["cfg", "st", *params], name
        assert comment, name  # each says what the protocol decides there
    public = [n for n, f in vars(hooks).items() if inspect.isfunction(f) and f.__module__ == hooks.__name__]
    assert public == [mc.snake(h) for h in mc.MC]  # spec.hooks is the section, nothing else, in its order


def test_the_twins_table_names_the_mc_modules_hooks_and_defects_in_order():
    tla = [(name[2:], params, re.findall(r'Has\("([\w-]+)"\)', body), comment)
           for name, params, body, comment in MC_HOOKS]
    assert [h for h, *_ in tla] == list(mc.MC)
    comments = _mc_comments()
    for hook, params, defects, comment in tla:
        _, alternatives = mc.MC[hook]
        assert list(alternatives) == list(dict.fromkeys(defects)), hook  # IF/ELSE IF order: the first on wins
        assert comments[hook] == comment, hook  # the same words per defect
        for defect, alternative in alternatives.items():
            assert defect in N.DEFECTS, defect
            assert list(inspect.signature(alternative).parameters) == ["otherwise", "cfg", "st", *params], (hook, defect)
    assert {d for _, alternatives in mc.MC.values() for d in alternatives} == set(N.DEFECTS)


def test_a_configuration_resolves_its_hooks_once():
    cfg = configs.get("ci")
    assert cfg.hooks is cfg.hooks and configs.get("ci").hooks is cfg.hooks  # cached, per set of defects
    for hook, (protocol, _) in mc.MC.items():
        assert getattr(cfg.hooks, mc.snake(hook)) is protocol, hook  # no defect: the protocol's own, no wrapper
    on = configs.get("ci", defects=["renew-after-expiry"]).hooks
    assert on.renew_accepts.func is mc.MC["RenewAccepts"][1]["renew-after-expiry"]
    assert on.heartbeat_accepts.func is mc.MC["HeartbeatAccepts"][1]["renew-after-expiry"]
    assert on.ordinary_selects is hooks.ordinary_selects


def test_a_configuration_with_defects_pickles_and_resolves_its_hooks_again():
    import pickle
    cfg = configs.get("ci", defects=["renew-after-expiry"])
    back = pickle.loads(pickle.dumps(cfg))
    assert back == cfg and back.hooks is cfg.hooks and "hooks" not in repr(cfg)


UNSTARTED, MEMORY = "cancel-interrupts-unstarted", "cancel-trusts-previous-step-memory"


@pytest.mark.parametrize("defects,attached,mem,settled", [
    ((), 0, 2, 0), ((UNSTARTED,), 0, 2, 3), ((MEMORY,), 0, 2, 2), ((UNSTARTED, MEMORY), 0, 2, 3),
    ((UNSTARTED, MEMORY), 4, 2, 2), ((UNSTARTED, MEMORY), 4, 0, 4)])
def test_alternatives_fall_through_in_the_mc_modules_order(defects, attached, mem, settled):
    """MCSettledAssistant: IF unstarted /\\ c.asst = 0 THEN Asst(f.exec, 1) ELSE IF memory /\\ mem # 0 THEN mem
    ELSE Protocol!SettledAssistant(f, c, mem): with both on, the first decides where it applies, else the
    second, else the protocol (on `steps`, MaxSteps 2: execution 2's first assistant is 3)."""
    from spec import model as M
    cfg = configs.get("steps", defects=defects)
    f, c = M.Fin("settle", "s1", 2, "n1"), M.NO_CLAIM._replace(exec=2, asst=attached)
    assert cfg.hooks.settled_assistant(cfg, M.init(cfg), f, c, mem) == settled


def test_the_mc_table_fails_on_a_hook_or_defect_the_mc_module_lacks(monkeypatch):
    """The comparison can fail: a defect moved to another hook, or a hook dropped, is seen."""
    table = dict(mc.MC)
    protocol, alternatives = table["RenewedTtl"]
    table["RenewedTtl"] = (protocol, {"renew-after-expiry": alternatives["heartbeat-extends-lease"]})
    monkeypatch.setattr(mc, "MC", table)
    with pytest.raises(AssertionError):
        test_the_twins_table_names_the_mc_modules_hooks_and_defects_in_order()
    del table["RenewedTtl"]
    with pytest.raises(AssertionError):
        test_the_twins_table_names_the_mc_modules_hooks_and_defects_in_order()


def test_a_protocol_hook_reads_the_other_hooks_through_the_table():
    """SteerSelects(i) == OrdinarySelects(i) and FinalizerSupervised(f) == SupHolds(...): switched inside too,
    as TLC overrides OrdinarySelects inside Protocol!SteerSelects (tests/engines/test_equivalence.py checks
    the graphs)."""
    from spec import model as M
    owned = M.Input("s1", "cont", 1, "pending")
    st = M.init(configs.get("steer"))._replace(recovery=frozenset({M.RecRow(1, "s1")}), inputs=frozenset({owned}))
    for defects, takes in (((), False), (("recovery-input-in-ordinary-queue",), True),
                           (("steer-selects-recovery-input",), True)):
        cfg = configs.get("steer", defects=defects)
        assert cfg.hooks.steer_selects(cfg, st, owned) is takes, defects
        assert M.selectable(cfg, st, owned) is (defects == ("recovery-input-in-ordinary-queue",)), defects

"""`claimcheck invariants` (harness/reports/reviewer.py), and issue 12's promise that no invariant is true by
construction: every registry invariant (state, action, liveness and the refinement) is broken by a registry
defect or by a switched-off assumption, read from the registry alone (`Defect.violates`,
`Assumption.protects`, `REFINEMENT_BROKEN_BY`), so an invariant added without a defect fails here. That
each defect's counterexample really breaks what it names is test_defect_table's (and test_refinement's)."""

import re
from dataclasses import replace

import pytest

from harness.cli import main
from harness.reports import reviewer as V
from spec import names as N


def assert_every_invariant_is_broken(**registry):
    """The promise, for the registry or a sample of it (the keyword arguments replace its tables)."""
    missing = V.unbroken(**registry)
    assert missing == [], f"no registry defect breaks and no assumption protects: {', '.join(missing)}"


@pytest.mark.parametrize("name", list(N.INVARIANTS))
def test_every_registry_invariant_is_broken_by_a_defect_or_an_assumption_off(name):
    assert V.breakers(name), f"{name}: no registry defect breaks it and no assumption protects it"


def test_no_invariant_is_unbroken():
    assert_every_invariant_is_broken()


def _without(table: dict, *names) -> dict:
    return {k: v for k, v in table.items() if k not in names}


def test_a_sample_registry_missing_a_breaker_fails():
    """The check fails on a registry where one invariant lost its only breaker, for each kind of invariant
    (state, action, liveness, refinement), and on one with a new invariant no defect breaks yet."""
    liveness = N.LIVENESS[-1]  # ContinuationsEventuallyPromoted: one defect lists it
    fresh = {**N.INVARIANTS, "NoSuchProperty": replace(N.INVARIANTS["TypeOK"], name="NoSuchProperty")}
    samples = [
        (dict(defects=_without(N.DEFECTS, "heartbeat-extends-lease")), "TypeOK"),
        (dict(defects=_without(N.DEFECTS, "dispatch-after-failed-renewal"),
              assumptions=_without(N.ASSUMPTIONS, "TimelyDispatch")), "NoPhysicalReplay"),
        (dict(defects=_without(N.DEFECTS, *[d for d, x in N.DEFECTS.items() if liveness in x.violates])), liveness),
        (dict(refinement_broken_by=()), N.REFINEMENT),
        (dict(invariants=fresh), "NoSuchProperty"),
    ]
    already = set(V.unbroken())  # empty, unless the registry itself has a gap (the tests above say which)
    for registry, missing in samples:
        assert set(V.unbroken(**registry)) == already | {missing}
        with pytest.raises(AssertionError, match=missing):
            assert_every_invariant_is_broken(**registry)
    # an assumption's `protects` counts: without it NoPhysicalReplay still has its defect
    assert set(V.unbroken(assumptions=_without(N.ASSUMPTIONS, "TimelyDispatch"))) == already


def test_each_invariant_shows_who_breaks_it(capsys):
    assert main(["invariants"]) == 0
    out = capsys.readouterr().out
    sections = re.split(r"^=== ", out, flags=re.M)[1:]
    assert [s.split(" ", 1)[0] for s in sections] == list(N.INVARIANTS)
    for s in sections:
        name = s.split(" ", 1)[0]
        shown = s.split("--- broken by\n", 1)[1].split("--- guard mutants", 1)[0].strip().splitlines()
        assert [line.strip() for line in shown] == V.breakers(name), name
        assert V.NONE not in s
    for d in N.DEFECTS.values():
        assert f"defect {d.name} on {d.config}: {d.source}" in out
    for a in N.ASSUMPTIONS.values():
        assert f"assumption {a.name} off, on {a.config}" in out


def test_markdown_lists_the_breakers(capsys):
    assert main(["invariants", "TypeOK", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "Broken by:" in out and "- defect heartbeat-extends-lease on heartbeat" in out


def test_an_unbroken_invariant_is_shown_as_such(monkeypatch):
    monkeypatch.setattr(V, "breakers", lambda name, **_: [])
    assert V.NONE in V.render(["TypeOK"])

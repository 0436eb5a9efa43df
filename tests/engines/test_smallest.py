"""tests/smallest.json is what its searches answer today (nightly: the searches explore every small
configuration with every defect); a stale answer fails every run anyway where it no longer serves."""

import pytest

import smallest


@pytest.mark.deep
def test_the_table_is_what_the_searches_answer():
    assert smallest.table() == smallest.searched(), "stale: python tests/smallest.py"


def test_a_defect_the_table_does_not_name_is_searched_for(monkeypatch):
    monkeypatch.setattr(smallest, "table", lambda: {"equivalence": {}, "liveness": {}})
    monkeypatch.setattr(smallest.tlckit, "small_configs", lambda: ("rows", "heartbeat"))
    assert smallest.equivalence_config("renew-after-expiry") == "rows"


def test_a_configuration_the_defect_does_not_change_is_refused():
    """The per-run check of test_equivalence: a table that names a configuration where the defect changes
    nothing (wakes: no prompt, so no renewal) would make its comparison vacuous."""
    assert smallest.changes_graph("rows", "renew-after-expiry")
    assert not smallest.changes_graph("wakes", "renew-after-expiry")

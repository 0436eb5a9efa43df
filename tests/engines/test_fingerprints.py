"""harness.engines.fingerprints: the flat fingerprint table answers as a Python set would, through its
growth, for negative fingerprints, for 0 (the empty slot's mark) and with a shard's stride."""

import random

import pytest

from harness.engines.fingerprints import FingerprintSet


@pytest.mark.parametrize("stride", [1, 2, 3])
def test_the_table_answers_as_a_set_does(stride):
    rng = random.Random(7)
    fps = [rng.randrange(-2**63, 2**63) for _ in range(20_000)]
    fps = [fp for fp in fps if fp % stride == 0] + [0, 0, -1, 1]
    fps += fps[::3]  # repeats, to be answered "not new"
    table, plain = FingerprintSet(stride), set()
    for fp in fps:
        assert table.add(fp) == (fp not in plain)
        plain.add(fp)
    assert len(table) == len(plain)
    assert all(fp in table for fp in plain)
    assert not any(rng.randrange(1, 2**62) * stride in table for _ in range(1000))
    assert len(table.slots) > 4096  # it grew


def test_colliding_slots_are_probed_past():
    table = FingerprintSet()
    mask = len(table.slots) - 1
    same_slot = [5 + k * (mask + 1) for k in range(10)]
    assert all(table.add(fp) for fp in same_slot)
    assert not any(table.add(fp) for fp in same_slot)
    assert len(table) == 10

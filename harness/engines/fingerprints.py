"""A set of 64-bit fingerprints in one flat array: 8 bytes a slot instead of a Python set's ~60 a member.

Why: on `deep` (18.7 million states) a worker of harness.engines.shards remembers some 9 million
fingerprints; as a `set` of Python ints that is ~540 MiB a worker (a 16-byte slot at most 60% full plus a
32-byte int object each), in this table 128 MiB. Open addressing with linear probing in an `array('q')`,
grown to twice its size when more than 5/8 full; 0 marks an empty slot, so the fingerprint 0 is kept
apart. A lookup is a few bytecodes instead of one C call: ~0.3 µs, against the ~100 µs a state costs to
expand.
"""

from __future__ import annotations

from array import array

_START = 1 << 12


class FingerprintSet:
    """`add(fp)` is True when `fp` was not in the set (and is now). `stride`: the shards' count, whose
    remainder picks a fingerprint's owner, so a shard's slots are spread by the quotient instead."""

    def __init__(self, stride: int = 1):
        self.stride = stride
        self.slots = array("q", bytes(8 * _START))
        self.mask = _START - 1
        self.count = 0
        self.zero = False

    def __len__(self) -> int:
        return self.count

    def __contains__(self, fp: int) -> bool:
        return self.zero if not fp else bool(self.slots[self._find(fp)])

    def add(self, fp: int) -> bool:
        if not fp:
            new, self.zero = not self.zero, True
            self.count += new
            return new
        i = self._find(fp)
        if self.slots[i]:
            return False
        self.slots[i] = fp
        self.count += 1
        if self.count * 8 > self.mask * 5:
            self._grow()
        return True

    def _find(self, fp: int) -> int:
        """The slot holding `fp`, or the empty one where it goes."""
        slots, mask = self.slots, self.mask
        i = (fp // self.stride) & mask
        while slots[i] and slots[i] != fp:
            i = (i + 1) & mask
        return i

    def _grow(self) -> None:
        old = self.slots
        self.mask = 2 * len(old) - 1
        self.slots = array("q", bytes(16 * len(old)))
        for fp in old:
            if fp:
                self.slots[self._find(fp)] = fp

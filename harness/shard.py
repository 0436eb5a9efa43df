"""A shard K/N of a run: which of the run's units (configurations, parts of a walk, traces, and for
`mutate-spec` mutants) this machine takes, the same answer on every machine.

Why: a CI matrix of N jobs runs one command N times, each with `--shard K/N` (as pytest-split, Jest and
Playwright do); every job must take a fixed share of the units, no two the same unit, and all of them
together every unit. The plan is made from the units alone (their names and weights, never the machine,
the clock or the worker count): heaviest first, each unit goes to the shard with the least weight so far
(ties: the lower K), so the shares are balanced and every job computes the same plan. The shards' result
files carry the plan, and `claimcheck merge` (harness/reports/merge.py) checks that they agree and that
every shard came. A command takes the option by building its Plan and running `plan.mine(shard)`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

MAX_SHARDS = 256


@dataclass(frozen=True)
class Shard:
    k: int  # this shard, 1 to n
    n: int

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


WHOLE = Shard(1, 1)


def parse(text: str) -> Shard:
    """`K/N` (shard K of N) or a ValueError saying what is wrong, in one line."""
    m = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not m:
        raise ValueError(f"expected K/N, shard K of N (e.g. 2/3), got {text!r}")
    k, n = int(m.group(1)), int(m.group(2))
    if not 1 <= n <= MAX_SHARDS:
        raise ValueError(f"N must be from 1 to {MAX_SHARDS}, got {text!r}")
    if not 1 <= k <= n:
        raise ValueError(f"K must be from 1 to N ({n}), got {text!r}")
    return Shard(k, n)


@dataclass(frozen=True)
class Plan:
    """Every unit of a run and the shard that takes it."""
    run: str  # what is sharded: the command and the options that choose its units (`conform --profile deep`)
    measure: str  # what a weight counts: edges, traces, configurations, mutants
    units: tuple[str, ...]
    weights: tuple[int, ...]
    n: int
    shard_of: tuple[int, ...]  # each unit's K

    def mine(self, shard: Shard) -> list[int]:
        """The positions of `shard`'s units, in the run's order."""
        if shard.n != self.n:
            raise ValueError(f"shard {shard} of a plan for {self.n} shards")
        return [i for i, k in enumerate(self.shard_of) if k == shard.k]

    def digest(self) -> str:
        """The plan's sha256: shards of one run agree on it, or they were not cut from the same run."""
        doc = [self.run, self.measure, self.units, self.weights, self.n, self.shard_of]
        return hashlib.sha256(json.dumps(doc).encode()).hexdigest()

    def to_json(self) -> dict:
        return {"run": self.run, "measure": self.measure, "units": list(self.units), "weights": list(self.weights),
                "n": self.n, "shard_of": list(self.shard_of)}


def plan(run: str, measure: str, units, n: int) -> Plan:
    """The plan of `units`, (name, weight) pairs in the run's order, over `n` shards."""
    names = tuple(u for u, _w in units)
    weights = tuple(int(w) for _u, w in units)
    if len(set(names)) != len(names):
        raise ValueError(f"{run}: a unit is named twice")
    loads = [0] * n
    shard_of = [0] * len(names)
    for i in sorted(range(len(names)), key=lambda i: (-weights[i], i)):
        k = min(range(n), key=lambda s: (loads[s], s))
        shard_of[i] = k + 1
        loads[k] += weights[i]
    return Plan(run, measure, names, weights, n, tuple(shard_of))


def from_json(doc: dict) -> Plan:
    return Plan(str(doc["run"]), str(doc["measure"]), tuple(map(str, doc["units"])), tuple(map(int, doc["weights"])),
                int(doc["n"]), tuple(map(int, doc["shard_of"])))

"""The restart that leaves LeftClaims' rows (spec/README.md decision 16), as a path of twin actions.

The seeded Init is a state the model reaches from an empty database: each left Session's prompt acquired
by a node that crashes, the lease and the grace run out, the recovery worker's scan and takeover of each
and its crash, the lease and the grace run out again. Tests walk this path to show the Init reachable,
and a recorded history of a seeded run writes its seed's commits as these steps, so a history checker
judges them from the empty start like any other commit.
"""

from __future__ import annotations

from dataclasses import replace

from .state import Input


def empty_start(cfg):
    """The configuration the restart runs in: the same constants with nothing left and crashes on."""
    return replace(cfg, left_claims=frozenset(), faults=cfg.faults | {"crash"})


def restart(cfg) -> list[tuple[str, tuple]]:
    """The twin steps from `empty_start(cfg)`'s Init to `cfg`'s Init (less the faults history)."""
    left = [s for s in cfg.sessions if s in cfg.left_claims]
    node, worker = cfg.nodes[0], cfg.recoverers[0]
    run_out = [("Tick", ())] * (cfg.lease + cfg.eff_grace)
    steps = []
    for s in left:
        steps += [("Acquire", (node, Input(s, "prompt", 1, "pending"))), ("Crash", (node,))]
    steps += run_out
    for s in left:
        steps += [("RecoveryScan", (worker, s)), ("RecoveryTakeover", (worker,)), ("Crash", (worker,))]
    return steps + run_out

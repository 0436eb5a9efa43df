"""The TypeScript example follows the twin on schedules nobody wrote down: seeded random walks over the
twin's enabled action instances (`spec.model.successors`) on every named configuration, each step taken
by the server through its driver and the mapped state compared with the twin's after every request; a
quarter of the moves instead attempt an instance the twin does not enable (lockstep's refusal probes),
which the server must refuse, changing nothing.

A stand-in until `claimcheck fuzz --sut` (lockstep through the driver) exists: it does not check the
invariants on the mapped states or search for liveness lassos, it only checks that the server and the twin
agree step for step, with each defect switched on in both (the defect variants agree with the twin's), that
save and restore put the world back (walks that restore an earlier point go on from the twin's state saved
with it), and that a defect switched on in the server only is caught by a divergence on most defects.

Like tests/driver/test_typescript.py, nothing here is skipped: without node or node_modules it fails.
"""

import dataclasses
import random

import pytest

from harness.conformance.lockstep import refusals
from harness.conformance.diff import diff
from harness.driver.client import Connection, SutScheduler
from spec import configs
from spec import model as M
from spec import names as N
from test_typescript import DRIVER, _installed, conn  # noqa: F401 (conn: the module's driver fixture)

WALKS, DEPTH, PROBE = 10, 30, 0.25
# defects a random walk of the server alone (the twin without the defect) reaches within MUTANT_WALKS walks
# (a divergence or a refused probe taken); the others need a schedule a uniform walk rarely draws (the
# committed traces catch those of them that have a trace: tests/driver/test_typescript.py)
MUTANT_WALKS = 60
CAUGHT_BY_WALKS = ("cross-session-recovery-collision", "unsupervised-cancel-heartbeat", "silent-quarantine-noop",
                   "memory-before-publish", "acquire-overwrites-expired", "renew-after-expiry",
                   "unfenced-step-publication", "takeover-trusts-scan",
                   "takeover-overwrites-phase", "conversion-leaves-assistant-open", "scan-quarantines-cancellation",
                   "cancellation-quarantine-strands", "recovery-retries-unbounded",
                   "recovery-input-excluded-everywhere", "heartbeat-extends-lease", "cancel-interrupts-unstarted",
                   "dispatch-after-failed-renewal", "cancel-requeues-continuation", "conversion-retry-mints-new-ids",
                   "wake-fresh-share-zero", "wake-fresh-share-full", "wake-retry-oldest-first", "wake-reserve-without-cas",
                   "exact-retry-appends-twice",
                   "resume-drains-without-request", "exact-retry-ignores-content")
# not exact-retry-arms-continuation: a uniform walk first reaches it at seed 340 (a retry naming the
# continuation after a crash and its conversion); conform's exhaustive walk catches it on `boundary`


def walk(conn, cfg: M.Config, seed: int, mutant=None, restores: bool = False) -> str | None:
    """One seeded walk; the first disagreement (one line), or None. With `restores`, the walk saves points
    and now and then restores one, going on from the twin's state saved with it."""
    rng = random.Random(seed)
    sut = SutScheduler(conn, cfg, mutant=mutant)
    st = M.init(cfg)
    saved: dict[str, M.State] = {}
    for k in range(DEPTH):
        delta = diff(st, sut.state(), cfg)
        if delta:
            return f"step {k}: divergence: " + "; ".join(map(str, delta[:4]))
        if restores and rng.random() < 0.2:
            point = f"p{k}"
            conn.request("save", point=point)
            saved[point] = st
        if restores and saved and rng.random() < 0.1:
            point = rng.choice(sorted(saved))
            conn.request("restore", point=point)
            sut._observe()  # the SutScheduler reads the restored world back
            st = saved[point]
            sut.faults = st.faults  # the environment's history is the twin's (as SutScheduler keeps it)
            continue
        enabled = list(M.successors(cfg, st))
        probes = refusals(cfg, st, enabled) if rng.random() < PROBE else []
        if probes:
            action, params = rng.choice(probes)
            if sut.attempt(action, params):
                return f"step {k}: the server took {action}{params}, which the twin does not enable"
            continue
        if not enabled:
            return None
        action, params, nxt = rng.choice(enabled)
        try:
            sut.apply(action, params, nxt)
        except AssertionError as exc:
            return f"step {k}: {exc}"
        st = nxt
    delta = diff(st, sut.state(), cfg)
    return "divergence: " + "; ".join(map(str, delta[:4])) if delta else None


@pytest.mark.parametrize("name", list(configs.CONFIGS))
def test_random_walks_agree_with_the_twin(conn, name):
    problems = {seed: walk(conn, configs.CONFIGS[name], seed) for seed in range(WALKS)}
    assert not any(problems.values()), {s: p for s, p in problems.items() if p}


@pytest.mark.parametrize("name", ["ci", "sessions", "tools", "inputs", "wakes"])
def test_random_walks_on_postgresql_agree_with_the_twin(pg_server, name):
    _installed()
    pg = Connection.spawn(f"{DRIVER} --database {pg_server.fresh_database(prefix='walks')}")
    try:
        problems = {seed: walk(pg, configs.CONFIGS[name], seed, restores=True) for seed in range(3)}
    finally:
        pg.close()
    assert not any(problems.values()), {s: p for s, p in problems.items() if p}


@pytest.mark.parametrize("name", list(configs.CONFIGS))
def test_walks_that_save_and_restore_agree_with_the_twin(conn, name):
    problems = {seed: walk(conn, configs.CONFIGS[name], seed, restores=True) for seed in range(WALKS)}
    assert not any(problems.values()), {s: p for s, p in problems.items() if p}


@pytest.mark.parametrize("defect", list(N.DEFECTS), ids=str)
def test_with_a_defect_in_both_the_walks_still_agree(conn, defect):
    d = N.DEFECTS[defect]
    cfg = dataclasses.replace(configs.CONFIGS[d.config], defects=frozenset([defect]))
    problems = {seed: walk(conn, cfg, seed) for seed in range(WALKS)}
    assert not any(problems.values()), {s: p for s, p in problems.items() if p}


@pytest.mark.parametrize("defect", CAUGHT_BY_WALKS)
def test_a_defect_in_the_server_only_is_caught_by_a_walk(conn, defect):
    cfg = configs.CONFIGS[N.DEFECTS[defect].config]
    assert any(walk(conn, cfg, seed, mutant=[defect]) for seed in range(MUTANT_WALKS)), \
        f"{defect}: no walk of {MUTANT_WALKS} diverged"

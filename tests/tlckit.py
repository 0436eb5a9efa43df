"""TLC for the tests: Java and the pinned tla2tools.jar (harness.engines.tlc). Where either is missing, or
the jar's sha256 differs from the pin, the tests that need TLC skip with the reason; under CI they fail
instead (tests/cikit.py), so a CI run can never pass without having run them."""

from __future__ import annotations

from typing import Mapping

import functools
import cikit
from spec import configs as _configs


def unavailable_reason() -> str | None:
    """Why TLC cannot run here, or None. Only TlcUnavailable is a reason; anything else is a bug, raised."""
    from harness.engines import tlc
    try:
        tlc.find_jar()
        tlc.find_java()
    except tlc.TlcUnavailable as exc:
        return str(exc)
    return None


def require(env: Mapping[str, str] | None = None) -> None:
    """Return when TLC can run; else skip (locally) or fail (CI) the test that needed it."""
    reason = unavailable_reason()
    if reason is None:
        return
    cikit.unavailable(f"TLC unavailable: {reason}", "the TLC tests", env)


RENEW_GUARD = "RenewAccepts(c, r, n) == c.exec = r.exec /\\ c.owner = n /\\ c.ttl > 0"


def altered_modules(folder):
    """Copies of the spec's modules with one guard weakened on TLC's side only: Renew forgets the lease
    predicate (`renew_without_lease_check` below, in TLA+), for
    tlc.MODULES. The twin is untouched, so a comparison must fail."""
    from spec import source
    copies = []
    for module in source.MODULES:
        text = module.read_text()
        if module == source.SPEC:
            assert RENEW_GUARD in text, "the Renew guard this test weakens has moved: update RENEW_GUARD"
            text = text.replace(RENEW_GUARD, RENEW_GUARD.removesuffix(" /\\ c.ttl > 0"))
        (folder / module.name).write_text(text)
        copies.append(folder / module.name)
    return tuple(copies)


def renew_without_lease_check(cfg, st, n):
    """Mutant twin step: Renew's fence forgets the unexpired-lease predicate (one guard weakened), for
    spec.model.RUNNER_STEPS."""
    from spec import model as M
    r = st.run[n]
    if not (r.pc == "acquired" and not r.intr):
        return None
    s = M.si(cfg, r.sess)
    c = st.claim[s]
    if c.exec == r.exec and c.owner == cfg.nodes[n]:
        return st._replace(claim=M._put(st.claim, s, c._replace(ttl=cfg.lease)),
                           run=M._put(st.run, n, r._replace(pc="renewed")))
    return M._stop(st, n)


SMALL = 40_000  # states: a defect's per-run TLC checks stay at or under this; whole witnesses are the deep profile's


@functools.lru_cache(maxsize=1)
def small_configs() -> tuple[str, ...]:
    """The registered configurations of at most SMALL states, smallest first (spec/README.md, "the test
    suite's budget"): where each run checks a defect on TLC; a larger one is stopped past SMALL. Not only the
    gate's and the feature configurations: `boundary` (730 states) is where the exact retry's defects show
    (on `inputs`, 9,641, TLC wrote exact-retry-appends-twice's graph in 123 s of a loaded run)."""
    from harness.engines.explore import explore
    from spec import configs
    sizes = {n: explore(configs.get(n), liveness=False, keep_edges=False, check=False, max_states=SMALL + 1).distinct
             for n in configs.CONFIGS if n not in configs.SAFETY_ONLY and n != "deep"}
    return tuple(sorted((n for n in sizes if sizes[n] <= SMALL), key=sizes.get))


# the configurations whose twin and TLC graphs every run compares (tests/engines/test_equivalence.py): the gate's
# and the feature configurations but the whole ones, which are the gate's and the deep profile's (spec/README.md,
# "the test suite's budget, part 2"); together they take every action and reach every fence branch
# (tests/engines/test_fences.py); `sessions` (156,295 states) is compared nightly on its own
WHOLE = {"ci": 50_000, "leftclaims": 500}  # the least number of states each has
COMPARED_EVERY_RUN = tuple(c for c in _configs.GATE_CONFIGS + _configs.FEATURE_CONFIGS if c not in (*WHOLE, "sessions"))


@functools.lru_cache(maxsize=1)
def shared_runs():
    """The suite's one TLC check per configuration (every invariant, the liveness properties, the
    refinement), writing its state graph for the twin = TLC comparison, as the gate's run of `ci` does;
    stored in the run's cache (tests/conftest.py), so each check runs once across the xdist workers."""
    import os
    from pathlib import Path
    from harness.engines import tlccache
    from harness.reports import tlcruns
    from spec import configs
    store = os.environ.get(tlccache.ENV)
    # one TLC worker on the JVM's first compiler for a safety check: beside the other xdist worker that used
    # least CPU (measured side by side, CPU seconds, two workers and both compilers against one and C1: steer
    # 36.3 / 31.1, toolpauses 27.6 / 20.8); a check with liveness keeps two (tlcruns.TlcRuns._workers)
    return tlcruns.TlcRuns(None, Path(store) if store else None,
                           graphs=configs.GATE_CONFIGS + configs.FEATURE_CONFIGS, graph_workers=1)

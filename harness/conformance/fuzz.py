"""`claimcheck fuzz`: lockstep campaigns per configuration, a replayable trace per failure, a coverage table.

Why a module of its own: harness.conformance.lockstep is the machine; this is what a person or CI runs and reads
(which configurations, where the trace went, how to replay it, what the run exercised).
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import lru_cache
from pathlib import Path

from spec import configs
from spec import model as M
from spec import names as N

from harness.traces import configfile
from harness.conformance import lockstep
from harness.conformance.found import failure_lines, replay_command, save_failure  # noqa: F401 - replay_command: the gate's

REACHABLE_CAP = 400_000  # the coverage denominator is skipped (reported as "> cap") beyond this


def configs_for(config: str | None, defects) -> list[str]:
    """The configurations a run uses: the named one, else each defect's witness, else the gate's."""
    if config:
        return [config]
    if defects:
        return sorted({N.DEFECTS[d].config for d in defects})
    return list(configs.GATE_CONFIGS)


@lru_cache(maxsize=None)
def reachable(cfg: M.Config) -> tuple[int, bool]:
    """(distinct reachable twin states, complete?) — the coverage denominator."""
    distinct, _edges, complete = reachable_graph(cfg)
    return distinct, complete


@lru_cache(maxsize=None)
def reachable_graph(cfg: M.Config) -> tuple[int, int, bool]:
    """(distinct reachable twin states, labelled edges, complete?): every state is expanded once, so the
    explorer's generated successors are the graph's labelled edges."""
    from harness.engines.explore import explore
    res = explore(cfg, liveness=False, keep_edges=False, check=False, max_states=REACHABLE_CAP)
    return res.distinct, res.generated, res.complete


def write_trace(outcome: lockstep.Outcome, base: str, out_dir: str | Path) -> Path:
    return save_failure(outcome.cfg, outcome.found, run="lockstep", source="fuzz", base=base, out_dir=out_dir,
                        mutant=outcome.mutant, loop=outcome.found.loop)


def coverage_lines(outcome: lockstep.Outcome, *, denominator: bool = True) -> list[str]:
    cov = outcome.coverage
    lines = [f"  examples {cov.examples} ({cov.runs} runs from Init), lockstep steps {cov.steps}, "
             f"{cov.steps / outcome.seconds:,.0f} steps/s (invariant checks included)"]
    acts = "  ".join(f"{a} {cov.actions[a]}" for a in N.ACTIONS if cov.actions[a])
    missed = [a for a in N.ACTIONS if not cov.actions[a]]
    lines.append(f"  actions:    {len(N.ACTIONS) - len(missed)}/{len(N.ACTIONS)} exercised: {acts}")
    if missed:
        lines.append(f"              never: {', '.join(missed)}")
    probed = "  ".join(f"{a} {cov.probes[a]}" for a in N.ACTIONS if cov.probes[a])
    lines.append(f"  refusals:   {sum(cov.probes.values())} probes of attempts the twin does not enable: "
                 f"{probed or 'none'}")
    hit = "  ".join(f"{b} {cov.boundaries[b]}" for b in N.BOUNDARIES if cov.boundaries[b])
    bmissed = [b for b in N.BOUNDARIES if not cov.boundaries[b]]
    lines.append(f"  boundaries: {len(N.BOUNDARIES) - len(bmissed)}/{len(N.BOUNDARIES)} hit: {hit}")
    if bmissed:
        lines.append(f"              never: {', '.join(bmissed)}")
    seen, taken = len(cov.states), len(cov.edges)
    if denominator:
        total, edges, complete = reachable_graph(outcome.cfg)
        share = f"{seen:,} of {total:,} reachable ({100 * seen / total:.2f}%)" if complete else \
            f"{seen:,} of more than {total:,} reachable"
        eshare = f"{taken:,} of {edges:,} labelled edges ({100 * taken / edges:.2f}%)" if complete and edges else \
            f"{taken:,} distinct labelled edges (the graph is larger than {REACHABLE_CAP:,} states)"
    else:
        share = f"{seen:,} distinct (denominator not computed)"
        eshare = f"{taken:,} distinct labelled edges (denominator not computed)"
    lines.append(f"  states:     {share}")
    lines.append(f"  edges:      {eshare}")
    return lines


def fuzz(*, server, profile: str, config: str | None, defects, out_dir: str | Path,
         denominator: bool = True, echo=print, mutant=(), seed: int | None = None,
         max_examples: int | None = None, progress_for=None) -> int:
    """Run every configuration; 0 when all pass, 1 on any failure (each leaves a trace), 4 when a defect
    was switched on and no run detected it. `mutant`: defects switched on in the implementation only (the
    twin keeps `defects`). `seed` replaces the profile's derandomized search by a random one from that seed.
    `progress_for(label)` gives the progress callback (and context manager) of one configuration's campaign.
    `server`: the system under test (harness.port)."""
    defects = N.check_defects(defects or ())
    mutant = N.check_defects(mutant or ())
    code = frozenset(defects) | frozenset(mutant) if mutant else None
    failed = undetected = False
    s = lockstep.PROFILES[profile]
    if seed is not None or max_examples is not None:
        s = lockstep.settings(s, derandomize=seed is None and s.derandomize,
                              max_examples=max_examples or s.max_examples)
    for base in configs_for(config, defects or mutant):
        chosen = configfile.resolve(base, defects)  # a registered name or a configuration file
        cfg, base = chosen.cfg, chosen.label
        echo(f"claimcheck fuzz: profile={profile} config={base} defects={', '.join(defects) or 'none'} "
             + (f"code-only defects={', '.join(mutant)} " if mutant else "")
             + (f"{server.label} " if server.command else server.label)
             + (f" seed={seed}" if seed is not None else "") + f" examples={s.max_examples}")
        with (progress_for(base) if progress_for else nullcontext()) as progress:
            outcome = lockstep.run(cfg, server=server, profile=profile, mutant=code, settings_=s, seed=seed,
                                   progress=progress)
        echo(f"  time:       {outcome.seconds:.1f} s")
        for line in coverage_lines(outcome, denominator=denominator):
            echo(line)
        if outcome.found is not None:
            failed = True
            f = outcome.found
            path = write_trace(outcome, base, out_dir)
            for line in failure_lines(f, path, cfg, server=server):
                echo(line)
        elif outcome.hypothesis_error:
            failed = True
            echo(f"  verdict:    ERROR {outcome.hypothesis_error.splitlines()[0]}")
        elif defects or mutant:
            undetected = True
            echo(f"  verdict:    NOT DETECTED: {', '.join(sorted(set(defects) | set(mutant)))} switched on, and "
                 f"{outcome.coverage.examples} examples found no divergence or violation")
        else:
            echo("  verdict:    OK, the implementation followed the twin; every invariant held")
    return 1 if failed else 4 if undetected else 0

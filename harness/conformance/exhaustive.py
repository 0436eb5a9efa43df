"""`claimcheck conform`: the exhaustive walk per configuration, its report, and a replayable trace per failure.

Why a module of its own: harness.conformance.conform is the walk; this is what a person, the gate or the
nightly job runs and reads (which configurations, states S of S, edges E of E, probes P, where the
failing trace went and how to replay it).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from spec import configs
from spec import model as M
from spec import names as N

from harness.traces import configfile
from harness.conformance.found import failure_lines, replay_command, save_failure  # noqa: F401 - replay_command: the gate's
from harness.conformance import conform as C

# The gate's walk (profile `ci`): small configurations that together enable every registry action and
# pass every named boundary (tests/conformance/test_conform.py checks the union), each a registered
# configuration with fewer executions or rows where its feature shows without them. `deep`: the two
# largest gate configurations, whole (the nightly job).
SMALL = {  # label: (registered configuration, the constants changed), fewest edges first (193 to 20,122)
    "inputs/prompts=1": ("inputs", {"prompts": 1}),  # Admit, ExactRetry, Resume
    "steer/no-faults": ("steer", {"faults": frozenset()}),  # Steer
    "delivery": ("delivery", {}),  # delivery kinds: steer before queue, then age
    "tools/max_exec=1": ("tools", {"max_exec": 1}),  # the fenced tool start, the tool, its publication failing
    "tools2": ("tools2", {}),  # two local tool calls in a Step, each reconciled by its call index
    "hosted": ("hosted", {}),  # a hosted call reconciled before the local one, its publication failing
    "wakes/wake_rows=3": ("wakes", {"wake_rows": 3}),  # the wake scans with a fresh slot
    "wakes2/max_wake_tries=1": ("wakes2", {"max_wake_tries": 1}),  # two wakers: read, reserve, a lost reservation
    "boundary": ("boundary", {}),  # an exact retry naming a continuation, refused
    "forged": ("forged", {}),  # ForgeContinuation: a forged continuation row, refused and quarantined at promotion
    "fragments/max_exec=1": ("fragments", {"max_exec": 1}),  # OpenFragment, its boundary, the flush
    "listeners/max_exec=1": ("listeners", {"max_exec": 1}),  # ListenerHangs: a runner hung at its gate
    "heartbeat/max_steps=2/max_exec=1": ("heartbeat", {"max_steps": 2, "max_exec": 1}),  # renewals, a 2nd Step
    "retries": ("retries", {}),  # the lost acknowledgement and the reconversion, crashes, a promotion
    "replays": ("replays", {}),  # a reconversion whose lease a pause expired: it changes nothing
    "rows": ("rows", {}),  # two Sessions, the forged recovery row
    "wakestied": ("wakestied", {}),  # tied wake rows: WakeSync, WakeAcquire, WakePromote (each row its Session's)
    # two recovery workers racing under pauses: a takeover, conversion or heartbeat after the other worker's
    # takeover or conversion (Lease 2: a live lease short of full, the only one a heartbeat renews; MaxTries 1:
    # the retry is `retries`'s)
    "takeovers/max_tries=1/lease=2": ("takeovers", {"max_tries": 1, "lease": 2}),
}
PROFILES = {"ci": tuple(SMALL), "deep": ("ci", "sessions")}


def resolve(label: str) -> tuple[M.Config, str]:
    """A profile's configuration by its label (`heartbeat/max_steps=2/max_exec=1`), a registered name or a
    configuration file."""
    if label in SMALL:
        name, changed = SMALL[label]
        return replace(configs.CONFIGS[name], **changed), label
    chosen = configfile.resolve(label, ())
    return chosen.cfg, chosen.label


def write_trace(rep: C.Report, base: str, out_dir: str | Path) -> Path:
    return save_failure(rep.cfg, rep.failure, run="conform", source="conform", base=base, out_dir=out_dir,
                        mutant=rep.mutant)


def summary(rep: C.Report) -> str:
    """The one line a run reports: states S of S, edges E of E, probes P."""
    return (f"states {rep.states:,} of {rep.states_total:,}, edges {rep.edges:,} of {rep.edges_total:,}, "
            f"probes {rep.probes:,}")


def timing_line(rep: C.Report) -> str:
    total = sum(rep.timing.values()) or 1.0
    parts = "  ".join(f"{k} {100 * v / total:.0f}%" for k, v in rep.timing.most_common())
    return f"  time:       {rep.seconds:.1f} s, {rep.edges_per_s:,.0f} edges/s ({rep.savepoint}); {parts}"


def configs_for(names, profile: str | None) -> list[str]:
    return list(names) if names else list(PROFILES[profile or "ci"])


def shard_plan(labels, shard, run: str):
    """The plan of a sharded walk (harness/shard.py): each configuration's parts (conform.parts.shard_units),
    weighed by their edges; with each configuration's (cfg, base, graph, units). Every shard builds the
    same graphs, so every shard computes the same plan."""
    from harness import shard as S
    from harness.conformance.parts import shard_units
    walks, units = [], []
    for name in labels:
        cfg, base = resolve(name)
        graph = C.graph_of(cfg)
        parts = [(f"{base}:{'top' if part is None else part}", part, edges) for part, edges in shard_units(graph)]
        walks.append((cfg, base, graph, parts))
        units += [(unit, edges) for unit, _part, edges in parts]
    return S.plan(run, "edges", units, shard.n), walks


def conform(*, server, config=(), profile: str | None = None, mutant=(), workers: int = 1,
            out_dir: str | Path = "traces/found", echo=print, progress_for=None, shard=None,
            record: dict | None = None) -> int:
    """Walk every configuration on `server` (harness.port); 0 when every one is covered whole with no
    failure, 1 on a failure (each leaves a trace) or an incomplete walk, 4 when a code-only mutant survived
    every edge (as `fuzz`). `mutant`: defects switched on in the server only. `progress_for(label)` gives
    the progress callback (and context manager) of one configuration. `shard` (harness.shard.Shard): walk
    only this shard's parts of the configurations, whole only over all shards. `record`: filled with the
    run's `plan` (None unless sharded) and a `walks` list of (base, Report, trace path or None, units
    walked, edges expected), for the shard's result file."""
    from contextlib import nullcontext
    mutant = frozenset(N.check_defects(mutant or ())) or None
    failed = undetected = False
    labels = configs_for(config, profile)
    record = {} if record is None else record
    record.update(plan=None, walks=[])
    if shard is not None:
        plan, planned = shard_plan(labels, shard, "conform " + (" ".join(f"--config {c}" for c in config)
                                                               or f"--profile {profile or 'ci'}"))
        record["plan"] = plan
        mine = {plan.units[i] for i in plan.mine(shard)}
        echo(f"claimcheck conform: shard {shard}: {len(mine)} of {len(plan.units)} parts, "
             f"{sum(plan.weights[i] for i in plan.mine(shard)):,} of {sum(plan.weights):,} edges")
    else:
        planned = [(*resolve(name), None, None) for name in labels]
    for cfg, base, graph, parts in planned:
        only = None if parts is None else [(unit, part, edges) for unit, part, edges in parts if unit in mine]
        if only == []:
            continue
        echo(f"claimcheck conform: config={base} " + (f"code-only defects={', '.join(sorted(mutant))} " if mutant else "")
             + (server.label if server.command else f"{server.label} workers={workers}")
             + (f" parts={len(only)} of {len(parts)}" if only else ""))
        t0 = time.perf_counter()
        if graph is None:
            graph = C.graph_of(cfg)
            echo(f"  graph:      {len(graph.states):,} states, {sum(len(s) for s in graph.succ):,} edges "
                 f"({time.perf_counter() - t0:.1f} s)")
        with (progress_for(base) if progress_for else nullcontext()) as progress:
            rep = C.walk(cfg, server=server, graph=graph, mutant=mutant, workers=workers, progress=progress,
                         only=None if only is None else [part for _u, part, _e in only])
        expected = rep.edges_total if only is None else sum(edges for _u, _p, edges in only)
        echo(f"  covered:    {summary(rep)}" + ("" if only is None else f" (this shard's parts: {expected:,} edges)"))
        echo(timing_line(rep))
        path = None
        if rep.failure is not None:
            failed = True
            f = rep.failure
            path = write_trace(rep, base, out_dir)
            for line in failure_lines(f, path, cfg, then=", then a refusal probe" if f.probe else "", server=server):
                echo(line)
        elif not (rep.complete if only is None else rep.edges == expected):
            failed = True
            echo("  verdict:    INCOMPLETE: not every state and edge was checked")
        elif mutant:
            echo(f"  verdict:    NOT DETECTED: the code-only defects {', '.join(sorted(mutant))} survived every edge")
            undetected = True
        elif only is not None:
            echo("  verdict:    OK for this shard's parts: every edge taken as the twin does, every probe refused "
                 "(100% only over all shards: claimcheck merge)")
        else:
            echo("  verdict:    OK, 100%: the implementation took every edge as the twin does and refused every probe")
        record["walks"].append((base, rep, path, [base] if only is None else [u for u, _p, _e in only], expected))
    return 1 if failed else 4 if undetected else 0

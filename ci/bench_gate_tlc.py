"""The gate's TLC stages (twin = TLC, then TLC) in the previous layout and in the new one, side by side in one run.

Not a test: run `python ci/bench_gate_tlc.py [--rounds 1] [--configs ci,sessions,...] [--busy] [--reuse]`.

- previous layout (before issue 34): twin = TLC dumped `ci`'s graph with `-dump dot,actionlabels` (no checks,
  `-workers 1`) beside the twin's exploration and read the dot file; the TLC stage then checked every
  configuration, `ci` again: two TLC runs on `ci`;
- now: the twin = TLC stage starts the TLC check of `ci`, which writes its graph as it checks
  (harness/engines/tlcgraph.py), and the TLC stage takes that run's outcome: one TLC run per configuration
  (the gate's own code: harness/reports/gate.py, tlcruns.py; nothing reused);
- `--reuse`: a third pass, a later gate run with the same inputs (the outcomes stored by content).

Each round runs both layouts (alternating which goes first) and prints, per configuration and per stage, the
wall time and the CPU time (this process and the TLC JVMs it waited for: the figure a loaded machine
disturbs least), the totals and the ratio previous / now. Both layouts must pass and their twin = TLC
stages must agree on the graph's size. `--busy` runs a CPU-bound process beside the whole bench (issue 34:
the gate's time beside a second CPU-bound job).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness.engines import check, tlc  # noqa: E402
from harness.engines.equivalence import compare  # noqa: E402
from harness.reports import gate, tlcruns  # noqa: E402
from harness.traces.tlavalue import state_key_from_text  # noqa: E402
from spec import configs  # noqa: E402


def clock() -> tuple[float, float, float]:
    """(wall, CPU of this process, CPU of the children it waited for: TLC's JVMs)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def since(t0, jvm_only: bool = False) -> tuple[float, float]:
    """(wall, CPU) since `t0`: a stage's CPU is this process's (the twin, reading graphs) and TLC's; a TLC
    run's (`jvm_only`) its JVM's alone, since the twin explores in this process at the same time."""
    t1 = clock()
    return t1[0] - t0[0], (t1[2] - t0[2]) + (0 if jvm_only else t1[1] - t0[1])


# ---------------------------------------------------------------- the previous layout's dot dump

_NODE = re.compile(r'^(-?\d+) \[label="(.*)"(?:,style = filled)?\];?$')
_EDGE = re.compile(r'^(-?\d+) -> (-?\d+) \[label="(\w+)"')


def parse_dot(path: Path):
    """The previous tlc._parse_dot, as it was."""
    keys, node, edges, first = [], {}, set(), None
    with path.open() as f:
        for line in f:
            line = line.rstrip("\n")
            if " -> " in line:
                m = _EDGE.match(line)
                if m:
                    edges.add((m.group(1), m.group(3), m.group(2)))
                    continue
            m = _NODE.match(line)
            if m:
                node[m.group(1)] = len(keys)
                keys.append(state_key_from_text(m.group(2).encode().decode("unicode_escape")))
                first = first or m.group(1)
    return node[first], keys, {(node[a], act, node[b]) for a, act, b in edges if a != b}


def start_dot_dump(cfg, times: dict):
    """The previous tlc.start_state_graph: TLC with `-dump dot,actionlabels`, no checks, one worker."""
    tmp = tempfile.TemporaryDirectory(prefix="bench-dot-")
    work = Path(tmp.name)
    text = configs.to_tlc_cfg(cfg, liveness=False, checks=False)
    cmd = tlc.command(work, text, 1, extra=("-dump", "dot,actionlabels", str(work / "graph")))
    t0 = clock()
    proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

    def finish(timeout=None):
        try:
            if proc.wait(timeout=timeout) != 0:
                raise RuntimeError(f"TLC's dot dump failed (exit {proc.returncode})")
            times["dump"] = since(t0, jvm_only=True)
            return parse_dot(work / "graph.dot")
        finally:
            tmp.cleanup()
    return finish


def previous(names) -> dict:
    out = {}
    t0 = clock()
    (twin,) = tlcruns.GRAPH_CONFIGS
    c = compare(configs.get(twin), tlc_graph=start_dot_dump(configs.get(twin), out))
    assert c.equal, "previous layout: the graphs differ"
    out["twin = TLC"], out["graph"] = since(t0), (c.tlc_states, c.tlc_edges)
    t1 = clock()
    for name in names:
        t = clock()
        o = check.run_tlc(configs.get(name), name, liveness=name in configs.GATE_CONFIGS, out_dir=None)
        assert o.verdict == "ok", f"previous layout: TLC {name}: {o.verdict} {o.reason} {o.violated}"
        out[name] = since(t, jvm_only=True)
    out["TLC"] = since(t1)
    return out


def now(names, store: Path | None = None) -> dict:
    out = {}
    g = gate.Gate(Path(tempfile.mkdtemp(prefix="bench-gate-")), reuse=store)
    runs = {}
    real = check.run_tlc

    def timed(cfg, name, **kw):  # each TLC run, timed where it runs (ci's in the twin = TLC stage)
        t = clock()
        o = real(cfg, name, **kw)
        runs[name] = since(t, jvm_only=True)
        return o
    check.run_tlc = timed
    try:
        for stage in (gate.stage_equivalence, gate.stage_tlc):
            t = clock()
            r = stage(g)
            assert r.status == gate.PASS, f"now: {r.name}: {r.status} {r.detail}"
            out[r.name] = since(t)
            if r.name == "twin = TLC":
                out["graph"] = tuple(int(x.replace(",", "")) for x in re.findall(r"([\d,]+) (?:states|labelled)", r.detail))
    finally:
        check.run_tlc = real
    for name in names:
        out[name] = runs.get(name, (0.0, 0.0))
    return out


def fmt(t) -> str:
    return f"{t[0]:7.1f} / {t[1]:6.1f}"


def report(names, old: dict, new: dict, reused: dict | None) -> None:
    print("TLC per configuration: wall / its JVM's CPU seconds; stages: wall / CPU of this process and TLC's")
    print(f"{'':<22}{'previous: wall / CPU s':>24}{'now: wall / CPU s':>24}{'ratio (wall, CPU)':>20}")
    for name in names:
        twin = name in tlcruns.GRAPH_CONFIGS
        before = old[name] if not twin else tuple(a + b for a, b in zip(old["dump"], old[name]))
        how = " (dot dump + check: now one check)" if twin else ""
        print(f"TLC {name:<18}{fmt(before):>24}{fmt(new[name]):>24}{_ratio(before, new[name]):>20}{how}")
    for stage in ("twin = TLC", "TLC"):
        print(f"stage {stage:<16}{fmt(old[stage]):>24}{fmt(new[stage]):>24}{_ratio(old[stage], new[stage]):>20}")
    both_old = tuple(a + b for a, b in zip(old["twin = TLC"], old["TLC"]))
    both_new = tuple(a + b for a, b in zip(new["twin = TLC"], new["TLC"]))
    print(f"{'both TLC stages':<22}{fmt(both_old):>24}{fmt(both_new):>24}{_ratio(both_old, both_new):>20}")
    if reused:
        r = tuple(a + b for a, b in zip(reused["twin = TLC"], reused["TLC"]))
        print(f"{'reused (a later run)':<22}{'':>24}{fmt(r):>24}   twin = TLC {reused['twin = TLC'][0]:.1f} s, "
              f"TLC {reused['TLC'][0]:.1f} s")


def _ratio(a, b) -> str:
    return f"{a[0] / b[0]:.2f}x, {a[1] / b[1]:.2f}x" if b[0] and b[1] else "-"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", default=",".join(configs.GATE_CONFIGS + configs.FEATURE_CONFIGS),
                   help="the TLC stage's configurations (default: the gate's ten; ci is always the twin = TLC one)")
    p.add_argument("--twin-config", default="ci", choices=sorted(configs.CONFIGS),
                   help="the twin = TLC stage's configuration (default ci, the gate's)")
    p.add_argument("--rounds", type=int, default=1, choices=range(1, 11), metavar="1..10",
                   help="rounds of both layouts, alternating which goes first")
    p.add_argument("--busy", action="store_true", help="a CPU-bound process beside the bench")
    p.add_argument("--reuse", action="store_true", help="also a later gate run that reuses the stored outcomes")
    a = p.parse_args(argv)
    names = a.configs.split(",")
    unknown = [n for n in names if n not in configs.CONFIGS]
    if unknown:
        p.error(f"unknown configuration {', '.join(unknown)}; known: {', '.join(configs.CONFIGS)}")
    tlcruns.GRAPH_CONFIGS = (a.twin_config,)
    names = names if a.twin_config in names else [a.twin_config] + names
    saved = (configs.GATE_CONFIGS, configs.FEATURE_CONFIGS)
    configs.GATE_CONFIGS = tuple(n for n in names if n in saved[0])
    configs.FEATURE_CONFIGS = tuple(n for n in names if n not in saved[0])
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if a.busy else None
    try:
        for k in range(a.rounds):
            print(f"round {k + 1}: load average before {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
                  + (", a CPU-bound process beside" if busy else ""), flush=True)
            order = [("previous", previous), ("now", now)]
            results = dict((label, run(names)) for label, run in (order if k % 2 == 0 else order[::-1]))
            assert results["previous"]["graph"] == results["now"]["graph"], "the layouts' twin = TLC graphs differ"
            reused = None
            if a.reuse:
                with tempfile.TemporaryDirectory(prefix="bench-store-") as store:
                    now(names, Path(store))
                    reused = now(names, Path(store))
            report(names, results["previous"], results["now"], reused)
    finally:
        if busy:
            busy.kill()
            busy.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

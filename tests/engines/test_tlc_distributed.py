"""`claimcheck check --engine tlc --distributed`: TLC's own distributed mode (a TLCServer and TLCWorker
processes over RMI on loopback) gives a local TLC run's state count and safety verdict, the same
counterexample trace, and a report saying liveness was not checked; a worker that never connects, or a
trace local TLC does not confirm, is a clear failure, and no java process outlives a run.

Small configurations only (`heartbeat`, `rows`: a few thousand states); each distributed run starts three
JVMs, so these tests take tens of seconds each on a loaded machine."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import cikit
from harness.cli import main
from harness.engines import tlc, tlc_distributed as D, tlc_trace
from harness.engines.check import run_tlc
from harness.traces import trace as T
from spec import configs

DEFECT, DEFECT_CONFIG = "heartbeat-extends-lease", "heartbeat"  # one node: its shortest counterexample is unique


@pytest.fixture(scope="module")
def compiler_or_skip(tlc_or_skip, tmp_path_factory):
    """The distributed mode compiles its loopback launcher with Java's compiler module (skip locally where
    it is missing, fail under CI)."""
    try:
        D.compile_launcher(tmp_path_factory.mktemp("classes"))
    except tlc.TlcUnavailable as exc:
        cikit.unavailable(f"TLC's distributed mode unavailable: {exc}", "the distributed TLC tests")


@pytest.fixture
def spawned(monkeypatch):
    """Every process the distributed mode starts, to check none is left running."""
    procs: list[subprocess.Popen] = []
    real = subprocess.Popen

    def popen(*args, **kwargs):
        p = real(*args, **kwargs)
        procs.append(p)
        return p
    monkeypatch.setattr(D.subprocess, "Popen", popen)
    return procs


def test_the_state_count_and_report_of_a_local_run_with_liveness_not_checked(compiler_or_skip, spawned, tmp_path, capsys):
    report = tmp_path / "check.json"
    code = main(["check", "--engine", "tlc", "--distributed", "--config", "rows", "--json", str(report),
                 "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    doc = json.loads(report.read_text())
    local = tlc.run(configs.get("rows"), liveness=False, workers=1)
    assert local.verdict == "ok" and doc["verdict"] == "ok" and doc["distinct"] == local.distinct
    assert "  liveness: not checked (TLC's distributed mode checks safety only)" in out.splitlines()
    assert "verdict:   OK, every invariant and property holds" in out and "Refinement" in out
    assert doc["liveness"] is False and doc["distributed"] is True and doc["not_checked"] == D.NOT_CHECKED
    assert spawned and all(p.poll() is not None for p in spawned)  # server and both workers have exited


def test_a_defect_is_found_with_the_same_trace_as_local_tlc(compiler_or_skip, spawned, tmp_path):
    cfg = configs.get(DEFECT_CONFIG, defects=[DEFECT])
    dist = run_tlc(cfg, DEFECT_CONFIG, liveness=False, out_dir=tmp_path / "dist", distributed=True)
    local = run_tlc(cfg, DEFECT_CONFIG, liveness=False, out_dir=tmp_path / "local", workers=1)
    assert dist.verdict == local.verdict == "violation", dist.reason
    assert dist.violated == local.violated == ["TypeOK"] and dist.length == local.length
    label = f"tlc-{DEFECT_CONFIG}-{DEFECT}-"  # traces/found/tlc-<label>-<time>.json, as a local run's
    assert dist.trace_path.name.startswith(label) and local.trace_path.name.startswith(label)
    a, b = T.load(dist.trace_path), T.load(local.trace_path)
    assert a.steps == b.steps and a.meta.invariants == b.meta.invariants and a.meta.source == "tlc"
    assert all(p.poll() is not None for p in spawned)


LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1 in /proc/net/tcp and tcp6


def listening(pids) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp* spells them) the processes `pids` listen on."""
    inodes = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                found.add(fields[1].rsplit(":", 1)[0])
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's /proc/net/tcp")
@pytest.mark.parametrize("launcher", [True, False], ids=["loopback-launcher", "stand-in-without-it"])
def test_a_worker_that_never_connects_fails_clearly_and_rmi_listens_on_loopback_only(
        launcher, compiler_or_skip, spawned, monkeypatch):
    # the stand-in worker: it looks the server up on a port where nothing listens; the listening sockets
    # are read once the server is ready for workers (its registry and its own object)
    if not launcher:  # TLC's main classes run directly: RMI binds the wildcard address, and the check says so
        real = D._Cluster._java
        monkeypatch.setattr(D._Cluster, "_java", lambda self, *a, **k: [x for x in real(self, *a, **k) if x != "LoopbackRmi"])
    seen: list[set[str]] = []

    def progress(**counts):
        if str(counts.get("phase", "")).startswith("waiting for"):
            seen.append(listening(p.pid for p in spawned if p.poll() is None))
    with pytest.raises(D.DistributedFailure, match="no TLC worker registered with the server within 5 s"):
        D.run(configs.get("heartbeat"), workers=1, worker_port=D.free_port(), connect_timeout=5, progress=progress)
    assert len(spawned) >= 3 and all(p.poll() is not None for p in spawned)  # the compiler, the server, the worker
    assert len(seen) == 1 and len(seen[0]) >= 1
    assert (seen[0] <= LOOPBACK) == launcher, seen


def test_a_trace_local_tlc_does_not_confirm_is_an_error_not_a_verdict(compiler_or_skip, tmp_path):
    # the defect's counterexample, rebuilt under the configuration without the defect: its last step is
    # none of Next's there, so the replay finds no violation
    cfg = configs.get(DEFECT_CONFIG, defects=[DEFECT])
    local = tlc.run(cfg, liveness=False, workers=1)
    fixed = configs.get(DEFECT_CONFIG)
    res = tlc.parse_output(fixed, local.output)
    res.violated, res.verdict = [], "error"  # as the server prints it: no name
    with pytest.raises(tlc_trace.Unconfirmed, match="does not confirm"):
        tlc_trace.rebuild(fixed, res, tlc.state_texts(local.output), configs.to_tlc_cfg(fixed, liveness=False),
                          tmp_path / "trace")


def test_the_trace_module_primes_only_the_next_states():
    text = tlc_trace.trace_module(["/\\ x = 1\n/\\ y = [a |->\n     2]", "/\\ x = 2\n/\\ y = 3"])
    assert "TraceNextState2 ==\n  /\\ x' = 2\n  /\\ y' = 3" in text
    assert "TraceState1 ==\n  /\\ x = 1\n  /\\ y = [a |->\n       2]" in text
    assert "  \\/ (TraceState1 /\\ TraceNextState2 /\\ Next)" in text and "TraceInit == TraceState1" in text


def test_workers_that_all_exit_before_the_server_is_done_fail_clearly(compiler_or_skip, spawned, monkeypatch):
    # the stand-in worker: a main class that does not exist, so each worker JVM exits at once
    monkeypatch.setattr(D, "WORKER", "claimcheck.NoSuchWorker")
    with pytest.raises(D.DistributedFailure, match="every TLC worker exited before the server finished"):
        D.run(configs.get("heartbeat"), workers=2)
    assert all(p.poll() is not None for p in spawned)


def test_a_java_without_its_compiler_module_is_unavailable_not_passed(monkeypatch, tmp_path, capsys):
    fake = tmp_path / "java"  # a stand-in JRE without jdk.compiler, answering as java 17 does
    fake.write_text("#!/bin/sh\necho 'Error occurred during initialization of boot layer' >&2\n"
                    "echo 'java.lang.module.FindException: Module jdk.compiler not found' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(tlc, "find_java", lambda: str(fake))
    with pytest.raises(tlc.TlcUnavailable, match="no compiler module"):
        D.compile_launcher(tmp_path / "classes")
    cfg = configs.get(DEFECT_CONFIG, defects=[DEFECT])
    o = run_tlc(cfg, DEFECT_CONFIG, liveness=False, out_dir=None, distributed=True)
    assert o.verdict == "skipped" and "no compiler module" in o.reason  # never a pass

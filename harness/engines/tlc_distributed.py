"""TLC's own distributed mode on this machine: one TLCServer and N TLCWorker processes, over RMI on loopback.

Why: a configuration whose search outgrows one TLC process can be spread over worker processes (and,
from there, machines) by the model checker the gate already trusts, with the same safety verdict, trace
and report as a local run. What TLCServer checks: the invariants, the action properties and the
refinement of SessionLifecycle (an implied init and an implied action); never a temporal property, so
liveness is not checked in this mode, and every report says so (NOT_CHECKED).

Distributed TLC prints a violation's trace but not what it violated: local TLC then replays exactly that
trace (its INIT and NEXT are the trace's states, `trace_module`) with the same configuration, and names
the violation as a local run does. A trace local TLC does not confirm is an error, never a verdict.

Every process is bounded: the server and its workers are killed on a timeout, a failure or an
interruption (and, where `setpriv` exists, when claimcheck itself dies); a worker that never registers,
or workers that all exit before the server is done, fail the run with one line instead of leaving the
server waiting for them. RMI listens on 127.0.0.1 only (LoopbackRmi.java), on a free port per run.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from spec import configs
from spec import model as M
from spec.source import MC_SPEC

from harness.engines import tlc, tlc_trace

LAUNCHER = Path(__file__).with_name("LoopbackRmi.java")
LOOPBACK = "127.0.0.1"
NOT_CHECKED = "liveness: not checked (TLC's distributed mode checks safety only)"
SERVER = "tlc2.tool.distributed.TLCServer"
WORKER = "tlc2.tool.distributed.TLCWorker"
MSG_SERVER_READY = 7000  # initial states computed: workers may register
MSG_WORKER_REGISTERED = 7001
MSG_WORKER_STATS = 7003  # the search is over; printed before the server tells its workers to exit
MSG_BEHAVIOR = 2121  # "The behavior up to this point is:", the trace follows
ENDING = {MSG_WORKER_STATS, MSG_BEHAVIOR, tlc.MSG_SUCCESS, tlc.MSG_STATS}
REPORT_MS = 20_000  # the server's progress line, every 20 s (its default is a minute)
WORKERS_GONE_GRACE = 10.0  # seconds the server gets to finish once every worker has exited
AFTER_SERVER = 30.0  # seconds the workers get to exit once the server has
POLL = 0.2
# a worker names itself by its RMI port, read through sun.rmi internals Java 17 does not export by default
WORKER_EXPORTS = ("--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED", "--add-exports=java.rmi/sun.rmi.transport=ALL-UNNAMED")


class DistributedFailure(RuntimeError):
    """The distributed run reached no verdict: a worker never registered, the workers died, the server
    failed, or local TLC did not confirm the trace the server printed."""


def compile_launcher(classes: Path) -> None:
    """Compile LoopbackRmi.java into `classes` with the compiler module of the java that runs TLC
    (jdk.compiler: in every JDK, and in Debian's openjdk-17-jre-headless; no javac needed)."""
    done = subprocess.run([tlc.find_java(), "-m", "jdk.compiler/com.sun.tools.javac.Main", "-d", str(classes),
                           str(LAUNCHER)], capture_output=True, text=True)
    if done.returncode == 0:
        return
    if "jdk.compiler not found" in done.stdout + done.stderr:
        raise tlc.TlcUnavailable("this Java has no compiler module (jdk.compiler): TLC's distributed mode compiles "
                                 "harness/engines/LoopbackRmi.java (RMI on loopback only); install a JDK")
    raise DistributedFailure(f"could not compile {LAUNCHER.name}:\n{_tail(done.stdout + done.stderr)}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def run(cfg: M.Config, *, workers: int = 2, timeout: float | None = None, progress=None, only=None,
        connect_timeout: float = 120.0, worker_port: int | None = None) -> tlc.TlcResult:
    """Model-check `cfg`'s safety with a TLCServer and `workers` TLCWorker processes (one thread each);
    `worker_port`: the port the workers look the server up at, if not the server's (a test points it
    where nothing listens)."""
    t0 = time.perf_counter()
    cfg_text = configs.to_tlc_cfg(cfg, liveness=False, only=only)
    with tempfile.TemporaryDirectory(prefix="claimcheck-tlcdist-") as tmp:
        work = Path(tmp)
        cluster = _Cluster(work, cfg_text, workers, worker_port, progress)
        try:
            out = cluster.check(connect_timeout, timeout, t0)
        finally:
            cluster.stop()
        res = tlc.parse_output(cfg, out)
        if res.verdict != "ok" and res.steps:
            try:
                tlc_trace.rebuild(cfg, res, tlc.state_texts(out), cfg_text, work / "trace", timeout=timeout)
            except tlc_trace.Unconfirmed as exc:
                raise DistributedFailure(str(exc)) from exc
        elif res.verdict != "ok":
            raise DistributedFailure("TLC's distributed server ended without a verdict:\n" + _tail(out))
    res.output = out
    res.seconds = time.perf_counter() - t0
    return res


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _die_with_parent() -> list[str]:
    """A prefix that SIGKILLs the process when claimcheck dies, so no java outlives a killed run."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL"] if setpriv else []


class _Cluster:
    """One TLCServer and its TLCWorker processes in `work`; `stop` ends every one still running."""

    def __init__(self, work: Path, cfg_text: str, workers: int, worker_port: int | None, progress):
        tlc.prepare(work, cfg_text)
        classes = work / "classes"
        compile_launcher(classes)
        self.work, self.n, self.worker_port, self.progress = work, workers, worker_port, progress
        self.classpath = f"{tlc.find_jar()}{os.pathsep}{classes}"
        self.props = [f"-Djava.rmi.server.hostname={LOOPBACK}", f"-D{SERVER}.port={free_port()}"]
        self.server: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.logs: list = []
        self.chunks: list[str] = []
        self.ready, self.registered, self.ending = threading.Event(), threading.Event(), threading.Event()
        self.eof = threading.Event()

    def _java(self, main: str, tmp: str, *args: str, props=()) -> list[str]:
        return [*_die_with_parent(), *tlc.jvm(self.work, tmp), *self.props, *props,
                "-cp", self.classpath, "LoopbackRmi", main, *args]

    def check(self, connect_timeout: float, timeout: float | None, t0: float) -> str:
        """Run the server to its end, starting the workers once it is ready; what the server printed."""
        cmd = self._java(SERVER, "tmp", "-tool", "-deadlock", "-metadir", str(self.work / "states"),
                         "-config", "MC.cfg", MC_SPEC.name, props=[f"-D{SERVER}.report={REPORT_MS}"])
        self.server = subprocess.Popen(cmd, cwd=self.work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        reader = threading.Thread(target=self._read, name="tlc-server-output", daemon=True)
        reader.start()
        started = gone = None
        while not self.eof.wait(POLL):
            now = time.perf_counter()
            if timeout and now - t0 > timeout:
                raise TimeoutError(f"TLC's distributed mode did not finish within {timeout:.0f} s")
            if started is None and self.ready.is_set():
                self._start_workers()
                started = now
            if started is not None and not self.registered.is_set() and now - started > connect_timeout:
                raise DistributedFailure(f"no TLC worker registered with the server within {connect_timeout:g} s"
                                         + self._worker_tail())
            if started is not None and not self.ending.is_set() and all(w.poll() is not None for w in self.workers):
                gone = gone or now
                if now - gone > WORKERS_GONE_GRACE:
                    raise DistributedFailure("every TLC worker exited before the server finished" + self._worker_tail())
        reader.join()
        try:
            self.server.wait(timeout=AFTER_SERVER)
        except subprocess.TimeoutExpired:
            raise DistributedFailure("TLC's distributed server closed its output but did not exit") from None
        for w in self.workers:
            try:
                w.wait(timeout=AFTER_SERVER)
            except subprocess.TimeoutExpired:
                pass  # stop() kills it
        return "".join(self.chunks)

    def _read(self) -> None:
        try:
            for line in tlc.pump(self.server, self.chunks, self.progress):
                if not line.startswith("@!@!@STARTMSG "):
                    continue
                code = int(line.split()[1].split(":")[0])
                if code == MSG_SERVER_READY:
                    self.ready.set()
                    if self.progress:
                        self.progress(phase=f"waiting for {self.n} worker(s)")
                elif code == MSG_WORKER_REGISTERED:
                    self.registered.set()
                    if self.progress:
                        self.progress(phase="breadth-first search")
                elif code in ENDING:
                    self.ending.set()
        finally:
            self.eof.set()

    def _start_workers(self) -> None:
        for i in range(1, self.n + 1):
            log = open(self.work / f"worker{i}.log", "w")
            self.logs.append(log)
            props = [f"-D{WORKER}.threadCount=1", *WORKER_EXPORTS]
            props += [f"-D{SERVER}.port={self.worker_port}"] if self.worker_port else []
            cmd = self._java(WORKER, f"tmp-worker{i}", LOOPBACK, props=props)  # the last -D of a name wins
            self.workers.append(subprocess.Popen(cmd, cwd=self.work, stdout=log, stderr=subprocess.STDOUT))

    def _worker_tail(self) -> str:
        logs = [(self.work / f"worker{i}.log") for i in range(1, len(self.workers) + 1)]
        tails = [f"{p.name}: {_tail(p.read_text(), 3)}" for p in logs if p.exists() and p.read_text().strip()]
        return ("\n" + "\n".join(tails)) if tails else ""

    def stop(self) -> None:
        """Kill every process still running and reap them all: no java outlives the run."""
        procs = [p for p in [self.server, *self.workers] if p is not None]
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait()
        for log in self.logs:
            log.close()

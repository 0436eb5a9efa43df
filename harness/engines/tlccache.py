"""One TLC state-graph dump per input within a run: the twin = TLC tests compare the same configuration
more than once (ci: the equal graphs, and the altered twin), and each dump of ci costs minutes.

Off unless $CLAIMCHECK_TLC_CACHE names a directory (tests/conftest.py sets it to a temporary one per
pytest run, shared by the xdist workers; the CLI never sets it). An entry is keyed by the sha256 of
everything TLC reads: the generated cfg, the text of every .tla module, the jar's pinned sha256, the Java
binary and the options, so an edited spec or cfg misses. Entries are written atomically (a rename) under
an exclusive file lock, so two workers never dump the same graph at once: the second waits, then reads.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from pathlib import Path

ENV = "CLAIMCHECK_TLC_CACHE"


def key(cfg_text: str, modules, jar_sha256: str, options) -> str:
    """sha256 of TLC's inputs: the cfg, each module's name and text, the jar's pin and the options."""
    h = hashlib.sha256()
    for part in (cfg_text, jar_sha256, *map(str, options)):
        h.update(part.encode() + b"\0")
    for module in modules:
        h.update(Path(module).name.encode() + b"\0" + Path(module).read_bytes() + b"\0")
    return h.hexdigest()


class Entry:
    """One locked cache entry: `path` is the cached dump when it is there (a hit), else None; `store`
    puts a fresh dump in place; `release` lets the next worker in (also when the dump failed)."""

    def __init__(self, directory: Path, digest: str):
        self._final = directory / f"{digest}.dot"
        self._lock = open(directory / f"{digest}.lock", "w")
        fcntl.flock(self._lock, fcntl.LOCK_EX)  # a worker dumping the same graph finishes first
        self.path = self._final if self._final.is_file() else None

    def store(self, dump: Path) -> None:
        part = self._final.with_suffix(f".part{os.getpid()}")
        shutil.copyfile(dump, part)
        os.replace(part, self._final)

    def release(self) -> None:
        if not self._lock.closed:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()


def open_entry(digest: str) -> Entry | None:
    """The locked entry for `digest`, or None when no cache is configured."""
    directory = os.environ.get(ENV)
    if not directory:
        return None
    Path(directory).mkdir(parents=True, exist_ok=True)
    return Entry(Path(directory), digest)

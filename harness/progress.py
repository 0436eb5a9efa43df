"""Live progress for the long stages (TLC, the explorer, twin = TLC, lockstep, traces, the kill matrix).

Why a module of its own, among harness/'s own modules: the engines and drivers must not import rich,
nor this module (the layering of README "The house"). They take a plain callable, `progress(**counts)`,
and call it as they go with what they know: integers (`distinct=`, `generated=`, `depth=`, `steps=`,
`done=`) or a short string (`phase=`). A command makes one `Reporter`, asks it for a `Task` per stage
and passes that task down as the callable; this module alone decides how it looks:

- live, when stdout and the progress stream are both terminals: a rich progress display, one line per
  running task with its count, rate and elapsed time; it is transient (the command's own result lines
  are what stays on screen);
- plain, anywhere else (a CI log, a pipe, a file): one line per task at most every `every` seconds, and
  none before the task has run that long, so a short stage prints nothing; no escape codes. An update
  that came too soon after the last line is printed once the interval is over (by a ticker thread,
  every `tick` seconds), and a task that has printed nothing for `heartbeat` seconds prints its line
  again, so a log never goes quiet for long while a stage runs (TLC itself reports once a minute).

Rates are the task's main count over its elapsed time when that count came, both read from the
reporter's clock (a fake one in the tests, which also turn the ticker off and call `flush()`, so
nothing here depends on timing).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Callable, TextIO

Clock = Callable[[], float]


class Throttle:
    """True at most once every `every` seconds of `clock`, and not before `every` seconds have passed."""

    def __init__(self, every: float, clock: Clock):
        self.every = every
        self.clock = clock
        self.due = clock() + every

    def ready(self) -> bool:
        now = self.clock()
        if now < self.due:
            return False
        self.due = now + self.every
        return True


def _fmt(value) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


class Task:
    """One stage's progress: call it with counts; `close()` (or leaving a `with` block) ends it.

    `key` names the count that is the task's main figure (shown with `unit` and its rate, `unit`/s),
    or, with `total`, the count of items done out of `total` (shown as a count, no rate)."""

    def __init__(self, reporter: "Reporter", name: str, *, unit: str, key: str, total: int | None):
        self.reporter = reporter
        self.name = name
        self.unit = unit
        self.key = key
        self.total = total
        self.counts: dict[str, object] = {}
        self.started = reporter.clock()
        self.elapsed = 0.0
        self.rate: float | None = None
        self.throttle = Throttle(reporter.every, reporter.clock)
        self.pending = False  # an update not printed yet (plain mode)
        self.printed = self.started  # when the last plain line was printed
        self.handle = None  # the rich task id, in live mode
        self.closed = False

    def __call__(self, **counts) -> None:
        if self.closed:
            return
        with self.reporter.lock:  # TLC's output is read on a thread of its own, the ticker runs on another
            self.counts.update(counts)
            self.elapsed = self.reporter.clock() - self.started
            main = counts.get(self.key)
            if self.total is None and isinstance(main, int) and self.elapsed > 0:
                self.rate = main / self.elapsed  # as of this count (a later phase-only call keeps it)
            self.reporter._update(self)

    def info(self) -> str:
        """The counts as text: `1,234 states, 456 states/s, depth 9` or `3/10 defects, ...`."""
        main = self.counts.get(self.key)
        parts = []
        if self.total is not None:
            parts.append(f"{_fmt(main or 0)}/{self.total:,} {self.unit}")
        elif main is not None:
            parts.append(f"{_fmt(main)} {self.unit}")
            if self.rate is not None:
                parts.append(f"{self.rate:,.0f} {self.unit}/s")
        parts += [f"{k} {_fmt(v)}" for k, v in self.counts.items() if k not in (self.key, "phase")]
        if self.counts.get("phase"):
            parts.append(str(self.counts["phase"]))
        return ", ".join(parts)

    def line(self) -> str:
        """The plain-mode line."""
        info = self.info()
        return f"  {self.name}: {info + ', ' if info else ''}{self.elapsed:.0f} s"

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.reporter._close(self)

    def __enter__(self) -> "Task":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Reporter:
    """Makes the tasks of one command and renders them (live or plain: see the module docstring).

    `stream`: where progress goes (default stderr, so that a command's stdout stays its result);
    `console`: a rich Console to render on instead (live unless `live=False`); `quiet`: tasks do
    nothing (a library caller, the tests)."""

    def __init__(self, *, live: bool | None = None, stream: TextIO | None = None, console=None,
                 clock: Clock = time.monotonic, every: float = 5.0, quiet: bool = False,
                 tick: float | None = 1.0, heartbeat: float | None = 30.0):
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.every = every
        self.tick = tick
        self.heartbeat = heartbeat
        self.ticker: threading.Event | None = None  # set to stop the plain-mode ticker thread
        self.quiet = quiet
        self.console = console
        if live is None:
            live = console is not None or (_isatty(sys.stdout) and _isatty(self.stream)
                                           and os.environ.get("TERM") not in ("dumb", "unknown"))
        self.live = live and not quiet
        self.lock = threading.RLock()
        self.display = None  # the rich Progress while a task runs, in live mode
        self.running: list[Task] = []

    def task(self, name: str, *, unit: str = "states", key: str = "distinct", total: int | None = None) -> Task:
        t = Task(self, name, unit=unit, key=key, total=total)
        if self.quiet:
            t.closed = True
            return t
        with self.lock:
            self.running.append(t)
            if self.live:
                self._start_display()
                t.handle = self.display.add_task(name, total=total, info="")
            elif self.tick and self.ticker is None:
                self.ticker = threading.Event()
                threading.Thread(target=self._tick, args=(self.ticker,), name="progress", daemon=True).start()
        return t

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(self.tick):
            self.flush()

    def flush(self) -> None:
        """Plain mode: print each running task's held-back update, or its heartbeat, if it is due."""
        with self.lock:
            if self.live:
                return
            for t in self.running:
                now = self.clock()
                quiet = (self.heartbeat is not None and now - t.printed >= self.heartbeat
                         and t.counts.get("phase") != "done")  # a finished part waiting for the other
                if (t.pending or quiet) and t.throttle.ready():
                    t.elapsed = now - t.started
                    self._print(t)

    def _print(self, t: Task) -> None:
        t.pending = False
        t.printed = self.clock()
        print(t.line(), file=self.stream, flush=True)

    def factory(self, prefix: str = "", **spec) -> Callable[[str], Task]:
        """`name -> Task` for a driver that runs several stages of one kind (fuzz: one per configuration)."""
        return lambda name: self.task(f"{prefix}{name}", **spec)

    def _start_display(self) -> None:
        if self.display is not None:
            return
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
        console = self.console or Console(file=self.stream)
        # no bar: most stages have no known total, and a count with a total ("3/10 defects") says as much
        self.display = Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), TimeElapsedColumn(),
                                TextColumn("{task.fields[info]}"),
                                console=console, transient=True, refresh_per_second=4, get_time=self.clock)
        self.display.start()

    def _update(self, t: Task) -> None:
        with self.lock:
            if self.live:
                if self.display is not None and t.handle is not None:
                    done = t.counts.get(t.key)
                    self.display.update(t.handle, info=t.info(),
                                        completed=done if t.total is not None and isinstance(done, int) else None)
            elif t.throttle.ready():
                self._print(t)
            else:
                t.pending = True

    def _close(self, t: Task) -> None:
        with self.lock:
            if t in self.running:
                self.running.remove(t)
            if not self.running and self.ticker is not None:
                self.ticker.set()
                self.ticker = None
            if self.live and self.display is not None:
                if t.handle is not None:
                    self.display.remove_task(t.handle)
                if not self.running:
                    self.display.stop()
                    self.display = None

    def close(self) -> None:
        for t in list(self.running):
            t.close()

    def __enter__(self) -> "Reporter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


QUIET = Reporter(quiet=True)

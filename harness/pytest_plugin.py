"""The pytest plugin (entry point `claimcheck` in `pytest11`): `pytest --claimcheck-traces DIR` collects each
trace file in DIR (its `*.json`, as `claimcheck replay DIR` takes them) as a test item that replays it
against the bundled implementation (harness.conformance.replay on binding.server.Bundled: with harness.cli,
the only module of harness/ that chooses a server). A trace that replays cleanly passes; one that
does not fails with the replay's first divergence as its message (the other problems counted after it),
never a traceback; a malformed trace fails with the one-line reason the trace loader gives.

Without `--claimcheck-traces` the plugin collects nothing. Given only that option, pytest runs only the
traces; given test paths as well, it runs both. The option may be repeated. `-p no:claimcheck` turns the
plugin off. Imports of the harness are deferred to the run, so loading the plugin costs nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

OPTION = "--claimcheck-traces"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("claimcheck", "claimcheck trace replay")
    group.addoption(OPTION, action="append", default=[], metavar="DIR", dest="claimcheck_traces",
                    help="collect each trace file (*.json) in DIR as a test that replays it against the "
                         "implementation; a failure's message is the replay's first divergence (repeatable)")


def _dirs(config: pytest.Config) -> list[Path]:
    return [Path(d).resolve() for d in config.getoption("claimcheck_traces") or []]


def pytest_configure(config: pytest.Config) -> None:
    dirs = config.getoption("claimcheck_traces") or []
    for d in dirs:
        if not Path(d).is_dir():
            raise pytest.UsageError(f"{OPTION} {d}: not a folder")
    if not dirs:
        return
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        config.args += [str(Path(d)) for d in dirs]  # test paths given too: run both
    else:  # no test path given: only the traces, not the testpaths or the current folder
        config.args[:] = [str(Path(d)) for d in dirs]


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if file_path.suffix == ".json" and file_path.resolve().parent in _dirs(parent.config):
        return TraceFile.from_parent(parent, path=file_path)
    return None


class TraceFile(pytest.File):
    """A trace file: one item, its replay."""

    def collect(self):
        yield TraceItem.from_parent(self, name="replay")


def message(path: Path, problems: list[str]) -> str:
    """The replay's first divergence (with whatever else went wrong at the same step), then a count of
    the problems after it."""
    step = problems[0].split(":", 1)[0] if problems[0].startswith("step ") else None
    same = [p for p in problems[1:] if step and p.split(":", 1)[0] == step]
    rest = len(problems) - 1 - len(same)
    more = [f"({rest} more problem(s) after it; `claimcheck replay {path}` shows them all)"] if rest else []
    return "\n".join([f"{path.name}: {problems[0]}"] + [f"  {p}" for p in same] + more)


class TraceFailed(Exception):
    """A replay that did not pass; the message is what pytest reports."""


class TraceItem(pytest.Item):
    def runtest(self) -> None:
        from binding.server import Bundled
        from harness.conformance.replay import replay_file
        from harness.traces.inputfile import InputError

        try:
            res = replay_file(self.path, server=Bundled())
        except InputError as exc:  # a malformed trace: bad input, said in one line
            raise TraceFailed(f"not a replayable trace: {exc}") from None
        if res.ok:
            return
        raise TraceFailed(message(self.path, res.problems or [f"violates {', '.join(res.violated)}"]))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, TraceFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"replay {self.path.name}"

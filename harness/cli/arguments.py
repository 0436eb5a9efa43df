"""The command line's argument types (argparse `type=`): each refuses bad input with one line naming it,
which the command reports with exit 2 (harness.cli), never a traceback; the exit codes, and the check that a
defect runs on a configuration that can show it."""

from __future__ import annotations

import argparse
import os
import sys

from spec import configs
from spec import names as N

from harness.traces.inputfile import one_line


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


# ---------------------------------------------------------------- argument types (argparse `type=`)

def defect(text: str) -> str:
    if text not in N.DEFECTS:
        raise argparse.ArgumentTypeError(f"unknown defect {text!r}; known: {', '.join(N.DEFECTS)}")
    return text


def assumption(text: str) -> str:
    if text not in configs.ASSUMPTION_FIELDS:
        raise argparse.ArgumentTypeError(f"unknown assumption {text!r}; known: {', '.join(configs.ASSUMPTION_FIELDS)}")
    return text


def invariant(text: str) -> str:
    if text not in N.INVARIANTS:
        raise argparse.ArgumentTypeError(f"unknown invariant {text!r}; known: {', '.join(N.INVARIANTS)}")
    return text


def config(text: str) -> str:
    """A registered configuration name or a path to a JSON configuration file (loaded by the command,
    so that its errors name the file and field)."""
    from harness.traces.configfile import looks_like_path
    if text in configs.CONFIGS or looks_like_path(text):
        return text
    raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(sorted(configs.CONFIGS))}, "
                                     "or give a path to a .json configuration file)")


def count(lo: int, hi: int):
    def count(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"expected an integer from {lo} to {hi}, got {text!r}")
        return v
    return count


def sizes(text: str) -> list[int]:
    """A comma-separated list of line counts (bench --validate)."""
    try:
        out = [int(x) for x in text.split(",")]
    except ValueError:
        out = []
    if not out or not all(10 <= v <= 10_000_000 for v in out):
        raise argparse.ArgumentTypeError(f"expected line counts from 10 to 10000000 separated by commas, got {text!r}")
    return out


def seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = None
    if v is None or not 0 < v <= 3600:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, at most 3600, got {text!r}")
    return v


def gate_stage(text: str) -> str:
    from harness.reports.gate import stage_keys
    if text.strip().lower() not in stage_keys():
        raise argparse.ArgumentTypeError(f"unknown gate stage {text!r}; known: {', '.join(stage_keys())}")
    return text.strip().lower()


def out_dir(text: str) -> str:
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text}: exists and is not a folder")
    return text


def out_file(text: str) -> str:
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text}: is a folder; give a file name")
    return text


def report_file(text: str) -> str:
    """A report written at the end of a long run: fail now, not after it."""
    out_file(text)
    folder = os.path.dirname(text) or "."
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"{text}: folder {folder} does not exist")
    return text


def existing_file(text: str) -> str:
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    return text


def db_url(text: str) -> str:
    import sqlalchemy as sa
    try:
        backend = sa.engine.make_url(text).get_backend_name()
    except Exception:  # noqa: BLE001 - SQLAlchemy's ArgumentError, or a ValueError from the port
        raise argparse.ArgumentTypeError(f"not a database URL: {text!r}") from None
    if backend not in ("sqlite", "postgresql"):
        raise argparse.ArgumentTypeError(f"unsupported database {backend!r}: claimcheck runs on sqlite and PostgreSQL")
    return text


OK, VIOLATION, USAGE, INTERNAL, NOT_DETECTED = 0, 1, 2, 3, 4  # the exit codes (harness.cli's docstring)


def say(line: str) -> None:
    """One line on stderr, whatever bytes a file name or field holds."""
    print(one_line(line), file=sys.stderr, flush=True)


def witness_config(config: str | None, defects, assumptions_off=()) -> tuple[str, str | None]:
    """(the configuration to run, a note for the user): a defect (or an assumption switched off) shows on
    its witness configuration (spec/names.py); without --config that one runs, and a registered
    configuration that is not its witness is refused, since it would report OK on a defect it cannot show.
    A configuration file is the user's own: it runs as given."""
    from harness.traces.configfile import looks_like_path
    wanted = {N.DEFECTS[d].config for d in defects or ()} | {N.ASSUMPTIONS[a].config for a in assumptions_off or ()}
    if config is not None and looks_like_path(config):
        return config, None
    if len(wanted) > 1:
        raise UsageError(f"these switches show on different configurations ({', '.join(sorted(wanted))}): "
                         "check them one at a time")
    if config is None:
        chosen = next(iter(wanted), "ci")
        return chosen, (f"configuration {chosen}: the witness of {', '.join(list(defects or ()) + list(assumptions_off or ()))}"
                        if wanted else None)
    if wanted and config not in wanted:
        (w,) = wanted
        raise UsageError(f"{', '.join(list(defects or ()) + list(assumptions_off or ()))} shows on configuration {w}, "
                         f"not {config}: drop --config or pass --config {w}")
    return config, None


def shard(text: str):
    """`--shard K/N`: shard K of N (harness/shard.py)."""
    from harness import shard as S
    try:
        return S.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None

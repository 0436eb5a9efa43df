"""What a failed lockstep or conform run leaves behind: its trace file under traces/found, the command that
replays it, and the lines its report prints. One place, so that both commands write and say the same."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from spec import model as M

from harness.traces.trace import found_path, from_steps, save


def save_failure(cfg: M.Config, f, *, run: str, source: str, base: str, out_dir: str | Path, mutant=(),
                 loop=None) -> Path:
    """`f`: a lockstep Found or a conform Failure (kind, invariants, steps, probe). `run` names the run in
    the title ("lockstep", "conform"), `source` in the trace and its file name; `mutant` the code's defects."""
    code_only = sorted(set(mutant or ()) - cfg.defects)
    what = ", ".join(f.invariants) or f.kind
    title = f"{run} {f.kind} on {base}: {what}"
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", base)  # a profile's label (`steer/no-faults`) as a trace name
    trace = from_steps(cfg, f.steps, title=title, source=source, base=base,
                       invariants=f.invariants, defect=next(iter(cfg.defects)) if len(cfg.defects) == 1 else None,
                       loop=loop, refused=f.probe, mutant=code_only)
    label = f"{source}-{base}-" + ("-".join(sorted(cfg.defects)) or "correct") + "".join(f"-code-{m}" for m in code_only)
    return save(trace, found_path(out_dir, label))


def replay_command(path: Path, cfg: M.Config, server=None) -> str:
    """The command that replays a saved failure (against the same driver when the run had one: the
    server's `command`, harness.port)."""
    command = getattr(server, "command", None)
    return " ".join(["claimcheck replay", str(path)] + [f"--defect {d}" for d in sorted(cfg.defects)]
                    + ([f"--sut {shlex.quote(command)}"] if command else []))


def failure_lines(f, path: Path, cfg: M.Config, *, then: str = "", server=None) -> list[str]:
    """The verdict, the failure's own message, the trace and its replay command."""
    lines = [f"  verdict:    FAILED ({f.kind}{': ' + ', '.join(f.invariants) if f.invariants else ''}, "
             f"{len(f.steps) - 1} steps{then})"]
    lines += [f"    {line}" for line in f.message.splitlines()]
    return lines + [f"  trace:      {path}", f"  replay:     {replay_command(path, cfg, server)}"]

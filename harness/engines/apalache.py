"""Apalache through its command line, when a user has it; reported as skipped, never passed, when not.

Discovery: an explicit path (`--apalache`), then `$APALACHE_HOME/bin/apalache-mc`, then `apalache-mc` on
PATH. A run is accepted only on what Apalache itself printed and wrote, never on its exit code alone:

- `typecheck` is ok only with exit 0 and Apalache's `Type checker [OK]` line;
- `check` / `simulate` are ok only with exit 0, `The outcome is: NoError` and `Checker reports no error
  up to computation length N` with N the length asked for (exit 0 with any other outcome, e.g.
  `ExecutionsTooShort`, or without these lines, is an error);
- a violation (exit 12) is one only with `The outcome is: Error` (or `Deadlock`) and the
  `violation*.itf.json` files it wrote to the run directory, each an ITF document (a `states` list);
  each becomes a claimcheck trace (harness.traces.itf).

Apalache's output lines carry a log-level stamp after padding (`... I@12:00:00.000`); it is ignored.
Exit codes are Apalache's own: 0 no error, 12 a violation or deadlock, 75 an expression it cannot
evaluate, 120 a type error, 150 a parse error, 255 any other error; any code is an error unless the
output above confirms it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from spec import configs
from spec import model as M
from spec import names as N
from spec.source import SPEC, declarations, untyped_variables  # noqa: F401  (re-exported for the gate)

# Apalache reads SessionExecution.tla, the protocol alone (SPEC), not the MC module: see `_run`.


EXIT_CODES = {0: "ok", 12: "violation", 75: "cannot evaluate", 120: "type error", 150: "parse error",
              255: "system error"}


# what Apalache prints, one line each (its log-level stamp after padding is not part of the match)
OUTCOME = re.compile(r"^The outcome is: (\w+)", re.M)
NO_ERROR_UP_TO = re.compile(r"^Checker reports no error up to computation length (\d+)\b", re.M)
TYPECHECK_OK = re.compile(r"^Type checker \[OK\]", re.M)
VIOLATION_OUTCOMES = ("Error", "Deadlock")


class ApalacheUnavailable(RuntimeError):
    pass


@dataclass
class ApalacheResult:
    command: str  # typecheck | check | simulate
    verdict: str  # ok | violation | error
    exit_code: int
    meaning: str
    seconds: float
    argv: list[str]
    itf_files: list[Path] = field(default_factory=list)
    traces: list = field(default_factory=list)  # harness.traces.trace.Trace, one per violation file
    import_errors: list[str] = field(default_factory=list)  # violation files the twin cannot follow
    output: str = ""


def discover(explicit: str | None = None) -> Path:
    """The apalache-mc executable, or ApalacheUnavailable naming every place looked at."""
    looked = []
    if explicit:
        p = Path(explicit)
        if p.is_file() and os.access(p, os.X_OK):
            return p
        raise ApalacheUnavailable(f"--apalache {explicit}: not an executable file")
    home = os.environ.get("APALACHE_HOME")
    if home:
        p = Path(home) / "bin" / "apalache-mc"
        if p.is_file() and os.access(p, os.X_OK):
            return p
        looked.append(f"$APALACHE_HOME/bin/apalache-mc ({p})")
    found = shutil.which("apalache-mc")
    if found:
        return Path(found)
    looked.append("apalache-mc on PATH")
    raise ApalacheUnavailable("Apalache not found (looked at " + ", ".join(looked) + ")")


def _run(exe: Path, command: str, args: list[str], cfg: M.Config | None, run_dir: Path,
         timeout: float | None, length: int | None = None) -> ApalacheResult:
    work = run_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(SPEC, work / SPEC.name)
    extra = []
    if cfg is not None:
        # the protocol module's own configuration: constants only (the defect switches and TLC's
        # `Hook <- MCHook` overrides are the MC module's; Apalache replaces only operators without
        # parameters from a .cfg, and the hooks take parameters): see spec/README.md
        (work / "MC.cfg").write_text(configs.to_tlc_cfg(cfg, liveness=False, checks=False, protocol_only=True))
        extra = ["--config=MC.cfg"]
    out_dir = run_dir / "out"
    argv = [str(exe), command, *extra, *args, f"--out-dir={out_dir}", f"--run-dir={run_dir / 'run'}", SPEC.name]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=timeout)
    code = proc.returncode
    files = sorted((run_dir / "run").glob("violation*.itf.json")) if (run_dir / "run").is_dir() else []
    output = proc.stdout + proc.stderr
    verdict, meaning = judge(command, code, output, files, length)
    return ApalacheResult(command, verdict, code, meaning, time.perf_counter() - t0, argv[1:], files,
                          output=output)


def judge(command: str, code: int, output: str, itf_files: list[Path], length: int | None) -> tuple[str, str]:
    """(verdict, meaning) of one run, from Apalache's own lines and files: ok or violation only when its
    output says so; anything else is an error whose meaning says what was missing."""
    outcomes = OUTCOME.findall(output)
    outcome = outcomes[-1] if outcomes else None
    if code == 0 and command == "typecheck":
        if TYPECHECK_OK.search(output):
            return "ok", "ok"
        return "error", "exit 0 without Apalache's 'Type checker [OK]' line: not accepted"
    if code == 0:
        if outcome != "NoError":
            said = f"'The outcome is: {outcome}'" if outcome else "no 'The outcome is: ...' line"
            return "error", f"exit 0 with {said}, not NoError: not accepted"
        checked = [int(n) for n in NO_ERROR_UP_TO.findall(output)]
        if not checked and command == "simulate":  # its transcripts show the outcome line alone
            return "ok", "ok"
        if not checked:
            return "error", ("exit 0 without Apalache's 'Checker reports no error up to computation length N' "
                             "line: not accepted")
        if length is not None and checked[-1] != length:
            return "error", f"Apalache checked computation length {checked[-1]}, not the {length} asked for"
        return "ok", "ok"
    if code == 12:
        if outcome not in VIOLATION_OUTCOMES:
            said = f"'The outcome is: {outcome}'" if outcome else "no 'The outcome is: ...' line"
            return "error", f"exit 12 with {said}: not accepted as a violation"
        if not itf_files:
            return "error", f"outcome {outcome} but Apalache wrote no violation*.itf.json: not accepted"
        for p in itf_files:
            try:
                doc = json.loads(p.read_text())
            except (OSError, ValueError) as exc:
                return "error", f"{p.name} is not an ITF file ({exc})"
            if not isinstance(doc, dict) or not isinstance(doc.get("states"), list):
                return "error", f"{p.name} is not an ITF file (no 'states' list)"
        return "violation", "violation"
    return "error", EXIT_CODES.get(code, f"unknown exit code {code}")


def typecheck(exe: Path, run_dir: Path, timeout: float | None = None) -> ApalacheResult:
    return _run(exe, "typecheck", [], None, run_dir, timeout)


def check(exe: Path, cfg: M.Config, run_dir: Path, *, invariants=None, length: int = 10, cinit: str | None = None,
          max_error: int = 1, view: str | None = None, simulate: bool = False,
          timeout: float | None = None) -> ApalacheResult:
    """`check` (bounded model checking) or `simulate`, with claimcheck's invariants by default: the
    state invariants and the action invariants' step predicates (`FencedMutationStep`, ...). Apalache
    reads the protocol module, the correct protocol: a `cfg` with defects raises configs.ProtocolOnly
    (defects are checked by TLC, through the MC module's overrides, and by the twin)."""
    if cfg.defects:
        configs.to_tlc_cfg(cfg, protocol_only=True)  # raises ProtocolOnly, naming the defects
    invs = invariants or (list(N.STATE_INVARIANTS) + [f"{a}Step" for a in N.ACTION_INVARIANTS])
    args = [f"--inv={','.join(invs)}", f"--length={length}", f"--max-error={max_error}"]
    if cinit:
        args.append(f"--cinit={cinit}")
    if view:
        args.append(f"--view={view}")
    res = _run(exe, "simulate" if simulate else "check", args, cfg, run_dir, timeout, length)
    from harness.traces.trace import TraceError
    for p in res.itf_files:
        try:
            res.traces.append(itf_to_trace(p, cfg))
        except TraceError as exc:  # reported with the verdict, never dropped
            res.import_errors.append(str(exc))
    return res


def itf_to_trace(path: Path, cfg: M.Config, config_name: str | None = None):
    """One of Apalache's violation*.itf.json files as a claimcheck trace (steps inferred from the twin)."""
    from harness.traces import trace as T
    from harness.traces.itf import from_itf
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise T.TraceError(f"{path}: cannot read Apalache's trace ({exc})") from exc
    doc.setdefault("#meta", {})["claimcheck"] = {"config": T.config_to_trace(cfg, config_name).model_dump()}
    return from_itf(doc, title=f"apalache: {Path(path).name}", where=str(path))


def run_all(explicit: str | None, cfg: M.Config, *, length: int = 10, timeout: float | None = 600):
    """The gate's Apalache stage: typecheck, then check. Raises ApalacheUnavailable when absent."""
    exe = discover(explicit)
    with tempfile.TemporaryDirectory(prefix="claimcheck-apalache-") as tmp:
        tc = typecheck(exe, Path(tmp) / "typecheck", timeout)
        if tc.verdict != "ok":
            return [tc]
        return [tc, check(exe, cfg, Path(tmp) / "check", length=length, timeout=timeout)]

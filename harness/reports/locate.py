"""Where a failed check points: the line of step k in a trace file, the TLA+ line where an invariant
(or property) is defined, the TLA+ line where a defect is switched on. Paths are given relative to the
working directory when they lie inside it (as GitHub Actions wants them), else absolute."""

from __future__ import annotations

import json
import re
from pathlib import Path

from spec.source import MC_SPEC, MODULES, SPEC


def relpath(path) -> str:
    p = Path(path).resolve()
    try:
        return p.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def trace_step_line(path, k: int) -> int | None:
    """The line where step k (1-based) of the trace file's `steps` array begins; None when the file is
    not a JSON object with that many steps. Walks the top-level object with json's own decoder."""
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    dec = json.JSONDecoder()
    try:
        i = _skip_ws(text, 0)
        if text[i] != "{":
            return None
        i = _skip_ws(text, i + 1)
        while text[i] != "}":
            key, i = dec.raw_decode(text, i)
            i = _skip_ws(text, i)
            i = _skip_ws(text, i + 1)  # the colon
            if key == "steps" and text[i] == "[":
                i = _skip_ws(text, i + 1)
                n = 0
                while text[i] != "]":
                    n += 1
                    if n == k:
                        return _line_of(text, i)
                    _, i = dec.raw_decode(text, i)
                    i = _skip_ws(text, i)
                    if text[i] == ",":
                        i = _skip_ws(text, i + 1)
                return None
            _, i = dec.raw_decode(text, i)
            i = _skip_ws(text, i)
            if text[i] == ",":
                i = _skip_ws(text, i + 1)
    except (IndexError, ValueError):
        return None
    return None


def trace_steps(path) -> int:
    try:
        return len(json.loads(Path(path).read_text()).get("steps", []))
    except (OSError, ValueError, AttributeError):
        return 0


def tla_definition_line(name: str, spec: Path = SPEC) -> int | None:
    """The line of `name == ...` (or `name(args) == ...`) at the start of a line of the TLA+ spec."""
    pattern = re.compile(rf"^{re.escape(name)}\s*(\([^)]*\))?\s*==", re.MULTILINE)
    m = pattern.search(Path(spec).read_text())
    return _line_of(m.string, m.start()) if m else None


def tla_definition(name: str) -> tuple[str, int] | None:
    """(module file, line) of `name`'s definition in whichever spec module defines it (the refinement
    property lives beside the protocol, not in it)."""
    for module in MODULES:
        line = tla_definition_line(name, module)
        if line:
            return relpath(module), line
    return None


def tla_defect_line(defect: str, spec: Path = MC_SPEC) -> int | None:
    """The first line that switches the defect on, `Has("<defect>")`: in the MC module, where the defect
    switches are (each in the MC<Hook> that overrides one of the protocol's hooks)."""
    text = Path(spec).read_text()
    at = text.find(f'Has("{defect}")')
    return _line_of(text, at) if at >= 0 else None


def spec_file(spec: Path = SPEC) -> str:
    return relpath(spec)


STEP = re.compile(r"^step (\d+) ")


def failing_step(problems, steps_with_violations=()) -> int | None:
    """The step a replay failed at: the first problem naming a step, else the first step that violated."""
    for p in problems:
        m = STEP.match(p)
        if m:
            return int(m.group(1))
    return next(iter(steps_with_violations), None)

"""Reading files a user hands us (traces, ITF files, configuration files): JSON in, one-line typed errors out.

Every problem with user input is an `InputError` whose message is one line, `<file>: <field path>:
<reason>` (a JSON syntax error names `line L column C` instead of a field). `read_json` accepts any bytes:
a missing file, a folder, no permission, invalid UTF-8, broken JSON, NaN/Infinity, numbers out of range,
duplicate keys and nesting beyond MAX_DEPTH are all InputErrors, never a traceback. `validation_error`
turns pydantic's first error into the same one-line form.
"""

from __future__ import annotations

import json
import math
import re
import stat
from pathlib import Path
from typing import Any

MAX_BYTES = 64 * 2 ** 20  # larger files are refused before reading them
MAX_DEPTH = 64  # containers inside containers; traces need 7, ITF files 9
MAX_DIGITS = 100  # an integer literal longer than this is refused (Python refuses 4,300)
MAX_MESSAGE = 2000


class InputError(ValueError):
    """Bad user input. str() is one line: `<file>: <field path>: <reason>`."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


class TraceError(InputError):
    """A trace file that cannot be used: the message (one line) names the file and the field."""


def one_line(text: str) -> str:
    """`text` without line breaks or control characters, at most MAX_MESSAGE characters."""
    out = "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in str(text))
    out = out.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates from file names
    return out if len(out) <= MAX_MESSAGE else out[:MAX_MESSAGE - 1] + "…"


def short(value: Any, limit: int = 60) -> str:
    """repr(value), cut to `limit` characters: user values quoted in messages stay short."""
    try:
        r = repr(value)
    except ValueError:  # an integer beyond Python's 4,300 printable digits
        return f"<{type(value).__name__} too large to show>"
    return r if len(r) <= limit else r[:limit - 1] + "…"


_ELIDED = object()


def field_path(loc) -> str:
    """('steps', 3, 'action') -> 'steps[3].action'."""
    loc = tuple(loc)
    if len(loc) > 12:  # a deep path: its start and its end
        loc = loc[:6] + (_ELIDED,) + loc[-4:]
    out = ""
    for part in loc:
        if part is _ELIDED:
            out += "…"
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and re.fullmatch(r"[#A-Za-z_][#A-Za-z0-9_-]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{short(part)}]"
    return out or "(top)"


# ---------------------------------------------------------------- JSON

class _Bad:
    """A value the JSON decoder met that we refuse; reported with its field path after decoding."""

    def __init__(self, reason: str):
        self.reason = reason


class _DupDict(dict):
    duplicate: str = ""


def _pairs(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set = set()
        d = _DupDict(d)
        d.duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
    return d


def _int(text: str):
    if len(text.lstrip("-")) > MAX_DIGITS:
        return _Bad(f"integer with {len(text.lstrip('-')):,} digits (at most {MAX_DIGITS})")
    return int(text)


def _float(text: str):
    v = float(text)
    return v if math.isfinite(v) else _Bad(f"number {short(text, 30)} is out of range")


def _constant(name: str):
    return _Bad(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int, parse_float=_float,
                            parse_constant=_constant)


def _walk(doc) -> tuple[tuple, str] | None:
    """The first refused value in document order: (its location, the reason)."""
    stack = [((), doc, 0)]
    while stack:
        loc, v, depth = stack.pop()
        if isinstance(v, _Bad):
            return loc, v.reason
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return loc, "string holds a lone surrogate (not Unicode text)"
            continue
        if not isinstance(v, (dict, list)):
            continue
        if depth >= MAX_DEPTH:
            return loc, f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(v, _DupDict) and v.duplicate:
            return loc + (v.duplicate,), "duplicate key"
        items = list(v.items()) if isinstance(v, dict) else list(enumerate(v))
        for k, x in reversed(items):
            if isinstance(k, str):
                try:
                    k.encode("utf-8")
                except UnicodeEncodeError:
                    return loc, "key holds a lone surrogate (not Unicode text)"
            stack.append((loc + (k,), x, depth + 1))
    return None


def _deep_position(text: str) -> tuple[int, int]:
    """(line, column) where nesting first exceeds MAX_DEPTH, skipping strings."""
    depth, line, col, in_str, esc = 0, 1, 0, False, False
    for ch in text:
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line, col
        elif ch in "]}":
            depth -= 1
    return line, col


def read_text(path: str | Path, error=InputError) -> str:
    """The file's text (UTF-8), or `error` naming the file and what is wrong with it."""
    p = Path(path)
    try:
        st = p.stat()
        if stat.S_ISDIR(st.st_mode):
            raise error(f"{p}: is a folder, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{p}: not a regular file")
        size = st.st_size
        if size > MAX_BYTES:
            raise error(f"{p}: {size:,} bytes; at most {MAX_BYTES:,} are read")
        data = p.read_bytes()
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except PermissionError:
        raise error(f"{p}: cannot read: permission denied") from None
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL in the path
        if isinstance(exc, InputError):
            raise
        raise error(f"{p}: not a usable path ({exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{p}: byte {exc.start}: not UTF-8 text (0x{data[exc.start]:02x})") from None


def parse_json(text: str, name: str, error=InputError) -> Any:
    """`text` as JSON; `name` (the file) starts every error message."""
    if text.startswith("\ufeff"):
        raise error(f"{name}: line 1 column 1: not JSON: starts with a byte-order mark (save as UTF-8 without BOM)")
    try:
        doc = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise error(f"{name}: line {exc.lineno} column {exc.colno}: not JSON: {exc.msg}") from None
    except RecursionError:
        line, col = _deep_position(text)
        raise error(f"{name}: line {line} column {col}: nested deeper than {MAX_DEPTH} levels") from None
    bad = _walk(doc)
    if bad is not None:
        raise error(f"{name}: {field_path(bad[0])}: {bad[1]}")
    return doc


def read_json(path: str | Path, error=InputError) -> Any:
    """The file's JSON value: dicts, lists, str, int (at most MAX_DIGITS digits), finite float, bool, None;
    at most MAX_DEPTH levels deep; no duplicate keys. Anything else raises `error` (an InputError class)."""
    return parse_json(read_text(path, error), str(path), error)


# ---------------------------------------------------------------- pydantic

_NOUNS = {"defects": "defect", "defect": "defect", "faults": "fault", "assumptions_off": "assumption",
          "invariants": "invariant", "boundary": "boundary", "kind": "event kind", "phase": "phase"}
_REASONS = {
    "extra_forbidden": "unknown field",
}


def validation_error(exc, name: str, prefix: str = "", error=InputError) -> InputError:
    """The first error of a pydantic ValidationError as `<name>: <prefix><field path>: <reason>`."""
    err = exc.errors(include_url=False)[0]
    kind, msg = err.get("type", ""), err.get("msg", "invalid")
    if kind in _REASONS:
        reason = _REASONS[kind]
    elif kind == "literal_error":
        noun = next((_NOUNS.get(x, "value") for x in reversed(err.get("loc", ())) if isinstance(x, str)), "value")
        reason = f"unknown {noun} {short(err.get('input'))} (expected one of {err.get('ctx', {}).get('expected')})"
    elif kind == "value_error":
        reason = str(err.get("ctx", {}).get("error", msg))
    elif kind.endswith("_type") or kind.endswith("_parsing"):
        reason = f"{msg} (got {json_type(err.get('input'))})"
    else:
        reason = msg or "invalid"
        if "input" in err and kind not in ("missing", "too_long", "too_short"):
            reason += f" (got {short(err['input'])})"
    path = field_path(err.get("loc", ()))
    full = f"{prefix}{path}" if path != "(top)" or not prefix else prefix.rstrip(".")
    return error(f"{name}: {full}: {reason}")


def json_type(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return f"the integer {short(v, 30)}"
    if isinstance(v, float):
        return f"the number {short(v, 30)}"
    if isinstance(v, str):
        return f"the string {short(v, 40)}"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__

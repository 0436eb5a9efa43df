"""Shared by the bad-input tests (tests/cli/test_bad_*.py; issue 7 item 4): corpora, mutations, budgets
and the property every loader and the command line must keep.

Files are generated from scratch (bytes, text, JSON, deep nesting) or mutated from real ones: the
committed traces, their ITF exports (`claimcheck itf export`) and the configuration files in spec/config-files/,
with fields deleted, replaced, retyped, renamed to other registry names, nudged, and bytes flipped,
truncated, spliced. Every outcome must be success or the loader's typed error (TraceError, ConfigError),
whose message is one line starting with the file's name; at the command line exit 2 and one line on
stderr, never a traceback, never exit 3 (an internal error). Derandomized when CI is set.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st

import cikit
import harness.conformance.lockstep  # noqa: F401 - registers its Hypothesis profiles at import, not inside a test
from harness.traces import configfile as F
from harness.traces import itf
from harness.conformance import replay as R
from harness.traces import trace as T
from harness.cli import main
from harness.traces.inputfile import MAX_DEPTH, InputError, one_line
from spec import configs
from spec import model as M
from spec import names as N

CI = cikit.is_ci()
SCALE = float(os.environ.get("CLAIMCHECK_BAD_INPUT_SCALE", "1"))  # e.g. 20 for a nightly hunt


def budget(n: int) -> settings:
    extra = {"database": None} if CI else {}
    return settings(max_examples=max(1, int(n * SCALE)), derandomize=CI, print_blob=True, deadline=None,
                    suppress_health_check=list(HealthCheck), **extra)


ROOT = Path(__file__).resolve().parents[2]
TRACE_PATHS = R.committed_traces()
TRACE_DOCS = [json.loads(p.read_text()) for p in TRACE_PATHS]
ITF_DOCS = [itf.export(T.load(p)) for p in TRACE_PATHS]
CONFIG_PATHS = sorted((ROOT / "spec" / "config-files").glob("*.json"))
CONFIG_DOCS = [json.loads(p.read_text()) for p in CONFIG_PATHS] + [d["config"] for d in TRACE_DOCS]


def _text(doc) -> bytes:
    return json.dumps(doc, indent=1).encode()


TRACE_BYTES = [p.read_bytes() for p in TRACE_PATHS]
ITF_BYTES = [_text(d) for d in ITF_DOCS]
CONFIG_BYTES = [p.read_bytes() for p in CONFIG_PATHS]

# names a mutation may put anywhere: every registry name, the configurations' actors, a few near misses
NAMES = sorted({*N.ACTIONS, *N.BOUNDARIES, *N.DEFECTS, *N.INVARIANTS, *N.FAULT_KINDS, *N.LOG_KINDS,
                *N.PHASES, *N.INPUT_KINDS, *N.INPUT_STATES, *configs.ASSUMPTION_FIELDS, *configs.CONFIGS,
                "s1", "s2", "s3", "n1", "n2", "n9", "r1", "r2", "Renw", "Paused", "", "claimcheck-trace", "ITF",
                "#bigint", "#set", "#map", "#tup", "#meta", "idle", "running"})
ODD = [None, True, False, 0, 1, -1, 2, 3, 7, 2 ** 31, 2 ** 63, 10 ** 30, 1.5, -0.0, 1e300, "", "x" * 300,
       "\u00e9\u4e2d", "a\nb", "\x00", [], {}, [[]], {"": {}}, [1, "1"], {"#bigint": "1"}, {"#bigint": "x"},
       {"#bigint": 5}, {"#bigint": "9" * 200}, {"#set": []}, {"#set": 3}, {"#map": [[1]]}, {"#map": [["s1", 1]]},
       {"#tup": 5}, {"#unserializable": "f"}, {"tag": "Some", "value": 1}]
SCALARS = (st.none() | st.booleans() | st.integers(-3, 2 ** 70) | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=12) | st.sampled_from(NAMES))
JSON = st.recursive(SCALARS, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6) | st.sampled_from(NAMES), c,
                                                                                  max_size=3), max_leaves=8)
VALUES = st.sampled_from(ODD) | st.sampled_from(NAMES) | JSON


# ---------------------------------------------------------------- mutations

def _paths(doc):
    """Every location in a JSON document (root excluded), as key paths."""
    out, stack = [], [((), doc)]
    while stack:
        path, v = stack.pop()
        if path:
            out.append(path)
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        stack += [(path + (k,), x) for k, x in items]
    return out


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def _retype(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return [v]
    if isinstance(v, str):
        return len(v) if len(v) % 2 else {"value": v}
    if isinstance(v, list):
        return {str(k): x for k, x in enumerate(v)}
    if isinstance(v, dict):
        return list(v.values())
    return 0


@st.composite
def mutated(draw, seeds):
    """A seed document with one to four structural mutations."""
    doc = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        paths = _paths(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _get(doc, path[:-1]), path[-1]
        op = draw(st.sampled_from(["delete", "replace", "retype", "rename", "nudge", "duplicate", "key"]))
        v = parent[key]
        if op == "delete":
            del parent[key]
        elif op == "replace":
            parent[key] = copy.deepcopy(draw(VALUES))  # ODD's lists and dicts stay as they are
        elif op == "retype":
            parent[key] = _retype(v)
        elif op == "rename":  # another registry name: valid syntax, other meaning
            parent[key] = draw(st.sampled_from(NAMES))
        elif op == "nudge":  # an integer one off: a state no action reaches, an index out of range
            parent[key] = (v + draw(st.sampled_from([-1, 1]))) if isinstance(v, int) and not isinstance(v, bool) \
                else {"#bigint": str(int(v["#bigint"]) + 1)} if isinstance(v, dict) and "#bigint" in v \
                and isinstance(v["#bigint"], str) and v["#bigint"].lstrip("-").isdigit() else v
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(v))
        elif op == "key" and isinstance(parent, dict):
            parent[draw(st.sampled_from(NAMES) | st.text(max_size=8))] = copy.deepcopy(v)
    return doc


@st.composite
def mutated_bytes(draw, seeds):
    """A seed file with its bytes flipped, truncated, spliced with another, or cut and repeated."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["flip", "truncate", "splice", "insert", "delete", "repeat"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del data[at:]
        elif op == "splice":
            other = draw(st.sampled_from(seeds))
            data = data[:at] + other[draw(st.integers(0, len(other))):]
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8) | st.sampled_from(
                [b"[", b"{", b"]", b"}", b",", b'"', b"\\", b"NaN", b"1e999", b"\xff", b"\xed\xa0\x80", b'"\\ud800"']))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif op == "repeat":
            data[at:at] = data[at:at + draw(st.integers(1, 64))]
    return bytes(data)


def _deep(n: int, kind: str) -> bytes:
    return (("[" * n + "]" * n) if kind == "list" else ('{"a":' * n + "1" + "}" * n)).encode()


GARBAGE = (st.binary(max_size=300)
           | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))
           | JSON.map(lambda d: json.dumps(d).encode())
           | st.builds(_deep, st.integers(MAX_DEPTH - 2, 3000), st.sampled_from(["list", "dict"]))
           | st.sampled_from([b"", b" ", b"\xef\xbb\xbf{}", b"null", b"[]", b"{}", b"NaN", b"-Infinity", b"1e999",
                              b"9" * 5000, b'{"a": 1, "a": 2}', b'"\\ud800"', b"\x00", b"{" * 100000]))


# ---------------------------------------------------------------- the property

def assert_typed(exc: BaseException, path: Path, kind=InputError) -> None:
    """A loader's error: the typed one, one line, naming the file first, then a field or a line."""
    assert isinstance(exc, kind), f"{type(exc).__name__}: {exc}"
    msg = str(exc)
    assert "\n" not in msg and "\r" not in msg and len(msg) <= 2000, msg
    head = one_line(f"{path}: ")
    assert msg.startswith(head) and len(msg) > len(head), msg


def outcome(fn, path: Path, kind, what: str = ""):
    try:
        out = fn()
    except Exception as exc:  # noqa: BLE001 - the point: which exception, and its message
        assert_typed(exc, path, kind)
        reason = str(exc)[len(one_line(f"{path}: ")):]
        head = reason.split(":")[0]
        head = "JSON syntax" if head.startswith("line ") else "UTF-8" if head.startswith("byte ") else \
            head.split("[")[0].split(".")[0][:24]
        event(f"{what} refused: {head}")
        return None
    event(f"{what} accepted")
    return out


def write_file(work: Path, name: str, data) -> Path:
    p = work / name
    p.write_bytes(data if isinstance(data, bytes) else _text(data))
    return p


def check_trace_file(p: Path) -> T.Trace | None:
    tr = outcome(lambda: T.load(p), p, T.TraceError, "load")
    if tr is None:
        return None
    twin = outcome(lambda: T.replay_twin(tr, name=str(p)), p, T.TraceError, "twin")  # not enabled: typed
    doc = outcome(lambda: itf.export(tr, str(p)), p, T.TraceError, "export")
    assert (twin is None) == (doc is None)
    return tr


def check_itf_file(p: Path, out: Path, config) -> None:
    written = outcome(lambda: itf.import_file(p, out, config=config), p, T.TraceError, "import")
    if written is not None:  # what import writes is a trace the loaders and the twin accept
        T.replay_twin(T.load(written), name=str(written))


def check_config_file(p: Path) -> None:
    cfg = outcome(lambda: F.load(p), p, F.ConfigError, "config")
    if cfg is not None:  # a configuration that loads is usable and round-trips
        assert M.init(cfg) is not None and configs.to_tlc_cfg(cfg)
        again = p.with_suffix(".again.json")
        again.write_text(F.dumps(cfg))
        assert F.load(again) == cfg




# ---------------------------------------------------------------- the command line

def run_cli(capsys, argv):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        assert len(err.strip().splitlines()) >= 1
        for line in err.strip().splitlines():
            assert line.startswith(f"claimcheck {argv[0]}: "), line
    return code, out, err


def assert_one_line(err: str, sub: str, path: Path) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"claimcheck {sub}: {path}: "), err


def edit_trace(tmp_path, mutate, src="step-started-window.json"):
    raw = json.loads((ROOT / "traces" / src).read_text())
    mutate(raw)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw))
    return p

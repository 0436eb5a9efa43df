"""Bad input (issue 7 item 4): the trace, ITF and configuration loaders and the command line, fuzzed.

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

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import harness.conformance.lockstep  # noqa: F401 - registers its Hypothesis profiles at import, not inside a test
from harness import cli
from harness.traces import configfile as F
from harness.traces import itf
from harness.conformance import replay as R
from harness.traces import trace as T
from harness.cli import main
from harness.traces.inputfile import MAX_DEPTH, InputError, one_line
from spec import configs
from spec import model as M
from spec import names as N

CI = bool(os.environ.get("CI"))
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
NAMES = sorted({*N.ACTIONS, *N.BOUNDARIES, *N.DEFECTS, *N.INVARIANTS, *N.FAULT_KINDS, *N.EVENT_KINDS,
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


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("bad-input")


def _write(work: Path, name: str, data) -> Path:
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


# ---------------------------------------------------------------- loaders

@budget(1000)
@given(doc=mutated(TRACE_DOCS))
def test_trace_loader_on_mutated_traces(work, doc):
    check_trace_file(_write(work, "trace.json", doc))


@budget(400)
@given(data=mutated_bytes(TRACE_BYTES))
def test_trace_loader_on_mutated_bytes(work, data):
    check_trace_file(_write(work, "trace-bytes.json", data))


@budget(600)
@given(doc=mutated(ITF_DOCS), config=st.sampled_from([None, None, "ci", "sessions", "spec/config-files/ci.json"]))
def test_itf_import_on_mutated_itf_files(work, doc, config):
    check_itf_file(_write(work, "run.itf.json", doc), work / "imported.json",
                   str(ROOT / config) if config and config.endswith(".json") else config)


@budget(250)
@given(data=mutated_bytes(ITF_BYTES))
def test_itf_import_on_mutated_bytes(work, data):
    check_itf_file(_write(work, "run-bytes.itf.json", data), work / "imported-bytes.json", None)


@budget(600)
@given(doc=mutated(CONFIG_DOCS))
def test_config_loader_on_mutated_configurations(work, doc):
    check_config_file(_write(work, "config.json", doc))


@budget(250)
@given(data=mutated_bytes(CONFIG_BYTES))
def test_config_loader_on_mutated_bytes(work, data):
    check_config_file(_write(work, "config-bytes.json", data))


@budget(300)
@given(data=GARBAGE)
def test_every_loader_on_generated_garbage(work, data):
    p = _write(work, "garbage.json", data)
    assert check_trace_file(p) is None or data.strip().startswith(b"{")
    check_itf_file(p, work / "garbage-out.json", "ci")
    check_config_file(p)


@pytest.mark.parametrize("make", ["missing", "folder", "unreadable", "fifo", "nul", "newline"])
def test_file_system_refusals_are_typed(work, make, monkeypatch):
    p = work / f"fs-{make}.json"
    if make == "folder":
        p.mkdir(exist_ok=True)
    elif make == "unreadable":
        p.write_text("{}")
        p.chmod(0)
        if os.geteuid() == 0:  # root reads anything: make the read itself refuse
            monkeypatch.setattr(Path, "read_bytes", lambda self: (_ for _ in ()).throw(PermissionError(13, "no")))
    elif make == "fifo":
        if not p.exists():
            os.mkfifo(p)
    elif make == "nul":
        p = Path(str(p) + "\x00x")
    elif make == "newline":
        p = work / "fs-new\nline.json"
    for load, kind in [(T.load, T.TraceError), (F.load, F.ConfigError),
                       (lambda q: itf.import_file(q, work / "o.json"), T.TraceError)]:
        with pytest.raises(kind) as info:
            load(p)
        assert_typed(info.value, p, kind)
    if make == "unreadable":
        assert "permission denied" in str(info.value)


# ---------------------------------------------------------------- the command line, on files

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


@budget(150)
@given(doc=mutated(TRACE_DOCS))
def test_cli_replay_on_mutated_traces(work, capsys, doc):
    p = _write(work, "cli-trace.json", doc)
    code, out, err = run_cli(capsys, ["replay", p])
    event(f"replay exit {code}")
    if code == 2:
        assert_one_line(err, "replay", p)
    elif code == 1:  # a divergence, a step the twin cannot take, a violation: a replay result
        assert "verdict: FAIL" in out


@budget(100)
@given(data=mutated_bytes(TRACE_BYTES), fmt=st.sampled_from(["text", "mermaid"]))
def test_cli_explain_and_export_on_mutated_bytes(work, capsys, data, fmt):
    p = _write(work, "cli-explain.json", data)
    code, _, err = run_cli(capsys, ["explain", p, "--format", fmt])
    if code == 2:
        assert_one_line(err, "explain", p)
    code, _, err = run_cli(capsys, ["itf", "export", p, "--out", work / "cli-export.itf.json"])
    if code == 2:
        assert_one_line(err, "itf", p)


@budget(100)
@given(doc=mutated(ITF_DOCS))
def test_cli_itf_import_on_mutated_itf_files(work, capsys, doc):
    p = _write(work, "cli-run.itf.json", doc)
    code, _, err = run_cli(capsys, ["itf", "import", p, "--out", work / "cli-imported.json"])
    if code == 2:
        assert_one_line(err, "itf", p)


@budget(120)
@given(doc=mutated(CONFIG_DOCS) | GARBAGE, sub=st.sampled_from(["check", "fuzz", "bench", "itf"]))
def test_cli_config_files(work, capsys, doc, sub):
    p = _write(work, "cli-config.json", doc)
    try:
        F.load(p)
    except F.ConfigError:
        pass
    else:
        return  # a valid configuration would start a model checker or a campaign: the loader tests cover it
    run = _write(work, "cli-ok.itf.json", ITF_BYTES[0])
    argv = {"check": ["check", "--config", p], "fuzz": ["fuzz", "--config", p], "bench": ["bench", "--config", p],
            "itf": ["itf", "import", run, "--config", p, "--out", work / "never.json"]}[sub]
    code, _, err = run_cli(capsys, argv)
    assert code == 2
    assert_one_line(err, sub, p)


# ---------------------------------------------------------------- the command line, on arguments

BAD_ARGS = [
    (["check", "--config", "huge"], "invalid choice: 'huge'"),
    (["check", "--config", "nope.json"], "nope.json: no such file"),
    (["check", "--config", "/"], "/: is a folder"),
    (["check", "--engine", "spin"], "invalid choice"),
    (["check", "--defect", "x"], "unknown defect 'x'"),
    (["check", "--assume-off", "Gravity"], "unknown assumption 'Gravity'"),
    (["check", "--out", "README.md"], "README.md: exists and is not a folder"),
    (["check", "--liveness", "--no-liveness"], "not allowed with"),
    (["check", "--frobnicate"], "unrecognized arguments"),
    (["replay"], "required"),
    (["replay", "missing.json"], "missing.json: no such file"),
    (["replay", "traces/step-started-window.json", "--defect", "nope"], "unknown defect 'nope'"),
    (["explain"], "required"),
    (["explain", "traces/step-started-window.json", "--format", "pdf"], "invalid choice: 'pdf'"),
    (["explain", "/"], "/: is a folder"),
    (["itf", "sideways", "x", "--out", "y"], "invalid choice: 'sideways'"),
    (["itf", "export", "traces/step-started-window.json"], "required: --out"),
    (["itf", "export", "traces/step-started-window.json", "--out", "/"], "/: is a folder"),
    (["itf", "import", "x.itf.json", "--out", "y.json", "--config", "huge"], "invalid choice: 'huge'"),
    (["gate", "--junit", "/no/such/folder/report.xml"], "folder /no/such/folder does not exist"),
    (["gate", "--json", "/"], "/: is a folder"),
    (["gate", "--apalache", "/no/such/apalache-mc"], "no such file"),
    (["invariants", "NoSuchInvariant"], "unknown invariant 'NoSuchInvariant'"),
    (["invariants", "--format", "html"], "invalid choice: 'html'"),
    (["bench", "--workers", "0"], "expected an integer from 1 to 1024, got '0'"),
    (["bench", "--workers", "-3"], "got '-3'"),
    (["bench", "--workers", "two"], "got 'two'"),
    (["bench", "--config", "huge"], "invalid choice: 'huge'"),
    (["fuzz", "--profile", "nightly"], "invalid choice: 'nightly'"),
    (["fuzz", "--db", "mysql://u@h/d"], "unsupported database 'mysql'"),
    (["fuzz", "--db", ":::"], "not a database URL"),
    (["fuzz", "--out", "README.md"], "exists and is not a folder"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
    (["--no-such-flag"], "required"),
]


@pytest.mark.parametrize("argv, message", BAD_ARGS, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"claimcheck {argv[0]}: " if argv and argv[0] in SUBCOMMANDS else "claimcheck: "), err


SUBCOMMANDS = ["check", "replay", "explain", "itf", "gate", "invariants", "bench", "fuzz", "stress"]
VOCAB = ["check", "replay", "explain", "itf", "gate", "invariants", "bench", "fuzz", "stress", "export", "import",
         "--engine", "--config", "--defect", "--assume-off", "--liveness", "--no-liveness", "--out", "--format",
         "--junit", "--json", "--apalache", "--strict", "--workers", "--profile", "--db", "--nodes", "--seconds",
         "--sessions", "--lease", "--seed", "--executions", "--crash-every", "--keep", "--", "-", "-x",
         "python", "tlc", "ci", "sessions", "deep", "huge", "spec/config-files/ci.json", "traces/step-started-window.json",
         "/", "/no/such", "0", "-1", "2", "1e3", "nan", "inf", "", " ", "\x00", "\u00e9", "text", "mermaid",
         "markdown", "memory-before-publish", "TimelyDispatch", "TypeOK", "sqlite://", "mysql://x", "::",
         "README.md", "a" * 300]


FLAG_VALUES = {  # what each option is likely to meet: valid, near miss, nonsense
    "--config": ["ci", "deep", "huge", "spec/config-files/ci.json", "/", "x.json", ""],
    "--defect": ["memory-before-publish", "memory", ""], "--assume-off": ["TimelyDispatch", "Gravity"],
    "--engine": ["python", "tlc", "spin"], "--format": ["text", "mermaid", "markdown", "pdf"],
    "--workers": ["0", "1", "-1", "1025", "x", "1e3"], "--profile": ["ci", "deep", "nightly"],
    "--db": ["sqlite://", "sqlite:///x.db", "postgresql://u@h/d", "mysql://x", "::", "", "sqlite://:x"],
    "--out": ["README.md", "/", "/no/such/x", "traces/found"], "--junit": ["/", "/no/such/x.xml", "r.xml"],
    "--json": ["/", "r.json"], "--apalache": ["/no/such", "README.md"], "--nodes": ["0", "2", "x"],
    "--seconds": ["0", "nan", "1"], "--lease": ["0", "inf", "0.5"],
}
ARGVS = (st.lists(st.sampled_from(VOCAB) | st.text(max_size=6), max_size=7)
         | st.builds(lambda sub, pairs, rest: sub.split() + [x for pair in pairs for x in pair] + rest,
                     st.sampled_from(SUBCOMMANDS + ["itf export", "itf import"]),
                     st.lists(st.sampled_from(sorted(FLAG_VALUES)).flatmap(
                         lambda f: st.tuples(st.just(f), st.sampled_from(FLAG_VALUES[f]) | st.text(max_size=4))),
                         max_size=4),
                     st.lists(st.sampled_from(VOCAB), max_size=2)))


@budget(400)
@given(argv=ARGVS)
def test_any_argument_list_parses_or_exits_2(capsys, monkeypatch, argv):
    """The parsing layer on arbitrary argument lists: the commands themselves are stubbed (a valid list
    would start a model checker or a campaign); only exit 0 (parsed) or 2 (one line) may come out."""
    monkeypatch.chdir(ROOT)
    for name in dir(cli):
        if name.startswith("cmd_"):
            monkeypatch.setattr(cli, name, lambda args: 0)
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:  # --help / -h style exits only
        code = exc.code
    err = capsys.readouterr().err
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("claimcheck"), err


def test_an_internal_error_is_exit_3_with_its_traceback(capsys, monkeypatch):
    def broken(args):
        return {}["bug"]
    monkeypatch.setattr(cli, "cmd_invariants", broken)
    assert main(["invariants"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("claimcheck invariants: internal error (a bug in claimcheck, not in your input): KeyError")
    assert "Traceback" in err


def test_a_file_system_refusal_while_writing_is_exit_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main(["itf", "export", str(ROOT / "traces" / "step-started-window.json"), "--out",
                 str(blocker / "sub" / "x.itf.json")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"claimcheck itf: {blocker}")


# ---------------------------------------------------------------- the semantic layer

def _edit(tmp_path, mutate, src="step-started-window.json"):
    raw = json.loads((ROOT / "traces" / src).read_text())
    mutate(raw)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw))
    return p


@pytest.mark.parametrize("mutate, field", [
    (lambda raw: raw["meta"].update(invariants=["Nope"]), "meta.invariants[0]: unknown invariant 'Nope'"),
    (lambda raw: raw["meta"].update(defect="nope"), "meta.defect: unknown defect 'nope'"),
    (lambda raw: raw["config"].update(base="no such"), "config.base: 'no such' is not a name"),
    (lambda raw: raw["config"].update(faults=["flood"]), "config.faults[0]: unknown fault 'flood'"),
    (lambda raw: raw["config"].update(assumptions_off=["Gravity"]), "config.assumptions_off[0]: unknown assumption"),
    (lambda raw: raw["config"].update(prompts=10 ** 9), "config.prompts: Input should be less than or equal to 1000"),
    (lambda raw: raw["config"].update(sessions=["s1", "s1"]), "config.sessions: 's1' is listed twice"),
    (lambda raw: raw["config"].update(recoverers=["n1"]), "config.recoverers: 'n1' is also a node"),
    (lambda raw: raw["steps"][0].update(action="Renw"), "steps[0].action: unknown action 'Renw' (expected one of"),
    (lambda raw: raw["steps"][1].update(boundary="renew.comitted"), "steps[1].boundary: unknown boundary"),
    (lambda raw: raw["steps"][1].update(params={"n": "n9"}), "steps[1].params.n: 'n9' is not in the configuration"),
    (lambda raw: raw["steps"][0]["params"]["i"].update(sess="s2"), "steps[0].params.i.sess: 's2' is not a configured"),
    (lambda raw: raw["steps"][0]["params"]["i"].update(src="1"), "steps[0].params.i.src: expected an integer"),
    (lambda raw: raw["steps"][0]["params"]["i"].update(kind="steer"), "steps[0].params.i.kind: unknown input kind"),
    (lambda raw: raw["steps"][0].update(state={"claim": []}), "steps[0].state.claim: expected a claim record per Session"),
    (lambda raw: raw.update(loop=True), "loop: Input should be a valid integer (got a boolean)"),
])
def test_a_trace_naming_what_does_not_exist_is_exit_2_naming_the_field(tmp_path, capsys, mutate, field):
    p = _edit(tmp_path, mutate)
    assert main(["replay", str(p)]) == 2
    err = capsys.readouterr().err
    assert_one_line(err, "replay", p)
    assert field in err, err


def test_a_step_the_twin_cannot_take_is_bad_input_not_a_crash(tmp_path, capsys):
    p = _edit(tmp_path, lambda raw: raw["steps"].insert(1, {"action": "RecoveryConvert", "params": {"r": "r1"}}))
    assert main(["replay", str(p)]) == 2
    err = capsys.readouterr().err
    assert_one_line(err, "replay", p)
    assert ("steps[1]: RecoveryConvert(r1) is not enabled in the twin: recovery worker r1 is not converting "
            "(it is idle); enabled here: ") in err


@pytest.mark.parametrize("data, reason", [
    (b"", "line 1 column 1: not JSON"),
    (b"\xff\xfe{}", "byte 0: not UTF-8"),
    (b'{"format": "claimcheck-trace",\n "version": 1,\n "meta" {}}', "line 3 column 9: not JSON: Expecting ':' delimiter"),
    (b"[" * 100000, f"line 1 column {MAX_DEPTH + 1}: nested deeper than {MAX_DEPTH} levels"),
    (b'{"a": NaN}', "a: NaN is not a JSON value"),
    (b'{"a": [1e999]}', "a[0]: number '1e999' is out of range"),
    (b'{"a": ' + b"1" * 5000 + b"}", "a: integer with 5,000 digits"),
    (b'{"format": "claimcheck-trace", "format": "x"}', "format: duplicate key"),
    (b'{"t": "\\udcff"}', "t: string holds a lone surrogate"),
])
def test_json_level_problems_name_the_file_and_where(tmp_path, capsys, data, reason):
    p = tmp_path / "x.json"
    p.write_bytes(data)
    for argv, sub in [(["replay", p], "replay"), (["explain", p], "explain"), (["check", "--config", p], "check"),
                      (["itf", "import", p, "--out", tmp_path / "o.json"], "itf")]:
        assert main([str(a) for a in argv]) == 2
        err = capsys.readouterr().err
        assert_one_line(err, sub, p)
        assert f"{p}: {reason}" in err, err


# ---------------------------------------------------------------- configuration files

@pytest.mark.parametrize("name", sorted(configs.CONFIGS))
def test_configuration_files_round_trip_to_the_registered_configurations(name):
    path = ROOT / "spec" / "config-files" / f"{name}.json"
    assert F.load(path) == configs.CONFIGS[name]
    assert path.read_text() == F.dumps(configs.CONFIGS[name])  # the files are current
    on = F.resolve(str(path), ["memory-before-publish"], ["TimelyDispatch"])
    assert on.cfg == configs.get(name, ["memory-before-publish"], ["TimelyDispatch"]) and on.label == name


def test_a_trace_config_block_is_a_configuration_file(tmp_path):
    doc = json.loads((ROOT / "traces" / "cross-session-recovery-collision.json").read_text())
    p = tmp_path / "block.json"
    p.write_text(json.dumps(doc["config"]))
    assert F.load(p) == T.trace_to_config(T.TraceConfig.model_validate(doc["config"]))


def test_config_files_are_wired_through_check_fuzz_bench_and_itf_import(tmp_path, capsys, monkeypatch):
    from harness.reports import bench
    from harness.engines import check
    from harness.conformance import fuzz
    path = str(ROOT / "spec" / "config-files" / "sessions.json")
    seen = {}

    class Stop(Exception):
        pass

    def capture(key):
        def fn(*args, **kwargs):
            seen[key] = kwargs.get("cfg", args[0])
            raise Stop
        return fn
    monkeypatch.setattr(check, "run_python", capture("check"))
    monkeypatch.setattr(fuzz.lockstep, "run", capture("fuzz"))
    monkeypatch.setattr(bench, "bench_explorer_vs_tlc", capture("bench"))
    for argv in (["check", "--config", path, "--defect", "memory-before-publish"], ["fuzz", "--config", path],
                 ["bench", "--config", path]):
        args = cli.build_parser().parse_args(argv)
        with pytest.raises(Stop):
            args.func(args)
    assert seen["check"] == configs.get("sessions", ["memory-before-publish"])
    assert seen["fuzz"] == seen["bench"] == configs.CONFIGS["sessions"]
    src = ROOT / "traces" / "cross-session-recovery-collision.json"
    assert main(["itf", "export", str(src), "--out", str(tmp_path / "c.itf.json")]) == 0
    assert main(["itf", "import", str(tmp_path / "c.itf.json"), "--config", path, "--out", str(tmp_path / "a.json")]) == 0
    assert main(["itf", "import", str(tmp_path / "c.itf.json"), "--config", "sessions", "--out",
                 str(tmp_path / "b.json")]) == 0
    a, b = T.load(tmp_path / "a.json"), T.load(tmp_path / "b.json")
    assert [s.model_dump() for s in a.steps] == [s.model_dump() for s in b.steps]
    assert T.trace_to_config(a.config) == T.trace_to_config(b.config) == configs.CONFIGS["sessions"]

"""Bad command-line arguments: a table of mistakes, each exit 2 with one line; arbitrary argument lists
(commands stubbed) that parse or exit 2; and an internal error, exit 3 with its traceback."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from badkit import ROOT, budget
from harness import cli
from harness.cli import main

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
    (["check", "--distributed"], "--distributed is TLC's distributed mode, for --engine tlc only"),
    (["check", "--engine", "tlc", "--distributed", "--liveness"], "--distributed checks safety only"),
    (["replay", "--sut", "/no/such/driver"], "/no/such/driver`: cannot run it"),  # no TRACE: the committed ones
    (["gate", "--stage", "tlc2"], "unknown gate stage 'tlc2'"),
    (["replay", "missing.json"], "missing.json: no such file"),
    (["replay", "traces/step-started-window.json", "--defect", "nope"], "unknown defect 'nope'"),
    (["replay", "traces/step-started-window.json", "--sut", ""], "claimcheck replay: --sut: an empty command"),
    (["replay", "traces/step-started-window.json", "--sut", "'unclosed"], "--sut: cannot split the command"),
    (["replay", "traces/step-started-window.json", "--sut", "/no/such/driver"], "/no/such/driver`: cannot run it"),
    (["replay", "traces/step-started-window.json", "--sut", "a\x00b"], "cannot run it"),
    (["replay", "traces/step-started-window.json", "--sut-timeout", "0"], "expected a number of seconds"),
    (["replay", "traces/step-started-window.json", "--sut-timeout", "nan"], "expected a number of seconds"),
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
    (["bench", "--procs", "0"], "expected an integer from 1 to 64, got '0'"),
    (["bench", "--symmetry", "recoverers"], "invalid choice: 'recoverers'"),
    (["fuzz", "--profile", "nightly"], "invalid choice: 'nightly'"),
    (["fuzz", "--db", "mysql://u@h/d"], "unsupported database 'mysql'"),
    (["fuzz", "--db", ":::"], "not a database URL"),
    (["fuzz", "--out", "README.md"], "exists and is not a folder"),
    (["conform", "--shard", "0/3"], "K must be from 1 to N (3), got '0/3'"),
    (["conform", "--shard", "4/3"], "K must be from 1 to N (3), got '4/3'"),
    (["conform", "--shard", "1/0"], "N must be from 1 to 256, got '1/0'"),
    (["conform", "--shard", "1/3", "--mutant", "renew-after-expiry"], "--shard splits the walk of the implementation"),
    (["replay", "--shard", "two"], "expected K/N, shard K of N (e.g. 2/3), got 'two'"),
    (["replay", "--shard=-1/3"], "expected K/N"),
    (["replay", "--shard", "1/3", "--json", "/"], "/: is a folder"),
    (["check", "--shard", "1/2"], "--shard splits a profile's configurations: give --profile ci or deep"),
    (["check", "--profile", "deep", "--shard", "2/1"], "K must be from 1 to N (1), got '2/1'"),
    (["check", "--profile", "nightly"], "invalid choice: 'nightly'"),
    (["check", "--profile", "ci", "--defect", "renew-after-expiry"], "--profile checks the profile's configurations"),
    (["merge"], "required: SHARD.json"),
    (["merge", "nope.json"], "nope.json: no such file"),
    (["merge", "README.md"], "README.md: not JSON"),
    (["merge", "traces/step-started-window.json"], "not a claimcheck shard file"),
    (["frobnicate"], "invalid choice"),
    (["--no-such-flag"], "required"),
]


@pytest.mark.parametrize("argv, message", BAD_ARGS, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"claimcheck {argv[0]}: " if argv and argv[0] in SUBCOMMANDS else "claimcheck: "), err


SUBCOMMANDS = ["check", "replay", "explain", "itf", "gate", "invariants", "bench", "fuzz", "conform", "stress", "merge"]


VOCAB = ["check", "replay", "explain", "itf", "gate", "invariants", "bench", "fuzz", "conform", "stress", "export", "import",
         "--engine", "--config", "--defect", "--assume-off", "--liveness", "--no-liveness", "--out", "--format",
         "--junit", "--json", "--apalache", "--strict", "--workers", "--profile", "--db", "--nodes", "--seconds",
         "--sessions", "--lease", "--seed", "--sut", "--sut-timeout", "--executions", "--crash-every", "--keep", "--shard",
         "--no-reuse", "--", "-", "-x",
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
    "--sut": ["", "/no/such", "'x", "python -m binding.driver"], "--sut-timeout": ["0", "nan", "inf", "0.5", "x"],
    "--shard": ["1/3", "3/3", "0/3", "4/3", "1/0", "x", "", "1/257"],
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
    import harness.cli.driverkit
    import harness.cli.recorded
    import harness.cli.sharded
    for module in (cli, harness.cli.recorded, harness.cli.sharded, harness.cli.driverkit):
        for name in dir(module):
            if name.startswith("cmd_"):
                monkeypatch.setattr(module, name, lambda args: 0)
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:  # --help / -h style exits only
        code = exc.code
    err = capsys.readouterr().err
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err
    if code == 2 and not argv:  # bare `claimcheck`: the usage (tests/cli/test_cli_surface.py)
        assert err.startswith("usage: claimcheck"), err
    elif code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("claimcheck"), err


def test_an_internal_error_is_exit_3_with_its_traceback(capsys, monkeypatch):
    def broken(args):
        return {}["bug"]
    monkeypatch.setattr(cli, "cmd_invariants", broken)
    assert main(["invariants"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("claimcheck invariants: internal error (a bug in claimcheck, not in your input): KeyError")
    assert "Traceback" in err

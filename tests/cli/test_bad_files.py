"""Files that no loader can read: generated garbage through every loader, file-system objects (missing, a
folder, unreadable, a FIFO, odd names), JSON-level problems at every command that reads a file, and a
refusal while writing an output file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given

from badkit import (GARBAGE, ROOT, assert_one_line, assert_typed, budget, check_config_file, check_itf_file,
                    check_trace_file, write_file)
from harness.cli import main
from harness.traces import configfile as F
from harness.traces import itf
from harness.traces import trace as T
from harness.traces.inputfile import MAX_DEPTH

@budget(300)
@given(data=GARBAGE)
def test_every_loader_on_generated_garbage(work, data):
    p = write_file(work, "garbage.json", data)
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


def test_a_file_system_refusal_while_writing_is_exit_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main(["itf", "export", str(ROOT / "traces" / "step-started-window.json"), "--out",
                 str(blocker / "sub" / "x.itf.json")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"claimcheck itf: {blocker}")

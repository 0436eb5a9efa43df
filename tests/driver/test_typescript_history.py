"""The TypeScript example's commit history (examples/typescript/src/history.js, docs/history.md "The
TypeScript example's log"): every committed trace replayed through `examples/typescript/driver --history
DIR` leaves one history per world, and `claimcheck validate` explains every one (exit 0); one edited row
makes it fail (exit 1) naming the line and the field, so the check can fail.

Nothing here is skipped for Node: without node or examples/typescript/node_modules these tests fail and say
so, as tests/driver/test_typescript.py does.
"""

import json

import pytest

from harness.cli import main
from harness.conformance import replay as R
from harness.traces import trace as T
from test_typescript import DRIVER, _installed

TRACES = [str(p) for p in R.committed_traces()]


@pytest.fixture(scope="module")
def histories(tmp_path_factory):
    """Every committed trace replayed through the driver with `--history`: the world files it wrote."""
    _installed()
    out = tmp_path_factory.mktemp("ts-history")
    assert main(["replay", "--sut", f"{DRIVER} --history {out}", *TRACES]) == 0
    return sorted(out.glob("world-*.jsonl"))


def test_every_world_of_the_committed_traces_validates(histories, capsys):
    assert len(histories) >= len(TRACES)
    capsys.readouterr()
    lines = 0
    for path in histories:
        assert main(["validate", str(path)]) == 0, (path, capsys.readouterr().out)
        text = path.read_text().splitlines()
        assert json.loads(text[0])["source"] == "claimcheck TypeScript example"
        lines += len(text) - 1
    assert lines > 0


def test_an_edited_row_fails_naming_the_line_and_field(histories, tmp_path, capsys):
    path = next(p for p in histories if any('"phase":"running"' in ln for ln in p.read_text().splitlines()[1:]))
    text = path.read_text().splitlines()
    k = next(k for k, ln in enumerate(text) if k > 0 and '"phase":"running"' in ln)
    text[k] = text[k].replace('"phase":"running"', '"phase":"cancelling"', 1)
    bad = tmp_path / "edited.jsonl"
    bad.write_text("\n".join(text) + "\n")
    capsys.readouterr()
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"line {k + 1}" in out and "phase" in out, out


def test_a_defect_in_the_server_makes_some_history_fail(tmp_path, capsys):
    """Defect traces replayed with the defect switched on in the server only, in the traces' order, until one's
    history fails to validate: the histories are checked against the correct twin (the header's `defects`
    emptied). (Every defect trace, 50 s, replayed only to print which fail.)"""
    _installed()
    failed = []
    for k, trace in enumerate(TRACES):
        if failed:
            break
        defect = T.load(trace).meta.defect
        if not defect:
            continue
        out = tmp_path / str(k)
        main(["replay", "--sut", f"{DRIVER} --history {out}", "--defect", defect, trace])
        for path in sorted(out.glob("world-*.jsonl")):
            text = path.read_text().splitlines()
            header = json.loads(text[0])
            assert header["config"]["defects"] == [defect]
            header["config"]["defects"] = []
            path.write_text("\n".join([json.dumps(header), *text[1:]]) + "\n")
            capsys.readouterr()
            if main(["validate", str(path)]) == 1:
                failed.append(defect)
    assert failed, "no defect made the server's history fail validation"

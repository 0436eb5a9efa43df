"""`claimcheck replay --sut CMD`: the bundled implementation behind its driver (binding/driver.py), in process
and as a subprocess (`python -m binding.driver`), passes every committed trace and fails every defect trace
under its defect exactly as the in-process replay does (the same invariants, the same problems)."""

import os
import shlex
import sys

import pytest

from harness.cli import main
from harness.conformance import replay as R
from harness.driver.client import Connection, Sut
from harness.driver.transport import InProcess
from harness.traces import trace as T
from binding.driver import Driver
from serverkit import BUNDLED

ROOT = R.TRACES.parent
DRIVER = shlex.join([sys.executable, "-m", "binding.driver"])
TRACES = R.committed_traces()
DEFECT_TRACES = [p for p in TRACES if T.load(p).meta.defect]


@pytest.fixture(scope="module", autouse=True)
def importable():
    """`python -m binding.driver` from a fresh clone: the repository on the driver's import path."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([old] if old else []))
    yield
    if old is None:
        del os.environ["PYTHONPATH"]
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module", params=["subprocess", "in-process"])
def sut(request):
    conn = Connection.spawn(DRIVER) if request.param == "subprocess" else Connection(InProcess(Driver()))
    yield Sut("in process", opener=lambda: conn)
    conn.close()


def test_every_committed_trace_passes_through_the_driver(sut):
    results = [R.replay_file(p, server=sut) for p in TRACES]
    assert len(results) >= 18 and all(r.ok for r in results), [r.problems for r in results if not r.ok]
    assert [r.consumed for r in results] == [len(T.load(p).steps) for p in TRACES]


@pytest.mark.parametrize("path", DEFECT_TRACES, ids=lambda p: p.stem)
def test_a_defect_trace_fails_under_its_defect_as_in_process(sut, path):
    defect = [T.load(path).meta.defect]
    mine, theirs = R.replay_file(path, defect, server=BUNDLED), R.replay_file(path, defect, server=sut)
    assert not theirs.ok and theirs.violated == mine.violated and theirs.problems == mine.problems


def test_the_cli_replays_the_traces_folder_through_the_subprocess_driver(capsys):
    assert main(["replay", str(R.TRACES), "--sut", DRIVER]) == 0
    out = capsys.readouterr().out
    assert out.count("verdict: PASS") == len(TRACES) and f"replay: {len(TRACES)} passed, 0 failed" in out
    assert out.startswith("replay against claimcheck bundled implementation (impl/, sqlite in memory) "
                          f"(driver `{DRIVER}`, claimcheck-driver v1, save and restore)\n")


def test_the_cli_passes_defect_switches_to_the_driver(capsys):
    path = R.TRACES / "step-failed-duplicate-interrupt.json"
    assert main(["replay", str(path), "--sut", DRIVER, "--defect", "step-failed-duplicate-interrupt"]) == 1
    assert "verdict: FAIL, violates AtMostOneTerminal" in capsys.readouterr().out


def observe_and_restore(conn: Connection) -> None:
    """Each boundary is observed once; restore puts the world back to the point saved (shared with the
    TypeScript example's test, tests/driver/test_typescript.py)."""
    tr = T.load(R.TRACES / "step-started-window.json")
    conn.request("start", config=tr.config.model_dump(mode="json", exclude_none=True), defects=[])
    first = conn.request("observe")
    conn.request("save", point="init")
    conn.request("step", action="Acquire", params=tr.steps[0].params)
    assert conn.request("observe").boundaries == ["acquire.committed"]
    assert conn.request("observe").boundaries == []
    conn.request("step", action="Renew", params={"n": "n1"})
    conn.request("save", point="renewed")
    renewed = conn.request("observe").state
    conn.request("step", action="Dispatch", params={"n": "n1"})
    conn.request("restore", point="renewed")
    assert conn.request("observe").state == renewed
    assert conn.request("step", action="Dispatch", params={"n": "n1"}).took == "Dispatch"
    conn.request("restore", point="init")
    assert conn.request("observe").state == first.state
    again = conn.request("step", action="Acquire", params=tr.steps[0].params)
    assert again.took == "Acquire" and conn.request("observe").boundaries == ["acquire.committed"]
    assert conn.request("move", actor="finalizer", who="n1").took is None
    assert conn.request("attempt", action="Acquire", params=tr.steps[0].params).answer == "refused"
    with pytest.raises(Exception, match="no saved point"):
        conn.request("restore", point="nowhere")


def test_observe_reports_each_boundary_once_and_restore_puts_the_world_back():
    conn = Connection(InProcess(Driver()))
    try:
        observe_and_restore(conn)
    finally:
        conn.close()


def test_a_failure_inside_the_server_fails_the_step_naming_the_request():
    class Breaking(Driver):
        def _step(self, req):
            if req.action == "Dispatch":
                raise RuntimeError("the provider is gone")
            return super()._step(req)

    conn = Connection(InProcess(Breaking()))
    res = R.replay_file(R.TRACES / "step-started-window.json", server=Sut("in process", opener=lambda: conn))
    assert not res.ok and res.consumed == 3
    assert res.problems[0].startswith("step 3 Dispatch(n1): the implementation raised DriverFailed: driver `in process`: "
                                      "request ")
    assert res.problems[0].endswith('(step Dispatch {"n": "n1"}): failed: the implementation raised RuntimeError: '
                                    "the provider is gone")


def test_a_server_that_takes_another_action_diverges():
    class Elsewhere(Driver):
        def _step(self, req):
            reply = super()._step(req)
            return {"took": None, "detail": "no runner there"} if req.action == "Renew" else reply

    conn = Connection(InProcess(Elsewhere()))
    res = R.replay_file(R.TRACES / "step-started-window.json", server=Sut("in process", opener=lambda: conn))
    assert res.problems[0] == "step 2 Renew(n1): divergence: the implementation did not take Renew('n1',): no runner there"


def test_a_trace_with_a_mutant_switches_it_on_in_the_server_only(sut, tmp_path):
    """`mutant`: the defect in the code, not in the twin; `start`'s defects carry it to the driver."""
    import json
    raw = json.loads((R.TRACES / "step-failed-duplicate-interrupt.json").read_text())
    raw["mutant"] = ["step-failed-duplicate-interrupt"]
    path = tmp_path / "mutant.json"
    path.write_text(json.dumps(raw))
    mine, theirs = R.replay_file(path, server=BUNDLED), R.replay_file(path, server=sut)
    assert not mine.ok and theirs.problems == mine.problems

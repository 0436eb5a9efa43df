"""The client's failures are clear and name the request: a driver that dies, hangs, answers garbage,
answers another request, refuses, or answers a reply of the wrong shape (tests/driver/fakedriver.py);
a command that cannot start or does not answer hello is a start failure (`--sut` exit 2)."""

import shlex
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.driver.client import Connection, DriverError, DriverFailed, DriverStartError
from spec import configs

FAKE = Path(__file__).with_name("fakedriver.py")
CFG = configs.get("ci")


def fake(mode: str) -> str:
    return shlex.join([sys.executable, str(FAKE), mode])


def step(conn):
    return conn.request("step", action="Renew", params={"n": "n1"})


def test_a_driver_that_dies_names_the_request_its_exit_code_and_stderr():
    conn = Connection.spawn(fake("die"))
    with pytest.raises(DriverError, match=r"request 1 \(step Renew \{\"n\": \"n1\"\}\): the driver exited with code "
                                          r"3 without replying; its stderr ends: fake driver: giving up"):
        step(conn)
    with pytest.raises(DriverError, match=r"request 2 \(observe\): not sent: the driver exited"):
        conn.request("observe")
    conn.close()


def test_a_driver_that_never_answers_times_out_naming_the_request():
    conn = Connection.spawn(fake("hang"), timeout=0.5)
    began = time.monotonic()
    with pytest.raises(DriverError, match=r"request 1 \(move runner n1\): no reply within 0.5 s"):
        conn.request("move", actor="runner", who="n1")
    assert time.monotonic() - began < 5
    assert conn.transport.proc.poll() is not None  # stopped, not left running
    conn.close()


@pytest.mark.parametrize("mode, message", [
    ("garbage", r"request 1 \(step Renew .*\): a reply that is not JSON: 'this is not json'"),
    ("wrong-id", r"request 1 \(step Renew .*\): a reply with id 8, not id 1"),
    ("malformed", r"request 1 \(step Renew .*\): a malformed reply: reply: "),
])
def test_a_reply_that_is_not_the_requests_fails_naming_it(mode, message):
    conn = Connection.spawn(fake(mode))
    with pytest.raises(DriverError, match=message):
        step(conn)
    conn.close()


def test_ok_false_is_a_failure_with_the_drivers_message():
    conn = Connection.spawn(fake("refuse"))
    with pytest.raises(DriverFailed, match=r"driver `.*fakedriver.py refuse`: request 1 \(observe\): failed: no world here"):
        conn.request("observe")
    conn.close()


@pytest.mark.parametrize("command, message", [
    ("/nonexistent/driver", "cannot run it"),
    (shlex.join([sys.executable, "-c", "pass"]), r"request 0 \(hello\): the driver exited with code 0 without replying"),
])
def test_a_command_that_is_no_driver_fails_to_start(command, message):
    with pytest.raises(DriverStartError, match=message):
        Connection.spawn(command)


@pytest.mark.parametrize("sut, message", [
    ("", "claimcheck replay: --sut: an empty command"),
    ("/nonexistent/driver", "claimcheck replay: --sut: driver `/nonexistent/driver`: cannot run it"),
])
def test_replay_with_a_sut_that_cannot_start_exits_2_in_one_line(capsys, sut, message):
    from harness.conformance.replay import TRACES
    assert main(["replay", str(TRACES / "step-started-window.json"), "--sut", sut]) == 2
    err = capsys.readouterr().err
    assert err.strip() == message or err.startswith(message), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_replay_with_a_driver_that_dies_fails_the_trace_naming_the_request(capsys):
    from harness.conformance.replay import TRACES
    assert main(["replay", str(TRACES / "step-started-window.json"), "--sut", fake("die")]) == 1
    out = capsys.readouterr().out
    assert "FAIL: driver `" in out and "request 1 (start): the driver exited with code 3" in out


def test_replay_starts_a_broken_driver_again_for_the_next_trace(capsys):
    from harness.conformance.replay import TRACES
    traces = [str(TRACES / "step-started-window.json"), str(TRACES / "memory-before-publish.json")]
    assert main(["replay", *traces, "--sut", fake("hang"), "--sut-timeout", "0.5"]) == 1
    out = capsys.readouterr().out
    assert out.count("request 1 (start): no reply within 0.5 s") == 2  # a new driver numbers from 0 again
    assert "replay: 0 passed, 2 failed" in out

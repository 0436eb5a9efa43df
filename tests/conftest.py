"""Shared fixtures. Tests that need Java/TLC skip (never pass) when TLC cannot run here."""

import shutil

import pytest


def _tlc_available() -> str | None:
    try:
        from harness import tlc
        tlc.find_jar()
        tlc.find_java()
    except Exception as exc:  # noqa: BLE001 - any reason is a reason to skip
        return str(exc)
    return None


@pytest.fixture(scope="session")
def tlc_or_skip():
    reason = _tlc_available()
    if reason:
        pytest.skip(f"TLC unavailable: {reason}")


@pytest.fixture
def out_dir(tmp_path):
    d = tmp_path / "found"
    d.mkdir()
    return d


def have_java() -> bool:
    return shutil.which("java") is not None

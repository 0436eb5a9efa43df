"""Is this CI? One answer for every test (tests/test_cikit.py checks its cases).

A test that needs something this machine may lack (TLC, PostgreSQL, chromium, the JUnit XSD) skips locally
with the reason, and fails under CI instead, so a CI run can never pass without having run it. CI is the
environment variable every CI service sets (`CI=true`: .ci/run, GitHub Actions, GitLab; some set another
word, e.g. `CI=woodpecker`): any value but an empty one, `false`, `0` or `no`, in any case.
"""

from __future__ import annotations

import os
from typing import Mapping, NoReturn

import pytest

NOT_CI = ("", "false", "0", "no")


def is_ci(env: Mapping[str, str] | None = None) -> bool:
    """Whether the environment (os.environ unless given) is a CI run's."""
    env = os.environ if env is None else env
    return env.get("CI", "").strip().lower() not in NOT_CI


def unavailable(message: str, what: str, env: Mapping[str, str] | None = None) -> NoReturn:
    """Skip (locally) or fail (CI) the test that needed what is missing: `message` says what and why,
    `what` names the tests that must run under CI."""
    if is_ci(env):
        value = (os.environ if env is None else env).get("CI", "").strip().lower()
        pytest.fail(f"{message} (CI={value}: {what} must run, not skip)", pytrace=False)
    pytest.skip(message)

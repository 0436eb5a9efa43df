"""The one answer to "is this CI?" (tests/cikit.py), and that no test asks the environment another way."""

import ast
from pathlib import Path

import pytest

import cikit

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("env, ci", [({}, False), ({"CI": ""}, False), ({"CI": "false"}, False),
                                     ({"CI": "False "}, False), ({"CI": "0"}, False), ({"CI": "no"}, False),
                                     ({"CI": "true"}, True), ({"CI": "TRUE"}, True), ({"CI": "1"}, True),
                                     ({"CI": "yes"}, True), ({"CI": "woodpecker"}, True),
                                     ({"GITHUB_ACTIONS": "true"}, False)])
def test_is_ci(env, ci):
    assert cikit.is_ci(env) is ci


def test_is_ci_reads_the_environment_by_default(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert cikit.is_ci()
    monkeypatch.delenv("CI")
    assert not cikit.is_ci()


def test_unavailable_skips_locally_and_fails_under_ci():
    with pytest.raises(pytest.skip.Exception, match="^chromium is missing$"):
        cikit.unavailable("chromium is missing", "the browser tests", {"CI": "false"})
    with pytest.raises(pytest.fail.Exception) as err:
        cikit.unavailable("chromium is missing", "the browser tests", {"CI": "TRUE"})
    assert str(err.value) == "chromium is missing (CI=true: the browser tests must run, not skip)"


def ci_lookups(source: str) -> list[int]:
    """Lines that read the CI variable themselves: the string "CI" as a subscript or an argument of a call
    (`os.environ.get("CI")`, `env["CI"]`, `getenv("CI")`)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        args = node.args if isinstance(node, ast.Call) else [node.slice] if isinstance(node, ast.Subscript) else []
        if any(isinstance(a, ast.Constant) and a.value == "CI" for a in args):
            out.append(node.lineno)
    return sorted(out)


def test_no_test_decides_ci_itself():
    found = [f"{p.relative_to(TESTS)}:{line}" for p in sorted(TESTS.rglob("*.py"))
             if p.name not in ("cikit.py", "test_cikit.py")  # the helper, and this test of it
             for line in ci_lookups(p.read_text(encoding="utf-8"))]
    assert found == [], "ask cikit.is_ci() instead:\n" + "\n".join(found)


def test_the_lookup_scan_sees_each_way():
    sample = ('import os\nCI = bool(os.environ.get("CI"))\nci = os.environ["CI"] == "true"\n'
              'x = os.getenv("CI")\nenv = {"CI": "true"}\n')
    assert ci_lookups(sample) == [2, 3, 4]

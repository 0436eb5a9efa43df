"""claimcheck from another repository: ci/github-workflow.yml's commands, run in order from a folder outside
the claimcheck checkout (a copy of the TypeScript example, as a server's repository would hold it), with
claimcheck installed from its wheel, not imported from the checkout. What they must leave: every trace
replayed through the driver, a JUnit report, GitHub annotations and the job summary.

Two stand-ins, and why: `pip install "$CLAIMCHECK"` installs the wheel built from this checkout into a
folder of the test's (`--no-deps --target`: the dependencies are this venv's, nothing downloaded), and
`claimcheck` runs that folder's package; the gate's stages are cut to `traces` (the four server stages
through the driver take minutes, outside this test's budget; the nightly job runs them)."""

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "ci" / "github-workflow.yml"
EXAMPLE = ROOT / "examples" / "typescript"
BIN = Path(sys.executable).parent


def workflow_commands() -> list[str]:
    """The `- run:` lines between the workflow's `claimcheck:commands` and `claimcheck:end` markers."""
    text = WORKFLOW.read_text()
    block = text[text.index("# claimcheck:commands"):text.index("# claimcheck:end")]
    return [m.group(1) for m in re.finditer(r"^\s*- run: (.+)$", block, re.MULTILINE)]


def test_the_workflow_names_its_commands():
    assert workflow_commands()[:3] == ["npm ci", 'pip install "$CLAIMCHECK"', "mkdir -p reports"]
    assert any(c.startswith('claimcheck gate --sut "$SUT"') and "--junit" in c for c in workflow_commands())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")  # setuptools' build/ folder, kept out of the checkout
    src = build / "claimcheck"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "node_modules", "build", "*.egg-info",
                                                              "__pycache__", ".hypothesis", "found"))
    subprocess.run([str(BIN / "pip"), "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(src)],
                   check=True, capture_output=True, text=True)
    (whl,) = out.glob("claimcheck-*.whl")
    return whl


def shims(tmp: Path, site: Path) -> Path:
    """`pip` and `claimcheck` as the workflow calls them, onto `site` (see the module's docstring)."""
    bin_ = tmp / "bin"
    bin_.mkdir()
    (bin_ / "pip").write_text(f'#!/bin/sh\nexec "{BIN / "pip"}" "$@" -q --no-deps --target "{site}"\n')
    (bin_ / "claimcheck").write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" -m harness.cli "$@"\n')
    for f in bin_.iterdir():
        f.chmod(0o755)
    return bin_


def test_the_workflow_runs_against_the_typescript_example_outside_the_checkout(tmp_path, wheel):
    assert shutil.which("node") and shutil.which("npm"), "Node 20 and npm are needed (.ci/run installs them)"
    server = tmp_path / "server"
    shutil.copytree(EXAMPLE, server, ignore=shutil.ignore_patterns("node_modules"))
    site = tmp_path / "site"
    env = {**os.environ, "PATH": f"{shims(tmp_path, site)}{os.pathsep}{os.environ['PATH']}", "SUT": "./driver",
           "CLAIMCHECK": str(wheel), "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    env.pop("PYTHONPATH", None)
    out = []
    for command in workflow_commands():
        if command == "npm ci":
            command += " --prefer-offline --no-audit --no-fund"  # the lock file's packages, from npm's cache
        if command.startswith("claimcheck gate"):
            command = re.sub(r' --stage (\w+|"[^"]+")', "", command) + " --stage traces"
        r = subprocess.run(command, shell=True, cwd=server, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"{command}: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        out.append(r.stdout)
    where = subprocess.run(["claimcheck", "--version"], cwd=server, env=env, capture_output=True, text=True)
    imported = subprocess.run([sys.executable, "-c", "import harness; print(harness.__file__)"], cwd=server,
                              env={**env, "PYTHONPATH": str(site)}, capture_output=True, text=True).stdout
    assert imported.startswith(str(site)) and where.returncode == 0, (imported, where.stderr)
    replay = next(o for o in out if o.startswith("replay against"))
    traces = len(list((site / "traces").glob("*.json")))
    assert traces >= 18 and f"replay: {traces} passed, 0 failed" in replay
    gate = out[-1]
    assert "gate: 1 passed, 0 failed, 8 skipped" in gate and "::warning title=claimcheck TLC%3A skipped::" in gate
    suite = ET.parse(server / "reports" / "claimcheck.xml").getroot()
    assert suite.get("failures") == "0" and suite.find(".//testsuite[@name='traces']") is not None
    assert "## claimcheck gate: passed" in (tmp_path / "summary.md").read_text()
    assert (server / "reports" / "claimcheck.json").exists()

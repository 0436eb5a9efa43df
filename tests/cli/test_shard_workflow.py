"""ci/github-shards.yml, the example workflow that runs the deep profile as a matrix of N shards and merges them:
valid YAML with the structure GitHub Actions expects (triggers, jobs with runs-on and steps, each step a `uses`
or a `run`), a matrix 1..N whose every `--shard` is `K/N` with that N, a merge job that needs the shard job, runs
even when a shard failed, and merges the very files the shards upload; every claimcheck command in it parses."""

import re
import shlex
from pathlib import Path

import pytest

from harness import cli

yaml = pytest.importorskip("yaml", reason="PyYAML is in the test extras (pip install -e '.[test]')")

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "ci" / "github-shards.yml"


@pytest.fixture(scope="module")
def doc():
    return yaml.safe_load(WORKFLOW.read_text())


def commands(job: dict, **values) -> list[str]:
    """The job's `claimcheck` run lines, with ${{ matrix.X }} and ${{ env.X }} replaced by `values`."""
    out = []
    for step in job["steps"]:
        for line in str(step.get("run", "")).splitlines():
            if line.startswith("claimcheck "):
                out.append(re.sub(r"\$\{\{\s*(?:matrix|env)\.(\w+)\s*\}\}", lambda m: str(values[m.group(1)]), line))
    return out


def test_the_workflow_has_the_structure_github_expects(doc):
    assert doc["name"] and set(doc) == {"name", True, "jobs"}  # YAML 1.1 reads the `on:` key as True
    assert "schedule" in doc[True] and "workflow_dispatch" in doc[True]
    for name, job in doc["jobs"].items():
        assert job["runs-on"] == "ubuntu-latest" and job["steps"], name
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), (name, step)
            assert set(step) <= {"name", "uses", "with", "run", "if", "env"}, (name, step)


def test_the_matrix_runs_every_shard_once_with_one_n(doc):
    job = doc["jobs"]["shard"]
    n = job["env"]["SHARDS"]
    assert job["strategy"]["matrix"]["shard"] == list(range(1, n + 1)) and job["strategy"]["fail-fast"] is False
    for k in range(1, n + 1):
        lines = commands(job, shard=k, SHARDS=n)
        assert len(lines) == 2 and all(f"--shard {k}/{n} " in line and "--profile deep" in line for line in lines)
        assert all(re.search(rf"--json shards/\w+-{k}\.json$", line) for line in lines)


def test_the_merge_job_needs_the_shards_and_merges_what_they_upload(doc):
    shard, merge = doc["jobs"]["shard"], doc["jobs"]["merge"]
    assert merge["needs"] == "shard" and merge["if"] == "always()"
    upload = next(s for s in shard["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and "shards/" in upload["with"]["path"].split()
    download = next(s for s in merge["steps"] if s.get("uses", "").startswith("actions/download-artifact"))
    assert download["with"]["pattern"] == upload["with"]["name"].replace("${{ matrix.shard }}", "*")
    (line,) = commands(merge)
    argv = shlex.split(line)[1:]
    assert argv[0] == "merge" and argv[1] == f"{download['with']['path']}/shards/*.json"
    assert "--json" in argv and "--junit" in argv


def test_every_claimcheck_command_in_it_parses(doc, tmp_path, monkeypatch):
    """In a folder laid out as the jobs leave it: `shards/` made, a shard file downloaded (the shell's glob)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shards").mkdir()
    (tmp_path / "artifacts" / "shards").mkdir(parents=True)
    (tmp_path / "artifacts" / "shards" / "conform-1.json").write_text("{}")
    lines = commands(doc["jobs"]["shard"], shard=2, SHARDS=4) + commands(doc["jobs"]["merge"])
    for line in lines:
        args = cli.build_parser().parse_args(shlex.split(line.replace("*.json", "conform-1.json"))[1:])
        assert args.func, line

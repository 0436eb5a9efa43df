"""Configuration files (`--config FILE.json`): mutated configurations and their bytes through the loader
and through `check`, `fuzz`, `bench` and `itf import`; the registered configurations as files, and their
wiring through each command."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from badkit import (CONFIG_BYTES, CONFIG_DOCS, GARBAGE, ITF_BYTES, ROOT, assert_one_line, budget,
                    check_config_file, mutated, mutated_bytes, run_cli, write_file)
from harness import cli
from harness.cli import main
from harness.traces import configfile as F
from harness.traces import trace as T
from spec import configs

@budget(600)
@given(doc=mutated(CONFIG_DOCS))
def test_config_loader_on_mutated_configurations(work, doc):
    check_config_file(write_file(work, "config.json", doc))


@budget(250)
@given(data=mutated_bytes(CONFIG_BYTES))
def test_config_loader_on_mutated_bytes(work, data):
    check_config_file(write_file(work, "config-bytes.json", data))


@budget(120)
@given(doc=mutated(CONFIG_DOCS) | GARBAGE, sub=st.sampled_from(["check", "fuzz", "bench", "itf"]))
def test_cli_config_files(work, capsys, doc, sub):
    p = write_file(work, "cli-config.json", doc)
    try:
        F.load(p)
    except F.ConfigError:
        pass
    else:
        return  # a valid configuration would start a model checker or a campaign: the loader tests cover it
    run = write_file(work, "cli-ok.itf.json", ITF_BYTES[0])
    argv = {"check": ["check", "--config", p], "fuzz": ["fuzz", "--config", p], "bench": ["bench", "--config", p],
            "itf": ["itf", "import", run, "--config", p, "--out", work / "never.json"]}[sub]
    code, _, err = run_cli(capsys, argv)
    assert code == 2
    assert_one_line(err, sub, p)


@pytest.mark.parametrize("name", sorted(configs.CONFIGS))
def test_configuration_files_round_trip_to_the_registered_configurations(name):
    path = ROOT / "spec" / "config-files" / f"{name}.json"
    assert F.load(path) == configs.CONFIGS[name]
    assert path.read_text() == F.dumps(configs.CONFIGS[name])  # the files are current
    on = F.resolve(str(path), ["memory-before-publish"], ["TimelyDispatch"])
    assert on.cfg == configs.get(name, ["memory-before-publish"], ["TimelyDispatch"]) and on.label == name


def test_a_trace_config_block_is_a_configuration_file(tmp_path):
    doc = json.loads((ROOT / "traces" / "cross-session-recovery-collision.json").read_text())
    p = tmp_path / "block.json"
    p.write_text(json.dumps(doc["config"]))
    assert F.load(p) == T.trace_to_config(T.TraceConfig.model_validate(doc["config"]))


def test_config_files_are_wired_through_check_fuzz_bench_and_itf_import(tmp_path, capsys, monkeypatch):
    from harness.reports import bench
    from harness.engines import check
    from harness.conformance import fuzz
    path = str(ROOT / "spec" / "config-files" / "rows.json")
    seen = {}

    class Stop(Exception):
        pass

    def capture(key):
        def fn(*args, **kwargs):
            seen[key] = kwargs.get("cfg", args[0])
            raise Stop
        return fn
    monkeypatch.setattr(check, "run_python", capture("check"))
    monkeypatch.setattr(fuzz.lockstep, "run", capture("fuzz"))
    monkeypatch.setattr(bench, "bench_explorer_vs_tlc", capture("bench"))
    for argv in (["check", "--config", path, "--defect", "memory-before-publish"], ["fuzz", "--config", path],
                 ["bench", "--config", path]):
        args = cli.build_parser().parse_args(argv)
        with pytest.raises(Stop):
            args.func(args)
    assert seen["check"] == configs.get("rows", ["memory-before-publish"])
    assert seen["fuzz"] == seen["bench"] == configs.CONFIGS["rows"]
    src = ROOT / "traces" / "cross-session-recovery-collision.json"
    assert main(["itf", "export", str(src), "--out", str(tmp_path / "c.itf.json")]) == 0
    assert main(["itf", "import", str(tmp_path / "c.itf.json"), "--config", path, "--out", str(tmp_path / "a.json")]) == 0
    assert main(["itf", "import", str(tmp_path / "c.itf.json"), "--config", "rows", "--out",
                 str(tmp_path / "b.json")]) == 0
    a, b = T.load(tmp_path / "a.json"), T.load(tmp_path / "b.json")
    assert [s.model_dump() for s in a.steps] == [s.model_dump() for s in b.steps]
    assert T.trace_to_config(a.config) == T.trace_to_config(b.config) == configs.CONFIGS["rows"]

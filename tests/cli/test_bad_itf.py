"""Bad ITF files: mutated ITF exports of the committed traces and their bytes through `itf.import_file` and
`claimcheck itf import` (badkit.py says what every outcome must be)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from badkit import (ITF_BYTES, ITF_DOCS, ROOT, assert_one_line, budget, check_itf_file, mutated, mutated_bytes,
                    run_cli, write_file)

@budget(600)
@given(doc=mutated(ITF_DOCS), config=st.sampled_from([None, None, "ci", "sessions", "spec/config-files/ci.json"]))
def test_itf_import_on_mutated_itf_files(work, doc, config):
    check_itf_file(write_file(work, "run.itf.json", doc), work / "imported.json",
                   str(ROOT / config) if config and config.endswith(".json") else config)


@budget(250)
@given(data=mutated_bytes(ITF_BYTES))
def test_itf_import_on_mutated_bytes(work, data):
    check_itf_file(write_file(work, "run-bytes.itf.json", data), work / "imported-bytes.json", None)


@budget(100)
@given(doc=mutated(ITF_DOCS))
def test_cli_itf_import_on_mutated_itf_files(work, capsys, doc):
    p = write_file(work, "cli-run.itf.json", doc)
    code, _, err = run_cli(capsys, ["itf", "import", p, "--out", work / "cli-imported.json"])
    if code == 2:
        assert_one_line(err, "itf", p)

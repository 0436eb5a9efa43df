"""docs/protocol.md defines every finding id (`R000-v18`, `R003-MUST-FIX-1`, ...) that the registry, the
traces and the READMEs cite, and the repository names no file outside itself."""

import json
import re
from pathlib import Path

from spec import names as N

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"
ID = re.compile(r"\bR00[03]-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


def defined() -> set[str]:
    """The ids of the findings tables: the first cell of a row, in backquotes."""
    return set(re.findall(r"^\| `(R00[03]-[^`]+)` \|", DOC.read_text(), re.M))


def test_the_findings_tables_define_each_id_once():
    rows = re.findall(r"^\| `(R00[03]-[^`]+)` \|", DOC.read_text(), re.M)
    assert len(rows) == len(set(rows)) and {"R000-v18", "R000-v17", "R003-MUST-FIX-1", "R003-MUST-FIX-2",
                                            "R003-MUST-FIX-3", "R003-CONCERN"} <= set(rows)


def test_every_defect_source_starts_with_a_defined_finding():
    ids = defined()
    for d in N.DEFECTS.values():
        cited = ID.findall(d.source)
        assert cited and d.source.startswith(cited[0]), (d.name, d.source)
        assert set(cited) <= ids, (d.name, set(cited) - ids)


def test_every_cited_id_is_defined():
    ids = defined()
    files = [ROOT / "README.md", ROOT / "spec" / "README.md", ROOT / "impl" / "README.md",
             ROOT / "harness" / "README.md", DOC, *sorted((ROOT / "traces").glob("*.json"))]
    for f in files:
        assert set(ID.findall(f.read_text())) <= ids, (f.name, set(ID.findall(f.read_text())) - ids)


def test_each_reported_race_cites_its_defects_finding():
    for p in sorted((ROOT / "traces").glob("*.json")):
        meta = json.loads(p.read_text()).get("meta", {})
        if meta.get("defect") and meta.get("reported"):
            assert meta["reported"].startswith(N.DEFECTS[meta["defect"]].source.split(",")[0].split()[0]), p.name

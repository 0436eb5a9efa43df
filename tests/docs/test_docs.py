"""The README is a user's guide of at most 250 lines, and every file the guide and docs/ point at exists
(a link or a backquoted repository path), so a moved module cannot leave a stale pointer behind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_README_LINES = 250
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
TOPS = ("spec/", "impl/", "binding/", "harness/", "docs/", "ci/", "examples/", "traces/", "tests/", ".ci/")
PATH = re.compile(r"`((?:%s)[A-Za-z0-9_./-]+\.(?:py|md|tla|cfg|json|yml|js|ts|java|sh))`" % "|".join(
    re.escape(t) for t in TOPS))


def pointers(text: str) -> set[str]:
    """The repository paths a guide names: its relative links and backquoted paths (no globs)."""
    links = {m for m in LINK.findall(text) if "://" not in m and not m.startswith("mailto:")}
    return links | {m for m in PATH.findall(text) if "*" not in m and "<" not in m}


def missing(guide: Path) -> list[str]:
    base = guide.parent
    out = []
    for p in sorted(pointers(guide.read_text(encoding="utf-8"))):
        here = (base / p) if not p.startswith(TOPS) else (ROOT / p)
        if not here.exists() and not (ROOT / p).exists():
            out.append(p)
    return out


def test_the_readme_is_a_guide_of_at_most_250_lines():
    n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert n <= MAX_README_LINES, f"README.md has {n} lines (at most {MAX_README_LINES}: figures go to docs/figures.md)"


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.name)
def test_every_pointer_of_a_guide_exists(guide):
    assert not missing(guide), f"{guide.relative_to(ROOT)} points at files that do not exist: {missing(guide)}"


def test_the_pointer_check_sees_a_stale_path(tmp_path):
    guide = tmp_path / "g.md"
    guide.write_text("see [the spec](spec/names.py), `harness/no_such_module.py` and [x](nowhere.md)\n")
    assert missing(guide) == ["harness/no_such_module.py", "nowhere.md"]

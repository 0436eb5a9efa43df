"""`claimcheck explain --format html`: a self-contained page, one lane per actor, the state after every
step, the violation and the trace's notes marked; rendered in a real headless browser (Debian's
`chromium`), its screenshot kept under .claimcheck/artifacts/explain-html/ (gitignored; the path is
printed, `pytest -rP` shows it, and the JUnit report carries it as the `screenshot` property).

Without chromium these browser tests skip with the reason; under CI they fail (tests/cikit.py; .ci/run installs it)."""

import json
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

import cikit
from harness.cli import main
from harness.conformance import replay as R
from harness.reports import explain as X
from serverkit import BUNDLED

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / ".claimcheck" / "artifacts" / "explain-html"
MEMORY = R.TRACES / "memory-before-publish.json"
FAILED = R.TRACES / "step-failed-duplicate-interrupt.json"


class Page(HTMLParser):
    """The elements of a page by class, with their text and attributes."""

    def __init__(self, text: str):
        super().__init__()
        self.stack: list[dict] = []
        self.elements: list[dict] = []
        self.tags: list[tuple[str, dict]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        el = {"tag": tag, "class": (a.get("class") or "").split(), "attrs": a, "text": ""}
        self.elements.append(el)
        if tag not in ("meta", "br", "link", "img", "input"):
            self.stack.append(el)

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        for el in self.stack:
            el["text"] += data

    def by_class(self, cls: str) -> list[dict]:
        return [e for e in self.elements if cls in e["class"]]


def _html(path, defects=None, tmp_path=None, loop=None) -> str:
    if loop is not None:
        raw = json.loads(path.read_text())
        raw["loop"] = loop
        path = tmp_path / "lasso.json"
        path.write_text(json.dumps(raw))
    return X.explain_file(path, "html", defects, server=BUNDLED)


def _check_page(page: Page, path: Path, defects) -> None:
    """Lanes, steps, state panels, notes and the violation, as the trace has them."""
    s = X.story(X.T.load(path), defects, str(path), server=BUNDLED)
    actors = list(dict.fromkeys(ln.actor for ln in s.lines))
    lanes = [e["text"].strip() for e in page.by_class("lane")]
    assert lanes[:len(actors)] == actors and lanes[-1] == "database"
    steps = page.by_class("step")
    assert [e["attrs"]["id"] for e in steps] == [f"step-{ln.index}" for ln in s.lines]
    for e, ln in zip(steps, s.lines):
        assert f"{ln.index}. {ln.action}(" in e["text"]
        assert f"state after step {ln.index}" in e["text"]
        if ln.note:
            assert f"note: {ln.note}" in e["text"]
    panels = [e for e in page.elements if e["tag"] == "details"]
    assert len(panels) == len(s.lines)
    bad = page.by_class("violated")
    seen, first = set(), []  # each invariant marked where it first breaks
    for ln in s.lines:
        if set(ln.violated) - seen:
            first.append(f"step-{ln.index}")
        seen |= set(ln.violated)
    assert [e["attrs"]["id"] for e in bad] == first
    opened = [e for e in panels if "open" in e["attrs"]]
    assert len(opened) == len(bad)  # the state is shown open where an invariant first breaks


def _self_contained(text: str) -> None:
    low = text.lower()
    for banned in ("<script", "<link", "<img", "<iframe", "@import", "url(", "http:", "https:", "src=", "//cdn"):
        assert banned not in low, banned
    assert "<style>" in low


def test_html_is_a_self_contained_page_with_lanes_states_notes_and_the_violation(capsys):
    assert main(["explain", str(MEMORY), "--format", "html", "--defect", "memory-before-publish"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("<!DOCTYPE html>")
    _self_contained(text)
    page = Page(text)
    _check_page(page, MEMORY, ["memory-before-publish"])
    lanes = [e["text"].strip() for e in page.by_class("lane")]
    assert lanes == ["runner@n1", "clock", "provider", "publisher memory@n1", "database"]
    (bad,) = page.by_class("violated")
    assert bad["attrs"]["id"] == "step-5" and "VIOLATES MemoryFollowsDurable" in bad["text"]
    memory = [e for e in page.elements if e["tag"] == "td" and e["attrs"].get("data-lane") == "memory@n1"
              and "reached" in e["class"]]
    assert [m["text"] for m in memory] == ["memory@n1: a1 active"]  # set before the commit: the defect
    assert "publisher memory@n1: assistant 1, active" in bad["text"]  # the state panel, open on the violation


@pytest.mark.parametrize("path", R.committed_traces(), ids=lambda p: p.stem)
def test_html_for_every_committed_trace(path):
    defect = json.loads(path.read_text())["meta"].get("defect")  # a race the reference passes has none
    defects = [defect] if defect else []
    text = _html(path, defects)
    _self_contained(text)
    _check_page(Page(text), path, defects)


def test_html_marks_a_lasso_and_a_stuck_step(tmp_path):
    page = Page(_html(R.TRACES / "unsupervised-cancel-heartbeat.json", tmp_path=tmp_path, loop=11))
    (head,) = page.by_class("loop-head")
    assert head["text"] == "loop forever, back to the state after step 11"
    assert [e["attrs"]["id"] for e in page.by_class("in-loop")] == ["step-12", "step-13", "step-14", "step-15", "step-16"]
    text = _html(R.TRACES / "step-started-window.json", ["step-started-window"])
    assert "stuck: step 8 FinalizerSettle(n1) is not enabled" in text
    assert "VIOLATES SessionsEventuallyAvailable at the end" in text


# ---------------------------------------------------------------- in a real browser

@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's chromium; skip with the reason without it (fail under CI, where .ci/run installs it)."""
    exe = shutil.which("chromium")
    if exe is None:
        reason = "chromium is not installed (apt-get install chromium); the HTML report's browser test needs it"
        cikit.unavailable(reason, "the browser tests")
    return exe


def _browser(exe: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
           "--no-first-run", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def _png(path: Path) -> tuple[int, int, int]:
    """(width, height, distinct byte values of the decoded image data): a blank page has very few."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    idat, k = b"", 8
    while k < len(data):
        (n,), kind = struct.unpack(">I", data[k:k + 4]), data[k + 4:k + 8]
        if kind == b"IDAT":
            idat += data[k + 8:k + 8 + n]
        k += 12 + n
    return width, height, len(set(zlib.decompress(idat)))


@pytest.mark.parametrize("path, defect", [(MEMORY, "memory-before-publish"), (FAILED, "step-failed-duplicate-interrupt")],
                         ids=["memory-before-publish", "step-failed-duplicate-interrupt"])
def test_html_in_headless_chromium(chromium, tmp_path, path, defect, record_property):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page_file = ARTIFACTS / f"{path.stem}.html"
    page_file.write_text(_html(path, [defect]))
    dom = _browser(chromium, tmp_path / "profile", "--dump-dom", page_file.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = Page(dom.stdout)  # the document as the browser parsed it
    _check_page(page, path, [defect])
    assert page.by_class("violated") and page.by_class("legend")
    shot = ARTIFACTS / f"{path.stem}.png"
    shot.unlink(missing_ok=True)
    run = _browser(chromium, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1400,1800", page_file.as_uri())
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    width, height, colours = _png(shot)
    assert (width, height) == (1400, 1800) and colours > 50, (width, height, colours)
    record_property("screenshot", str(shot))
    print(f"screenshot: {shot}")

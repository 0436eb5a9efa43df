"""pytest's junit-10.xsd, as constraints checked by hand (the schema itself is kept as tests/reports/junit-10.xsd).

Each element the schema declares, with the attributes it allows (and requires), the children it allows
and whether it holds text; `time` attributes are the schema's SUREFIRE_TIME. `problems(root)` lists every
breach; `xsd_path()` finds the schema itself, for tests that validate with the
xmlschema package.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?")
_RERUN = ({"message", "type"}, {"type"}, ("stackTrace", "system-out", "system-err"), True)
# element: (allowed attributes, required attributes, allowed children, text allowed)
ELEMENTS = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set(), ("testsuite",), False),
    "testsuite": ({"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname",
                   "id", "package", "file", "log", "url", "version"}, {"name", "tests", "failures", "errors"},
                  ("testsuite", "properties", "testcase", "system-out", "system-err"), False),
    "properties": (set(), set(), ("property",), False),
    "property": ({"name", "value"}, {"name", "value"}, (), False),
    "testcase": ({"name", "time", "classname", "group"}, {"name"},
                 ("skipped", "errors", "failure", "rerunFailure", "rerunError", "flakyFailure", "flakyError",
                  "system-out", "system-err"), False),
    "failure": ({"type", "message"}, set(), (), True),
    "errors": ({"type", "message"}, set(), (), True),
    "skipped": ({"type", "message"}, set(), (), True),
    "system-out": (set(), set(), (), True),
    "system-err": (set(), set(), (), True),
    "stackTrace": (set(), set(), (), True),
    "rerunFailure": _RERUN, "rerunError": _RERUN, "flakyFailure": _RERUN, "flakyError": _RERUN,
}
TIMED = {"testsuites", "testsuite"}  # where `time` is SUREFIRE_TIME (a testcase's is any string)


def problems(root) -> list[str]:
    out = []
    if root.tag not in ("testsuites", "testsuite"):
        out.append(f"root <{root.tag}> is not <testsuites> or <testsuite>")

    def walk(el, where):
        spec = ELEMENTS.get(el.tag)
        if spec is None:
            out.append(f"{where}: <{el.tag}> is not declared by the schema")
            return
        allowed, required, children, text = spec
        for a in sorted(set(el.attrib) - allowed):
            out.append(f"{where}: attribute {a!r} not allowed")
        for a in sorted(required - set(el.attrib)):
            out.append(f"{where}: required attribute {a!r} missing")
        if el.tag in TIMED and "time" in el.attrib and not SUREFIRE_TIME.fullmatch(el.get("time")):
            out.append(f"{where}: time {el.get('time')!r} is not SUREFIRE_TIME")
        if not text and ((el.text or "").strip() or any((c.tail or "").strip() for c in el)):
            out.append(f"{where}: text inside <{el.tag}>, which holds elements only")
        for k, child in enumerate(el):
            if child.tag not in children:
                out.append(f"{where}: <{child.tag}> not allowed inside <{el.tag}>")
            else:
                walk(child, f"{where}/{child.tag}[{k}]")

    walk(root, root.tag)
    return out


def xsd_path() -> Path | None:
    """junit-10.xsd: $CLAIMCHECK_JUNIT_XSD, else the copy kept beside the tests (tests/reports/junit-10.xsd:
    pytest's testing/example_scripts/junit-10.xsd, MIT licence in its header), so a clone needs nothing
    outside the repository."""
    candidates = [os.environ.get("CLAIMCHECK_JUNIT_XSD"), str(Path(__file__).resolve().parent / "reports" / "junit-10.xsd")]
    return next((Path(c) for c in candidates if c and Path(c).is_file()), None)

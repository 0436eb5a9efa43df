"""TLC for the tests: Java and the pinned tla2tools.jar (harness.engines.tlc). Where either is missing, or
the jar's sha256 differs from the pin, the tests that need TLC skip with the reason; under CI they fail
instead (tests/cikit.py), so a CI run can never pass without having run them."""

from __future__ import annotations

from typing import Mapping

import cikit


def unavailable_reason() -> str | None:
    """Why TLC cannot run here, or None. Only TlcUnavailable is a reason; anything else is a bug, raised."""
    from harness.engines import tlc
    try:
        tlc.find_jar()
        tlc.find_java()
    except tlc.TlcUnavailable as exc:
        return str(exc)
    return None


def require(env: Mapping[str, str] | None = None) -> None:
    """Return when TLC can run; else skip (locally) or fail (CI) the test that needed it."""
    reason = unavailable_reason()
    if reason is None:
        return
    cikit.unavailable(f"TLC unavailable: {reason}", "the TLC tests", env)

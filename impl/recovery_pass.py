"""The production recovery pass: one scan window, each row driven from takeover to its end in one call.

The units are the worker's own actions (impl/recovery.py), run through `RecoveryWorker.unit` so a harness
can record each unit's commit as a step of its own. A unit the database refuses (busy, lock timeout, a
lost connection) rolls back whole and raises out of the pass with the worker's pc where the unit left it;
the next pass first finishes that row from its pc, so a transient error delays one row and never makes
the worker refuse the rest of its windows (a worker that is not idle cannot take a row over).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import registry as R
from .actor import CONVERTING, IDLE, QUARANTINING, RECONCILED, RECONVERTING, SCANNED


@dataclass(frozen=True)
class Handled:
    """What one scan pass did with one claim."""
    session_id: str
    execution_id: int
    outcome: str  # converted | cancelled | released | quarantined | superseded | lost
    reason: str | None = None


def run_once(w) -> list[Handled]:
    """One production pass: the row in progress finished first, then every row of one scan window taken,
    converted or quarantined, or skipped if another worker won it; a bad row never stops the pass."""
    handled = []
    if w.pc != IDLE:  # the last pass stopped mid-row (a unit the database refused)
        s, e = (w.seen.session_id, w.seen.execution_id) if w.pc == SCANNED else (w.session_id, w.execution_id)
        handled.append(through(w, s, e))
    for seen in w.window():
        w.remember(seen)  # RecoveryScan: the row of the window the compare-and-swap compares on
        handled.append(through(w, seen.session_id, seen.execution_id))
    return handled


def through(w, s: str, e: int) -> Handled:
    """Drive the worker's row from its pc to idle, unit by unit, in the actions' order."""
    if w.pc == SCANNED:
        if not w.unit(R.RECOVERY_TAKEOVER, w.take):
            return Handled(s, e, "lost", w.last.reason)
        if w.pc == IDLE:  # quarantined in place by the scan (scan-quarantines-cancellation)
            return Handled(s, e, "quarantined", "at scan")
    if w.pc == CONVERTING:
        w.unit(R.RECOVERY_RECONCILE, w.reconcile)
    if w.pc == RECONCILED:
        if w.unit(R.RECOVERY_CONVERT, w.convert) and w.pc == IDLE:
            return Handled(s, e, w.finished)
        if w.pc == IDLE:  # released: the lease ran out; a later pass retries it
            return Handled(s, e, "released", w.last.reason)
    if w.pc == RECONVERTING:  # the conversion's acknowledgement or COMMIT was lost: the same ids again
        result = w.unit(R.RECOVERY_RECONVERT, w.reconvert)
        return Handled(s, e, "converted" if result else "superseded", None if result else result.reason)
    reason = w.reason
    outcome = "quarantined" if w.unit(R.RECOVERY_QUARANTINE, w.quarantine) else "superseded"
    return Handled(s, e, outcome, reason)

"""Recovery: a worker with an owner id of its own takes over expired claims and converts them.

Takeover is two steps, as the production pass runs them: a scan (a read of the bounded, oldest-first
window of expired, unquarantined claims; the worker remembers the row it will try) and a compare-and-swap
on exactly what the scan saw. Two workers can scan the same row; one CAS wins, the other changes nothing.
Conversion is one fenced transaction. Cancellation-owned work is finished (Step.Interrupted once for an
open assistant, the execution recorded cancelled, the claim cleared, no recovery row, no continuation).
Recovering work is validated (the assistant is the execution's own; no other Session's recovery row names
the execution), an open assistant settled, its session_recovery row and continuation written (keyed: an
earlier attempt's are completed) and the claim cleared. Malformed work is quarantined with a reason; a
conversion that only lost its lease is released for a later takeover until `max_tries`. A scan never stops
on a bad row. After a lost acknowledgement or COMMIT (`AckLost`, `CommitFailed`) the worker retries with
the same deterministic ids: its own committed work found, nothing changes; else the keyed writes again.
"""

from __future__ import annotations

import logging
from typing import Iterable

import sqlalchemy as sa

from . import ids, recovery_pass
from . import registry as R
from .actor import CONVERTING, IDLE, QUARANTINING, RECONCILED, RECONVERTING, SCANNED, Actor, Step
from .boundaries import Boundaries
from .claims import ClaimRow, ClaimStore, Ident, known_phase
from .clock import Clock
from .context import Context
from .db import Database, dialect_insert, guarded
from .events import Fence, Publisher, StepEvent, assistant_row, open_calls
from .faults import COMMITTED, NOT_COMMITTED, AckLost, CommitFailed
from .inputs import InputStore
from .prepared import run
from .recovery_pass import Handled
from .results import Abort, Conflict, Fenced, Malformed, NotEnabled, Ok, Released, Result
from .runner import record_history
from .schema import recovery_t
from .wakes import DEFAULT_FRESH_SHARE, check_share, planned

log = logging.getLogger(__name__)
# what the database raises when it refuses a unit for its own reasons (busy, lock timeout, connection lost)
TRANSIENT = (sa.exc.OperationalError, sa.exc.InterfaceError)
# built once (impl.prepared): the execution's recovery row, of any Session or of its own
_ROW = sa.select(recovery_t).where(recovery_t.c.execution_id == sa.bindparam("execution"))
_ROW_OF_SESSION = _ROW.where(recovery_t.c.session_id == sa.bindparam("session"))
_ROW_OF_OTHER_SESSION = _ROW.where(recovery_t.c.session_id != sa.bindparam("session"))
_INSERT = recovery_t.insert()


DEFAULT_SCAN_BOUND = 100
DEFAULT_MAX_TRIES = 3


def reason_of(result: Result) -> str:
    """The quarantine reason category (names.QUARANTINE_REASONS) of a failed conversion: its lease ran
    out on the last allowed attempt (exhausted), its data is forged or corrupt (malformed), or its phase
    is not one recovery converts (invalid: only the defects quarantine for that)."""
    if isinstance(result, Fenced):
        return R.EXHAUSTED
    if isinstance(result, Malformed) and result.reason.startswith("phase "):
        return R.INVALID
    return R.MALFORMED


class RecoveryWorker(Actor):
    def __init__(self, db: Database, clock: Clock, owner_id: str, *, defects: Iterable[str] = (),
                 boundaries: Boundaries | None = None, lease_ticks: int = 1, grace_ticks: int = 0,
                 scan_bound: int = DEFAULT_SCAN_BOUND, max_tries: int = DEFAULT_MAX_TRIES,
                 fresh_share: int = DEFAULT_FRESH_SHARE):
        if scan_bound < 1:
            raise ValueError("scan_bound must be at least 1")
        if scan_bound >= 2:
            check_share(scan_bound, fresh_share)  # a window of several rows is planned: fresh claims keep a share
        self.fresh_share = fresh_share
        if max_tries < 1:
            raise ValueError("max_tries must be at least 1")
        self.max_tries = max_tries
        self.ctx = Context(db, clock, boundaries or Boundaries(), frozenset(defects), lease_ticks,
                           grace_ticks)
        self.owner_id = owner_id
        self.scan_bound = scan_bound
        self.claims = ClaimStore(self.ctx)
        self.publisher = Publisher(self.ctx, self.claims)
        self.inputs = InputStore(self.ctx)
        self.last: Result | None = None
        self.finished = "converted"  # what the last conversion did: converted, or cancelled (cancellation-owned)
        self.lose_ack = False  # the failpoint: the next committed conversion's acknowledgement is lost
        self.provider = None  # the outside world a re-run tool would touch (only the recovery-reruns defect)
        self.reset()
        super().__init__({
            IDLE: (Step(R.RECOVERY_SCAN, self.scan, self.window),),  # a scan of a window that holds a row
            SCANNED: (Step(R.RECOVERY_TAKEOVER, self.take),),  # a lost race is a step too: the worker is idle again
            CONVERTING: (Step(R.RECOVERY_RECONCILE, self.reconcile),),
            RECONCILED: (Step(R.RECOVERY_CONVERT, self.convert),),
            QUARANTINING: (Step(R.RECOVERY_QUARANTINE, self.quarantine),),
            RECONVERTING: (Step(R.RECOVERY_RECONVERT, self.reconvert),),
        })

    def reset(self) -> None:
        self.pc = IDLE
        self.session_id: str | None = None
        self.execution_id: int | None = None
        self.reason: str | None = None
        self.seen_phase: str | None = None  # the phase the takeover observed (evidence for a quarantine)
        self.seen: ClaimRow | None = None  # the row the scan saw, which the compare-and-swap compares on

    crash = reset  # Crash: the worker's memory is gone

    def record(self) -> tuple:
        return (self.pc, self.session_id, self.execution_id, self.seen_owner, self.why)

    @property
    def why(self) -> str:
        """The quarantine's reason category while quarantining (the twin's `rec[r].why`), else ""."""
        return self.reason.split(":", 1)[0] if self.pc == QUARANTINING and self.reason else ""

    @property
    def seen_owner(self) -> str:
        """The former owner the scan saw (the twin's `rec[r].seen`), while the CAS is pending."""
        return self.seen.owner_id if self.pc == SCANNED and self.seen is not None else ""

    @property
    def ident(self) -> Ident:
        return Ident(self.session_id, self.execution_id, self.owner_id)

    def _hit(self, boundary: str) -> None:
        self.ctx.boundaries.hit(boundary, worker=self.owner_id, session=self.session_id,
                                execution=self.execution_id, reason=self.reason)

    # ------------------------------------------------------------------ takeover

    def window(self) -> list[ClaimRow]:
        """The scan: the oldest expired, unquarantined claim; with a bound of several rows, the window
        `plan_batch` plans from the `scan_bound` oldest fresh claims (never taken over) and the
        `scan_bound` oldest retried ones, so retried poison claims never fill it, nor fresh ones."""
        now = self.ctx.now()
        with self.ctx.db.read() as conn:
            if self.scan_bound == 1 or self.ctx.has(R.SCAN_WINDOW_IGNORES_FRESH_SHARE):
                # a batch of one has no share to keep; the defect keeps none: the oldest rows, of either kind
                return self.claims.scan(conn, now, self.scan_bound)
            fresh = self.claims.scan(conn, now, self.scan_bound, retried=False)
            retried = self.claims.scan(conn, now, self.scan_bound, retried=True)
        return sorted(planned(self.ctx, fresh, retried, self.scan_bound, self.fresh_share),
                      key=lambda row: row.created_seq)

    def scan(self, session_id: str | None = None) -> Result:
        """RecoveryScan: read the window and remember the row to try (the given Session's, which must be
        in the window, or the oldest). A read: it commits nothing."""
        if self.pc != IDLE:
            return NotEnabled("worker is busy")
        rows = self.window()
        if session_id is not None:
            rows = [r for r in rows if r.session_id == session_id]
        if not rows:
            self.last = NotEnabled("no claim in the scan window")
            return self.last
        self.remember(rows[0])
        self.last = Ok(rows[0])
        return self.last

    def remember(self, seen: ClaimRow) -> None:
        """The scan's memory: the row of the window the worker will compare-and-swap on."""
        self.pc, self.session_id, self.execution_id, self.seen = SCANNED, seen.session_id, seen.execution_id, seen
        self._hit(R.B_RECOVERY_SCANNED)

    def takeover(self, session_id: str | None = None) -> Result:
        """RecoveryScan then RecoveryTakeover: the given Session's row (or the oldest) taken over."""
        scanned = self.scan(session_id)
        return self.take() if scanned else scanned

    def take(self, seen: ClaimRow | None = None) -> Result:
        """RecoveryTakeover: the CAS alone, on the row the scan saw (or `seen`, the production pass's
        row of its own window). A lost race changes nothing and leaves the worker idle."""
        if seen is not None and self.pc == IDLE:
            self.remember(seen)
        if self.pc != SCANNED:
            return NotEnabled("worker has not scanned")
        seen = self.seen
        now = self.ctx.now()
        result = self.ctx.db.atomic(lambda conn: self._cas(conn, seen, now), sessions=[seen.session_id])
        if not result:
            self.reset()
        return self._took(result)

    def _cas(self, conn, seen: ClaimRow, now: int) -> Result:
        """The compare-and-swap on one observed row: Ok(row) when this worker took it over."""
        if self.ctx.has(R.SCAN_QUARANTINES_CANCELLATION) and seen.phase in ("cancelling", "cancelled"):
            # the defect: cancellation-owned work is quarantined in place, never taken over
            result = self.claims.quarantine_in_place(conn, seen, now, f"{R.INVALID}: phase {seen.phase!r} at scan")
            return Ok(None) if result else result
        result = self.claims.takeover(conn, seen, self.owner_id, now)
        return Ok(seen) if result else result

    def _took(self, result: Result) -> Result:
        self.last = result
        if result and result.value is None:
            self.reset()  # quarantined in place (scan-quarantines-cancellation)
        elif result:
            row: ClaimRow = result.value
            self.pc, self.session_id, self.execution_id = CONVERTING, row.session_id, row.execution_id
            self.reason, self.seen_phase, self.seen = None, row.phase, None
            self._hit(R.B_RECOVERY_TAKEN_OVER)
        return result

    # ------------------------------------------------------------------ conversion

    def reconcile(self) -> Result:
        """RecoveryReconcile: between takeover and conversion, under this worker's own exact, live claim
        (the check, a read), the execution's hosted tools are reconciled: an external effect before any
        transaction (this implementation has no hosted tools: the step is the check and the span it opens).
        A worker whose lease is gone begins nothing and leaves the lost lease to its conversion."""
        if self.pc != CONVERTING:
            return NotEnabled("worker has not taken a claim over")
        now = self.ctx.now()
        with self.ctx.db.read() as conn:
            claim = self.claims.get(conn, self.session_id)
        held = claim is not None and claim.ident == self.ident and claim.live(now)
        self.pc = RECONCILED
        self.last = Ok(held)
        self._hit(R.B_RECOVERY_RECONCILING)
        return self.last

    def convert(self, lose_ack: bool | str = False) -> Result | str:
        """RecoveryConvert: convert in one transaction, or move to quarantining with a reason. With
        `lose_ack` (the harness's failpoint) the conversion of recovering work that would commit sees a
        connection error: True or COMMITTED, the transaction commits and its acknowledgement is lost
        (RecoveryConvertAckLost); NOT_COMMITTED, the connection is lost before COMMIT and nothing commits
        (RecoveryConvertFails). Either way the worker cannot tell which and is left reconverting."""
        if self.pc != RECONCILED:
            return NotEnabled("worker has not reconciled")
        self.lose_ack = COMMITTED if lose_ack is True else lose_ack
        try:
            result = self.ctx.db.atomic(self._convert_once, sessions=[self.session_id])
            if result and self.finished == "converted" and self.lose_ack:
                raise AckLost("connection lost after COMMIT")  # what the driver raises: it committed
        except (AckLost, CommitFailed) as lost:
            return self._ack_lost(lost)
        except TRANSIENT:
            raise  # the database refused the unit (busy, lock timeout, connection lost): rolled back whole;
            # the worker is still converting and retries it as a fresh unit: nothing is wrong with the row
        except Exception as exc:  # a bad row must not stop the worker: it is quarantined instead
            log.exception("conversion of %s failed", self.ident)
            result = Malformed(f"conversion raised {exc!r}")
        self.last = result
        if result:
            self.reset()
            if result.value is not None:
                self.publisher.notify(result.value)
            return result
        if isinstance(result, Released):
            log.info("conversion of %s released: %s", self.ident, result.reason)
            self.reset()
            return result
        self.pc, self.reason = QUARANTINING, f"{reason_of(result)}: {getattr(result, 'reason', type(result).__name__)}"
        self._hit(R.B_RECOVERY_CONVERT_FAILED)
        return result

    def _convert_once(self, conn) -> Result:
        """The conversion's transaction; the failpoint's NOT_COMMITTED outcome drops the connection before
        its COMMIT (the transaction rolls back whole)."""
        result = self._convert(conn)
        if result and self.finished == "converted" and self.lose_ack == NOT_COMMITTED:
            raise CommitFailed("connection lost before COMMIT")
        return result

    def _ack_lost(self, lost: ConnectionError) -> str:
        """The worker does not know whether its conversion committed: it keeps only its ids."""
        log.info("conversion of %s: %s; retrying with the same ids", self.ident, lost)
        committed = not isinstance(lost, CommitFailed)
        self.lose_ack = False
        self.pc, self.reason, self.seen_phase, self.seen = RECONVERTING, None, None, None
        self.last = Released("acknowledgement lost" if committed else "commit lost")
        if committed:
            self._hit(R.B_RECOVERY_CONVERTED)
        return R.RECOVERY_CONVERT_ACK_LOST if committed else R.RECOVERY_CONVERT_FAILS

    def continuation_of(self, attempt: int) -> str:
        """The continuation id the conversion's attempt (0 the first, 1 its retry) derives: from Session and
        execution alone (recovery-id.ts), unless the defect mints one per attempt."""
        s, e = self.session_id, self.execution_id
        if self.ctx.has(R.CONVERSION_RETRY_MINTS_NEW_IDS):
            return ids.minted_continuation_id(s, e, attempt)
        return ids.continuation_id(s, e)

    def reconvert(self) -> Result:
        """RecoveryReconvert: the retry after a lost acknowledgement or a lost COMMIT, one transaction; then idle."""
        if self.pc != RECONVERTING:
            return NotEnabled("worker is not retrying a conversion")
        result = self.ctx.db.atomic(self._reconvert, sessions=[self.session_id])
        self.last = result
        self.reset()
        if result and result.value is not None:
            self.publisher.notify(result.value)
        return result

    def _reconvert(self, conn) -> Result:
        """Its own committed work found (the row of its Session naming the continuation id it derives, and
        that continuation): nothing changes. Otherwise the conversion's writes are replayed, each keyed (the
        row by execution, the continuation by its id: a conflict is ignored) or fenced by the claim (the
        settling Step.Interrupted, the clear), so a claim no longer its own is never touched."""
        now = self.ctx.now()
        ident = self.ident
        cont = self.continuation_of(1)
        row = run(conn, _ROW_OF_SESSION, {"execution": ident.execution_id, "session": ident.session_id}).mappings().first()
        if row is not None and row["continuation_input_id"] == cont and self.inputs.get(conn, cont) is not None:
            return Ok(None)  # its own committed conversion: an idempotent retry changes nothing
        claim = self.claims.get(conn, ident.session_id)
        fenced = claim is not None and claim.ident == ident and claim.live(now) and claim.phase == "recovering"
        event = None
        if fenced:  # the first attempt did not commit: its fenced writes, as the conversion's
            self._settle_tool(conn, claim, rerun=self.ctx.has(R.RECOVERY_RERUNS_UNKNOWN_TOOL))
            skip = self.ctx.has(R.CONVERSION_LEAVES_ASSISTANT_OPEN) or self.ctx.has(R.RECONVERT_REPLAY_LEAVES_ASSISTANT_OPEN)
            event = self._interrupt_open(conn, claim, skip=skip)
        conn.execute(dialect_insert(conn, recovery_t).values(
            execution_id=ident.execution_id, session_id=ident.session_id, continuation_input_id=cont)
            .on_conflict_do_nothing())
        self.inputs.create_continuation(conn, ident.session_id, ident.execution_id, cont)  # a conflict: it exists
        if fenced:
            result = self.claims.clear(conn, ident, now, "recovering")
            if not result:
                raise Abort(result)
            record_history(conn, ident, "recovered", now)
        return Ok(event)

    def _convert(self, conn) -> Result:
        now = self.ctx.now()
        ident = self.ident
        claim = self.claims.get(conn, ident.session_id)
        if claim is None or claim.ident != ident or not claim.live(now):
            if claim is not None and claim.ident == ident and claim.recovery_error is None and (
                    claim.recovery_attempts < self.max_tries or self.ctx.has(R.RECOVERY_RETRIES_UNBOUNDED)):
                raise Abort(Released(f"lease lost after {claim.recovery_attempts} attempt(s) of {self.max_tries}"))
            raise Abort(Fenced(self.claims.why(conn, ident, now)))
        if claim.phase in ("cancelling", "cancelled") and not self.ctx.has(R.CANCELLATION_QUARANTINE_STRANDS):
            self.finished = "cancelled"
            return self._finish_cancellation(conn, claim, now)
        self.finished = "converted"
        if claim.phase not in ("recovering", "unknown") or not known_phase(self.seen_phase):
            if not known_phase(self.seen_phase):
                raise Abort(Malformed(f"unknown phase {self.seen_phase!r} (now {claim.phase!r})"))
            raise Abort(Malformed(f"phase {claim.phase!r}: only a running execution is recovered"))
        # another Session's row naming this execution is forged or corrupt; this Session's own is an earlier
        # attempt's keyed writes (a retry's replay after its lease expired), which this conversion completes
        keys = {"execution": ident.execution_id, "session": ident.session_id}
        rows = (_ROW_OF_SESSION if self.ctx.has(R.CROSS_SESSION_RECOVERY_COLLISION)
                else _ROW if self.ctx.has(R.CONVERSION_CONFLICTS_ON_OWN_ROW) else _ROW_OF_OTHER_SESSION)
        existing = run(conn, rows, keys).mappings().first()
        if existing is not None:
            raise Abort(Conflict(f"execution {ident.execution_id} already has a recovery row of session "
                                 f"{existing['session_id']}"))
        earlier = run(conn, _ROW_OF_SESSION, keys).first() is not None
        self._settle_tool(conn, claim, rerun=self.ctx.has(R.RECOVERY_RERUNS_UNKNOWN_TOOL))
        event = self._interrupt_open(conn, claim, skip=self.ctx.has(R.CONVERSION_LEAVES_ASSISTANT_OPEN))
        if not earlier:  # the first attempt's continuation id: the derived one, with the defect too
            self._insert_recovery_row(conn, ident, self.continuation_of(0))
        made = self.inputs.create_continuation(conn, ident.session_id, ident.execution_id)
        for result in (Ok() if earlier and isinstance(made, Conflict) else made,
                       self.claims.clear(conn, ident, now, "recovering") if claim.phase == "recovering"
                       else self.claims.clear_reconciled(conn, ident, now)):
            if not result:
                raise Abort(result)
        record_history(conn, ident, "recovered", now)
        return Ok(event)

    def _interrupt_open(self, conn, claim: ClaimRow, skip: bool = False) -> StepEvent | None:
        """Step.Interrupted, in this transaction, for the claim's assistant if it is open (read from the
        database, never from memory); a claim naming another execution's assistant is malformed."""
        ident, a = self.ident, claim.assistant_id
        if a is None:
            return None
        row = assistant_row(conn, a)
        if row is None or row["session_id"] != ident.session_id or row["execution_id"] != ident.execution_id:
            raise Abort(Malformed(f"claim names assistant {a}, which is not this execution's"))
        if row["completed"] or skip:
            return None
        event = StepEvent(ident.session_id, ident.execution_id, a, R.INTERRUPTED, self.owner_id)
        self.publisher.commit(conn, event, Fence(ident, claim.phase))
        return event

    def _settle_tool(self, conn, claim: ClaimRow, rerun: bool = False) -> None:
        """Every local tool call of the claim's Step whose outcome is not recorded is reconciled, each by its
        call index, in index order, in this transaction: Tool.Failed (its outcome is uncertain), never
        re-run. The recovery-reruns-unknown-tool defect runs the physical tool again and publishes its
        Tool.Success."""
        ident, a = self.ident, claim.assistant_id
        if a is None:
            return
        for call in open_calls(conn, a, self.ctx.has):
            if rerun:
                self.provider.run_tool(ident.session_id, ident.execution_id, self.owner_id, self.owner_id,
                                       self.ctx.now(), ids.assistant_step(a)[1], call)
            kind = R.TOOL_SUCCEEDED if rerun else R.TOOL_FAILED
            self.publisher.commit(conn, StepEvent(ident.session_id, ident.execution_id, a, kind, self.owner_id,
                                                  call), Fence(ident, claim.phase))

    def _finish_cancellation(self, conn, claim: ClaimRow, now: int) -> Result:
        """Expired cancellation-owned work: Step.Interrupted once for an open assistant (read from the
        database, never from memory), the execution recorded cancelled, the claim cleared; no recovery row
        and no continuation (CancelLeavesNoRecovery)."""
        ident = self.ident
        self._settle_tool(conn, claim)
        event = self._interrupt_open(conn, claim)
        result = self.claims.clear_cancellation(conn, ident, now, claim.phase)
        if not result:
            raise Abort(result)
        record_history(conn, ident, "cancelled", now)
        return Ok(event)

    def _insert_recovery_row(self, conn, ident: Ident, cont: str) -> None:
        values = dict(execution_id=ident.execution_id, session_id=ident.session_id, continuation_input_id=cont)
        if self.ctx.has(R.CROSS_SESSION_RECOVERY_COLLISION):
            conn.execute(dialect_insert(conn, recovery_t).values(**values).on_conflict_do_nothing())
            return  # the defect: the conflict (and the row count) is never looked at
        try:
            with guarded(conn):
                n = run(conn, _INSERT, values).rowcount
        except sa.exc.IntegrityError:
            n = 0
        if n != 1:
            raise Abort(Conflict(f"recovery row for execution {ident.execution_id} was not inserted"))

    # ------------------------------------------------------------------ quarantine

    def quarantine(self) -> Result:
        """RecoveryQuarantine: mark the exact claim this worker owns; the worker is free afterwards."""
        if self.pc != QUARANTINING:
            return NotEnabled("worker is not quarantining")
        now = self.ctx.now()
        reason = self.reason or "conversion failed"
        result = self.ctx.db.atomic(lambda conn: self.claims.quarantine(conn, self.ident, now, reason),
                                    sessions=[self.session_id])
        if not result:
            log.warning("quarantine of %s changed no row: %s", self.ident, result)
        self.last = result
        self.reset()
        return result

    # ------------------------------------------------------------------ lease and steps

    def heartbeat(self, session_id: str) -> Result:
        """Heartbeat while converting: renew the claim this worker took over (of `session_id`)."""
        if self.pc not in (CONVERTING, RECONCILED):
            return NotEnabled("worker is not converting")
        if session_id != self.session_id:
            return NotEnabled("not the Session this worker converts")
        now = self.ctx.now()

        def body(conn):
            claim = self.claims.get(conn, self.session_id)
            if claim is None or claim.ident != self.ident:
                return NotEnabled("the claim is not this worker's")
            if claim.lease_expires_at - now >= self.ctx.lease_ticks:
                return NotEnabled("lease is full")
            return self.claims.heartbeat(conn, claim, now)
        return self.ctx.db.atomic(body, sessions=[self.session_id])

    def step(self) -> str | None:
        """Take the enabled action (a takeover the oldest row); its name, or None. A scan that finds the
        window empty after all (another worker emptied it since `enabled()` read it) is no step."""
        action = super().step()
        return None if action == R.RECOVERY_SCAN and not self.last else action

    def unit(self, action: str, fn):
        """One atomic unit of the production pass (`run_once`), run. A harness that records each unit's commit
        as a step of its own wraps it (binding/stress/node.py); the units are the actions' own methods."""
        return fn()

    def run_once(self) -> list[Handled]:
        """One production pass over one scan window (impl/recovery_pass.py)."""
        return recovery_pass.run_once(self)

"""The execution claim: insert-only acquisition, fenced mutations, recovery's compare-and-swap.

Every mutation is one SQL statement whose WHERE clause is the whole fence (exact Session, execution,
owner, unexpired lease, and the phase it may move from); its row count decides the typed result. When
zero rows change, the row is read back only to name the reason. Methods take the caller's connection:
the caller's transaction is the atomic unit (all but `holds`, supervision's check, a read of its own).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import registry as R
from .context import Context
from .db import dialect_insert, guarded
from .prepared import run
from .results import Fenced, Lost, Malformed, Occupied, Ok, Result, Superseded
from .schema import PHASES, claim_t as T

# Ordinary phase moves: forward only. Recovery's running -> recovering happens only in takeover.
FORWARD = {"running": ("cancelling", "unknown"), "unknown": ("cancelling",), "cancelling": ("cancelled",)}


class Ident(NamedTuple):
    """The identity a writer holds a claim under."""
    session_id: str
    execution_id: int
    owner_id: str


@dataclass(frozen=True)
class ClaimRow:
    session_id: str
    execution_id: int
    owner_id: str
    lease_expires_at: int
    phase: str
    assistant_id: str | None
    recovery_error: str | None
    created_seq: int
    recovery_attempts: int = 0

    @property
    def ident(self) -> Ident:
        return Ident(self.session_id, self.execution_id, self.owner_id)

    def live(self, now: int) -> bool:
        return now < self.lease_expires_at


# The statements are built once, with bind parameters: building a SQLAlchemy expression per call cost
# more than running it. `_EXACT` is the identity part of every fence, `_LIVE` its lease part.
_P = sa.bindparam
_EXACT = sa.and_(T.c.session_id == _P("session"), T.c.execution_id == _P("execution"), T.c.owner_id == _P("owner"))
_LIVE = T.c.lease_expires_at > _P("now")
_AT = T.c.phase == _P("at")  # the phase the mutation may move from
_GET = sa.select(T).where(T.c.session_id == _P("session"))
_SCAN = sa.select(T).where(T.c.lease_expires_at + _P("grace") <= _P("now"), T.c.recovery_error.is_(None)) \
    .order_by(T.c.created_seq).limit(_P("bound"))
_SCANS = {None: _SCAN, True: _SCAN.where(T.c.recovery_attempts > 0), False: _SCAN.where(T.c.recovery_attempts == 0)}
_INSERT = T.insert()
_RENEW = sa.update(T).where(_EXACT, _LIVE).values(lease_expires_at=_P("until"))
_RENEW_ANY = sa.update(T).where(_EXACT).values(lease_expires_at=_P("until"))  # renew-after-expiry
_CHECK = sa.update(T).where(_EXACT, _LIVE, _AT).values(owner_id=T.c.owner_id)
_ATTACH = sa.update(T).where(_EXACT, _LIVE, _AT).values(assistant_id=_P("assistant"))
_ADVANCE = sa.update(T).where(_EXACT, _LIVE, _AT).values(phase=_P("to"))
_CLEAR = sa.delete(T).where(_EXACT, _LIVE, _AT)
_ATTEMPT = T.c.recovery_attempts + 1
_TAKEOVER = sa.update(T).where(_EXACT, T.c.lease_expires_at + _P("grace") <= _P("now"), T.c.recovery_error.is_(None)).values(
    owner_id=_P("taker"), lease_expires_at=_P("until"), recovery_attempts=_ATTEMPT,
    phase=sa.case((T.c.phase == "running", "recovering"), (T.c.phase.in_(PHASES), T.c.phase), else_="unknown"))
_TAKEOVER_ANY = sa.update(T).where(_EXACT, T.c.lease_expires_at + _P("grace") <= _P("now"), T.c.recovery_error.is_(None)).values(
    owner_id=_P("taker"), lease_expires_at=_P("until"), recovery_attempts=_ATTEMPT,
    phase="recovering")  # takeover-overwrites-phase
_TAKEOVER_TRUSTING = sa.update(T).where(
    T.c.session_id == _P("session"), T.c.execution_id == _P("execution"), T.c.recovery_error.is_(None)).values(
    owner_id=_P("taker"), lease_expires_at=_P("until"), recovery_attempts=_ATTEMPT,
    phase=sa.case((T.c.phase == "running", "recovering"), (T.c.phase.in_(PHASES), T.c.phase),
                  else_="unknown"))  # takeover-trusts-scan
_QUARANTINE_IN_PLACE = sa.update(T).where(_EXACT, T.c.lease_expires_at + _P("grace") <= _P("now"),
                                          T.c.recovery_error.is_(None)).values(
    recovery_error=_P("reason"))  # scan-quarantines-cancellation
_QUARANTINE = sa.update(T).where(_EXACT, T.c.recovery_error.is_(None)).values(recovery_error=_P("reason"))
_QUARANTINE_LIVE = sa.update(T).where(_EXACT, T.c.recovery_error.is_(None), _LIVE).values(
    recovery_error=_P("reason"))  # silent-quarantine-noop


def _fence(ident: Ident, now: int, **more) -> dict:
    return dict(session=ident.session_id, execution=ident.execution_id, owner=ident.owner_id, now=now, **more)


def _typed(method):
    """A mutation that a constraint refuses (e.g. an UPDATE of a corrupt row that touches a column its
    CHECK names) returns Malformed instead of raising; the savepoint keeps the caller's transaction usable."""
    @functools.wraps(method)
    def wrapper(self, conn, *args, **kwargs):
        try:
            with guarded(conn):
                return method(self, conn, *args, **kwargs)
        except sa.exc.IntegrityError as exc:
            return Malformed(f"claim row refused by a constraint: {exc.orig}")
    return wrapper


class ClaimStore:
    def __init__(self, ctx: Context):
        self.ctx = ctx

    # ------------------------------------------------------------------ reads

    def get(self, conn: Connection, session_id: str) -> ClaimRow | None:
        row = run(conn, _GET, {"session": session_id}).mappings().first()
        return ClaimRow(**row) if row else None

    def occupied(self, conn: Connection, session_id: str, now: int) -> bool:
        """Acquire would be refused: the Session has a claim (with acquire-overwrites-expired: a live one)."""
        c = self.get(conn, session_id)
        if c is None:
            return False
        return not self.ctx.has(R.ACQUIRE_OVERWRITES_EXPIRED) or c.lease_expires_at > now

    def holds(self, ident: Ident) -> bool:
        """Supervision's check, in a read of its own: the Session's claim is still `ident`'s exact, live
        claim."""
        now = self.ctx.now()
        with self.ctx.db.read() as conn:
            claim = self.get(conn, ident.session_id)
        return claim is not None and claim.ident == ident and claim.live(now)

    def scan(self, conn: Connection, now: int, bound: int, retried: bool | None = None) -> list[ClaimRow]:
        """Recovery's window: the `bound` oldest expired, unquarantined claims (with `retried`, only those
        taken over before, or only those never taken over: the fresh ones)."""
        stmt = _SCANS[retried]
        rows = run(conn, stmt, {"now": now, "bound": bound, "grace": self.ctx.grace_ticks}).mappings()
        return [ClaimRow(**r) for r in rows]

    def why(self, conn: Connection, ident: Ident, now: int, phases: tuple[str, ...] | None = None) -> str:
        """Name the first part of the fence that fails (used only after a zero-row mutation)."""
        c = self.get(conn, ident.session_id)
        if c is None:
            return "no claim"
        if c.execution_id != ident.execution_id:
            return f"execution {c.execution_id} != {ident.execution_id}"
        if c.owner_id != ident.owner_id:
            return f"owner {c.owner_id} != {ident.owner_id}"
        if not c.live(now):
            return "lease expired"
        if phases is not None and c.phase not in phases:
            return f"phase {c.phase} not in {'/'.join(phases)}"
        return "row changed"

    def _fenced(self, conn, ident: Ident, now: int, rowcount: int, phases=None) -> Result:
        if rowcount == 1:
            return Ok()
        return Fenced(self.why(conn, ident, now, phases))

    # ------------------------------------------------------------------ the owner's mutations

    def acquire(self, conn: Connection, ident: Ident, now: int, created_seq: int) -> Result:
        """Insert-only: an existing claim, live or expired, means Occupied (the caller rolls back)."""
        values = dict(session_id=ident.session_id, execution_id=ident.execution_id, owner_id=ident.owner_id,
                      lease_expires_at=self.ctx.lease_from(now), phase="running", assistant_id=None,
                      recovery_error=None, created_seq=created_seq, recovery_attempts=0)
        if self.ctx.has(R.ACQUIRE_OVERWRITES_EXPIRED):
            stmt = dialect_insert(conn, T).values(**values)
            stmt = stmt.on_conflict_do_update(index_elements=[T.c.session_id], set_=values,
                                              where=T.c.lease_expires_at <= now)
            return Ok() if conn.execute(stmt).rowcount == 1 else Occupied(ident.session_id)
        try:
            with guarded(conn):
                run(conn, _INSERT, values)
        except sa.exc.IntegrityError:
            if self.get(conn, ident.session_id) is not None:
                return Occupied(ident.session_id)
            raise  # another constraint (e.g. a reused execution id) is a bug, not contention
        return Ok()

    @_typed
    def renew(self, conn: Connection, ident: Ident, now: int, until: int | None = None) -> Result:
        """Extend the exact, unexpired lease to `until` (a fresh lease from now by default). Renewal never
        moves a phase."""
        stmt = _RENEW_ANY if self.ctx.has(R.RENEW_AFTER_EXPIRY) else _RENEW
        until = self.ctx.lease_from(now) if until is None else until
        n = run(conn, stmt, _fence(ident, now, until=until)).rowcount
        return self._fenced(conn, ident, now, n)

    def heartbeat(self, conn: Connection, claim: ClaimRow, now: int) -> Result:
        """A heartbeat's renewal of `claim` (read in the caller's transaction): a fresh lease from now (the
        heartbeat-extends-lease defect adds a lease to what remains of it)."""
        if self.ctx.has(R.HEARTBEAT_EXTENDS_LEASE):
            return self.renew(conn, claim.ident, now, until=claim.lease_expires_at + self.ctx.lease_ticks)
        return self.renew(conn, claim.ident, now)

    @_typed
    def check(self, conn: Connection, ident: Ident, now: int, phase: str) -> Result:
        """The fence alone, as a locking no-op write (commit hooks of events that change no claim)."""
        n = run(conn, _CHECK, _fence(ident, now, at=phase)).rowcount
        return self._fenced(conn, ident, now, n, (phase,))

    @_typed
    def attach_assistant(self, conn: Connection, ident: Ident, now: int, phase: str, assistant_id: str) -> Result:
        """Step.Started's commit hook: the claim names its assistant (fenced)."""
        n = run(conn, _ATTACH, _fence(ident, now, at=phase, assistant=assistant_id)).rowcount
        return self._fenced(conn, ident, now, n, (phase,))

    @_typed
    def attach_assistant_unfenced(self, conn: Connection, session_id: str, execution_id: int,
                                  assistant_id: str) -> Result:
        """The unfenced-step-publication variant: matches only Session and execution, ignores the count."""
        conn.execute(sa.update(T).where(T.c.session_id == session_id, T.c.execution_id == execution_id)
                     .values(assistant_id=assistant_id))
        return Ok()

    @_typed
    def advance_phase(self, conn: Connection, ident: Ident, now: int, frm: str, to: str) -> Result:
        """Move the phase forward (running -> cancelling -> cancelled), never backwards (fenced)."""
        if to not in FORWARD.get(frm, ()):
            raise ValueError(f"phase {frm} -> {to} is not a forward move")
        n = run(conn, _ADVANCE, _fence(ident, now, at=frm, to=to)).rowcount
        return self._fenced(conn, ident, now, n, (frm,))

    @_typed
    def clear(self, conn: Connection, ident: Ident, now: int, phase: str) -> Result:
        """Remove the exact, settled claim: `running` after a terminal Step, `cancelled`, or `recovering`
        once converted."""
        if phase not in ("running", "cancelled", "recovering"):
            raise ValueError(f"a claim in phase {phase} is never cleared")
        n = run(conn, _CLEAR, _fence(ident, now, at=phase)).rowcount
        return self._fenced(conn, ident, now, n, (phase,))

    @_typed
    def clear_reconciled(self, conn: Connection, ident: Ident, now: int) -> Result:
        """Recovery converting `unknown` work it took over, its tool call reconciled and its assistant
        settled in the same transaction: remove its exact claim (fenced). Nothing else clears `unknown`."""
        n = run(conn, _CLEAR, _fence(ident, now, at="unknown")).rowcount
        return self._fenced(conn, ident, now, n, ("unknown",))

    @_typed
    def clear_cancellation(self, conn: Connection, ident: Ident, now: int, phase: str) -> Result:
        """Recovery finishing an expired cancellation it took over: remove its exact claim, `cancelling`
        (its Step.Interrupted in the same transaction) or `cancelled` (fenced, like every removal)."""
        if phase not in ("cancelling", "cancelled"):
            raise ValueError(f"phase {phase} is not cancellation-owned")
        n = run(conn, _CLEAR, _fence(ident, now, at=phase)).rowcount
        return self._fenced(conn, ident, now, n, (phase,))

    # ------------------------------------------------------------------ recovery

    @_typed
    def takeover(self, conn: Connection, seen: ClaimRow, owner_id: str, now: int) -> Result:
        """Compare-and-swap an expired, unquarantined claim to a recovery worker; running -> recovering.
        A phase string outside PHASES (a corrupt row) becomes `unknown`, so the row can be quarantined."""
        stmt = _TAKEOVER_ANY if self.ctx.has(R.TAKEOVER_OVERWRITES_PHASE) else _TAKEOVER
        if self.ctx.has(R.TAKEOVER_TRUSTS_SCAN):
            stmt = _TAKEOVER_TRUSTING
        n = run(conn, stmt, _fence(seen.ident, now, taker=owner_id, until=self.ctx.lease_from(now),
                                      grace=self.ctx.grace_ticks)).rowcount
        if n == 1:
            return Ok()
        c = self.get(conn, seen.session_id)
        if c is None:
            return Lost("no claim")
        if c.ident != seen.ident:
            return Lost(f"claim is now {tuple(c.ident)}")
        if c.live(now):
            return Lost("lease live")
        if c.lease_expires_at + self.ctx.grace_ticks > now:
            return Lost("in grace")
        return Lost("quarantined")

    @_typed
    def quarantine_in_place(self, conn: Connection, seen: ClaimRow, now: int, reason: str) -> Result:
        """The scan-quarantines-cancellation defect: mark an expired claim quarantined without taking
        it over, under its former owner's identity."""
        n = run(conn, _QUARANTINE_IN_PLACE, _fence(seen.ident, now, reason=reason,
                                                        grace=self.ctx.grace_ticks)).rowcount
        return Ok() if n == 1 else Lost("row changed")

    @_typed
    def quarantine(self, conn: Connection, ident: Ident, now: int, reason: str) -> Result:
        """Mark the exact claim this worker owns. Exactly one row must change; zero rows means a
        confirmed successor owns it (or it is already quarantined): reported, never ignored."""
        if self.ctx.has(R.SILENT_QUARANTINE_NOOP):
            run(conn, _QUARANTINE_LIVE, _fence(ident, now, reason=reason))
            return Ok()  # the defect: the row count is never looked at
        n = run(conn, _QUARANTINE, _fence(ident, now, reason=reason)).rowcount
        if n == 1:
            return Ok()
        c = self.get(conn, ident.session_id)
        if c is not None and c.ident == ident:
            return Superseded("already quarantined")
        return Superseded("no claim" if c is None else f"claim is now {tuple(c.ident)}")


def known_phase(phase: str) -> bool:
    return phase in PHASES

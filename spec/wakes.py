"""The twin's wake-scan actions (TLA+ section "Wake scans"): wake rows, the batch planned as
impl/wakes.py's plan_batch plans it, its compare-and-set reservations (with several wakers, each waker's
read and reservation), what a woken redrive does, and the two action properties of the scans.

Apart from spec.model only to keep that module readable; spec.model re-exports them. A row is named by
its number w (1-based, oldest first), stored at `st.wakes[w - 1]`.
"""

from __future__ import annotations

from .config import Config
from .conversion import _promote_checked
from .state import WAKE_IDLE, Plan, State, Wake, _acquire, _put, in_order
from .wake_plan import fresh_row, new_round, retried_row, rotate, wake_plan


def waker_ids(cfg: Config) -> range:
    """TLA+ WakerIds: the wakers whose read and reservation are two actions (none with one waker)."""
    return range(1, cfg.wakers + 1) if cfg.wakers > 1 else range(0)


def WakeArrive(cfg, st, w):
    """Fresh work arrives: row w is inserted with counter 0 (untied rows only)."""
    if cfg.wakes_tied or st.wakes[w - 1].work:
        return None
    return st._replace(wakes=_put(st.wakes, w - 1, Wake(True, 0, "", False)))


def WakeScan(cfg, st):
    """One transaction: plan the batch as plan_batch does and reserve each planned row (its counter
    rotates by compare-and-set; it is turned: woken in this round). A new round of retries first clears
    the waiting retried rows' turns."""
    if cfg.wakes_tied:
        return None
    fresh, again = wake_plan(cfg, st)
    if not fresh and not again:
        return None
    wakes = list(st.wakes)
    if cfg.hooks.retry_rounds(cfg, st) and new_round(cfg, st):
        for w in range(1, cfg.wake_rows + 1):
            if retried_row(st, w):
                wakes[w - 1] = wakes[w - 1]._replace(turned=False)
    for rows, kind in ((fresh, "fresh"), (again, "retry")):
        for w in rows:
            x = wakes[w - 1]
            wakes[w - 1] = x._replace(tries=rotate(cfg, x.tries), woken=kind, turned=True)
    return st._replace(wakes=tuple(wakes))


def WakeScanQueue(cfg, st, w):
    """Tied: the scan of row w's kind's queue, a transaction of its own (one kind's WakeQueue.scan); the queue holds
    that row alone, so its plan is the row, fresh or retried, reserved as WakeScan reserves."""
    x = st.wakes[w - 1]
    if not cfg.wakes_tied or not x.work or x.woken:  # the row waits unreserved: fresh or retried
        return None
    woken = "fresh" if x.tries == 0 else "retry"
    return st._replace(wakes=_put(st.wakes, w - 1, x._replace(tries=rotate(cfg, x.tries), woken=woken, turned=True)))


def WakeRead(cfg, st, k):
    """Several wakers: waker k's read, one transaction. It plans the batch as WakeScan does (a new round
    clears the waiting retried rows' turns) and keeps the plan, each row with the counter it observed and
    its slot kind, in its memory."""
    if st.waker[k - 1]:
        return None
    fresh, again = wake_plan(cfg, st)
    if not fresh and not again:
        return None
    plan = frozenset(Plan(w, st.wakes[w - 1].tries, kind) for rows, kind in ((fresh, "fresh"), (again, "retry"))
                     for w in rows)
    wakes = st.wakes
    if cfg.hooks.retry_rounds(cfg, st) and new_round(cfg, st):
        wakes = tuple(x._replace(turned=False) if retried_row(st, w) else x for w, x in enumerate(wakes, 1))
    return st._replace(wakes=wakes, waker=_put(st.waker, k - 1, plan))


def WakeReserve(cfg, st, k):
    """Waker k's reservation, one transaction: each planned row's compare-and-set on the counter it observed
    (hook ReserveMatches); the rows that match are reserved (counter rotated, turned), the others are lost
    to this waker. Its memory is emptied."""
    plan = st.waker[k - 1]
    if not plan:
        return None
    wakes = list(st.wakes)
    for p in plan:
        if cfg.hooks.reserve_matches(cfg, st, p):
            x = wakes[p.row - 1]
            wakes[p.row - 1] = x._replace(tries=rotate(cfg, x.tries), woken=p.slot, turned=True)
    return st._replace(wakes=tuple(wakes), waker=_put(st.waker, k - 1, frozenset()))


def WakeServe(cfg, st, w):
    """The woken redrive takes the work: the row is removed (untied rows only)."""
    if cfg.wakes_tied or st.wakes[w - 1].woken == "":
        return None
    return st._replace(wakes=_put(st.wakes, w - 1, WAKE_IDLE))


def WakeLost(cfg, st, w):
    """The woken redrive takes nothing: the reservation lapses, the row waits as a retry."""
    x = st.wakes[w - 1]
    if x.woken == "":
        return None
    if cfg.wakes_tied and any(wake_takes(cfg, st, n, w, i) for n in range(len(cfg.nodes)) for i in st.inputs):
        return None
    return st._replace(wakes=_put(st.wakes, w - 1, x._replace(woken="")))


# ---------------------------------------------------------------- tied wake rows (WakesTied)

def wake_takes(cfg, st, n, w, i) -> bool:
    """TLA+ WakeTakes: row w's woken redrive on node n could take input i now."""
    return (WakeAcquire if w == 1 else WakePromote)(cfg, st, n, w, i) is not None


def wake_work(cfg, st, w) -> bool:
    """TLA+ WakeWork, the syncer's read (InputStore.sessions_to_wake): the Session is unclaimed and row w's
    kind has work waiting (1: an input ordinary selection takes; 2: a continuation recovery owns)."""
    if st.claim[0].phase != "none":
        return False
    for i in st.inputs:
        if i.sess != cfg.sessions[0] or i.state != "pending":
            continue
        if (cfg.hooks.ordinary_selects(cfg, st, i) if w == 1
                else i.kind == "cont" and cfg.hooks.promotion_owned(cfg, st, i)):
            return True
    return False


def WakeSync(cfg, st, w):
    """Tied: the wake syncer inserts row w while its kind has work waiting and the row is absent."""
    if not cfg.wakes_tied or st.wakes[w - 1].work or not wake_work(cfg, st, w):
        return None
    return st._replace(wakes=_put(st.wakes, w - 1, Wake(True, 0, "", False)))


def _served(st, nxt, w):
    return None if nxt is None else nxt._replace(wakes=_put(nxt.wakes, w - 1, WAKE_IDLE))


def WakeAcquire(cfg, st, n, w, i):
    """Tied: the woken ordinary wake (row 1) acquires input i, what ordinary selection picks (WakeSelects, in
    order), removing its row in the acquisition's transaction."""
    if not (cfg.wakes_tied and w == 1 and st.wakes[0].woken != "" and i.sess == cfg.sessions[0]
            and i.state == "pending" and cfg.hooks.wake_selects(cfg, st, i) and in_order(cfg, st, i)):
        return None
    return _served(st, _acquire(cfg, st, n, i, ordinary=True), w)


def WakePromote(cfg, st, n, w, i):
    """Tied: the woken recovery wake (row 2) promotes the Session's continuation i exactly (PromotionOwned),
    removing its row in the promotion's transaction."""
    if not (cfg.wakes_tied and w == 2 and st.wakes[1].woken != "" and i.sess == cfg.sessions[0]
            and i.state == "pending" and i.kind == "cont" and cfg.hooks.promotion_owned(cfg, st, i)):
        return None
    return _served(st, _promote_checked(cfg, st, n, i), w)


def emit_wakes(cfg: Config, st: State, emit) -> None:
    """spec.model.successors' wake-scan instances, in a fixed order."""
    for w in range(1, cfg.wake_rows + 1):
        emit("WakeArrive", (w,), WakeArrive(cfg, st, w))
    if cfg.wakers <= 1:
        emit("WakeScan", (), WakeScan(cfg, st))
    for k in waker_ids(cfg):
        emit("WakeRead", (k,), WakeRead(cfg, st, k))
        emit("WakeReserve", (k,), WakeReserve(cfg, st, k))
    for w in range(1, cfg.wake_rows + 1):
        emit("WakeServe", (w,), WakeServe(cfg, st, w))
        emit("WakeLost", (w,), WakeLost(cfg, st, w))
    if cfg.wakes_tied:
        for w in range(1, cfg.wake_rows + 1):
            emit("WakeSync", (w,), WakeSync(cfg, st, w))
            emit("WakeScanQueue", (w,), WakeScanQueue(cfg, st, w))
        for n, node in enumerate(cfg.nodes):
            for i in sorted(st.inputs):
                emit("WakeAcquire", (node, 1, i), WakeAcquire(cfg, st, n, 1, i))
                emit("WakePromote", (node, 2, i), WakePromote(cfg, st, n, 2, i))


# ---------------------------------------------------------------- the action properties (spec.invariants)

def WakePlanShared(cfg: Config, st: State, nx: State) -> bool:
    """A wake scan with fresh and retried rows waiting (in the queue it read) reserves at least one of each;
    with several wakers,
    a read with both waiting plans at least one of each (a reservation may lose rows to another waker)."""
    rows = range(1, cfg.wake_rows + 1)
    if cfg.wakers > 1:
        for plan, after in zip(st.waker, nx.waker):
            if plan or not after:
                continue
            if any(fresh_row(st, w) for w in rows) and not any(p.slot == "fresh" for p in after):
                return False
            if any(retried_row(st, w) for w in rows) and not any(p.slot == "retry" for p in after):
                return False
        return True
    woke = [w for w, (x, y) in enumerate(zip(st.wakes, nx.wakes), 1) if x.woken == "" and y.woken != ""]
    if not woke:
        return True
    if cfg.wakes_tied:  # the scan read its kind's queue: the woken row alone
        rows = woke
    if any(fresh_row(st, w) for w in rows) and not any(nx.wakes[w - 1].woken == "fresh" for w in woke):
        return False
    return not (any(retried_row(st, w) for w in rows) and not any(nx.wakes[w - 1].woken == "retry" for w in woke))


def ReservationsExclusive(cfg: Config, st: State, nx: State) -> bool:
    """A waker's reservation takes only rows no waker holds, each at the counter this waker observed when
    it read, and with the plan its read kept (a memory goes from none to a plan or back; TLA+
    ReservationsExclusiveStep; stated from the state, not from the hook ReserveMatches). And whoever scans:
    only a row with work is reserved, and a reserved row keeps its reservation until it lapses or is served."""
    for x, y in zip(st.wakes, nx.wakes):
        if y.woken and not y.work or x.woken and y.woken and y != x:
            return False
    for plan, after in zip(st.waker, nx.waker):
        if plan and after and plan != after:  # the plan a reservation uses is the one its read kept
            return False
        if not plan or after:
            continue
        for w, (x, y) in enumerate(zip(st.wakes, nx.wakes), 1):
            if y != x and y.woken != "":
                if x.woken != "" or not any(p.row == w and p.tries == x.tries for p in plan):
                    return False
    return True

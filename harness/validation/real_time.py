"""Real time in the validation search (docs/history.md, "Real time"): each line is judged at its own process's
clock reading while the twin keeps one clock, held at the lowest reading of the lines still to come
(`floors`). A line read later than that clock is seen from its reading (`view_tick`: only its process's own
actors hold the clock back) and its successor held back (`held_back`); another process's recovery scan, a
read eligible only at that process's own later reading, is taken from its next reading (`own_reading_scans`)."""

from __future__ import annotations

from spec import model as M
from spec.state import _put, _ticking

from harness.validation.history import Line


def floors(lines: list[Line]) -> list[int | None]:
    """For each line, the lowest clock reading among it and the lines after it (None: no reading there):
    the clock the frontier is held at after it, so that every later reading is at or after it."""
    out: list[int | None] = [None] * len(lines)
    low = None
    for k in range(len(lines) - 1, -1, -1):
        now = lines[k].now
        if now is not None:
            low = now if low is None else min(low, now)
        out[k] = low
    return out


def own_reading_scans(search: Search, frontier: set, held: int, ahead: dict, lines: list[Line]) -> tuple[set, dict]:
    """`frontier` with each recovery scan (a read, no commit) that a process's next line records in its
    memory (`scanned`), taken at a reading of that process's own up to that line's, held back at the
    frontier's clock: a scan eligible only at its own process's later reading, placed before another worker's
    takeover ordered ahead of its own line (docs/history.md, "Real time"). Only the worker's memory changes;
    the takeover that follows re-checks the lease at its own reading. Also the workers whose memory those
    lines record, with the Session of the scan recorded (None: no scan): the search takes no other scan of
    theirs (which keeps the other processes' unrecorded scans from multiplying the frontier; a restriction,
    never an admission), and takes the recorded one also after the worker's own silent steps (a conversion
    that lost its lease, released). `ahead` (`worker_readings`): each worker's nearest such line."""
    cfg, out, placed = search.cfg, set(frontier), {}

    def cap(w):  # beyond it every lease has run down (a lease held back runs longer than Lease, `held_back`)
        return search.tick_cap + max((max(0, c.ttl - cfg.lease) for c in w.claim), default=0)
    for who, (now, j, _process) in ahead.items():
        mem = lines[j].memory
        rec = mem.rec[who]
        placed[who] = rec.sess if rec.pc == "scanned" else None
        if rec.pc != "scanned":
            continue
        r = cfg.recoverers.index(who)
        for w in frontier:
            if w.rec[r].pc == "idle":
                c = w.claim[cfg.sessions.index(rec.sess)]  # what a scan records, the same at every tick:
                if _rec_differs(cfg, w._replace(rec=_put(w.rec, r, M.Rec("scanned", rec.sess, c.exec, c.owner))),
                                mem):  # a line ahead names a claim not made yet: no tick to try
                    continue
                x = scanned_by(cfg, w, r, rec.sess, min(max(0, now - held), cap(w)))
                if x is not None and not _rec_differs(cfg, x, mem):
                    out.add(w._replace(rec=w.rec[:r] + (x.rec[r],) + w.rec[r + 1:]))
    return out, placed


def scanned_by(cfg: M.Config, st: M.State, r: int, sess: str, d: int) -> M.State | None:
    """Worker r's scan of `sess` at the first of `d` ticks after `st`'s clock at which the twin allows it (the
    leases run down; nothing else moves): the scan records the claim's identity, the same at any tick."""
    for t in range(d + 1):
        nxt = M.RecoveryScan(cfg, st, r, sess)
        if nxt is not None:
            return nxt
        st = st._replace(claim=tuple(c._replace(ttl=c.ttl - 1) if _ticking(cfg, c) else c for c in st.claim))
    return None


def _rec_differs(cfg: M.Config, st: M.State, memory) -> bool:
    """Whether a worker's recorded memory (at its process's next line) differs from `st`'s (the search keeps
    only the scans that line can follow from: a restriction, never an admission)."""
    return any(v is not None and v != getattr(st.rec[cfg.recoverers.index(who)], f)
               for who, rec in memory.rec.items() for f in M.Rec._fields for v in [getattr(rec, f, None)])


def worker_readings(lines: list[Line]) -> list[dict]:
    """For each line, each recovery worker's nearest memory ahead: worker -> (reading, index, process) of the
    next line with a clock reading, at or after it, of a process whose next such line it is and that records
    the worker's memory. One entry a worker, not one a process: a stress history's processes are node
    incarnations (~400 in 10^5 lines), and a line that went through every later one cost their number."""
    out: list[dict] = [{}] * len(lines)
    cur: dict = {}
    for k in range(len(lines) - 1, -1, -1):
        line = lines[k]
        if line.now is not None:
            recs = (line.memory.rec or {}) if line.memory is not None else {}
            # this process's next line is k now: what a later line of it recorded no longer counts
            kept = {w: v for w, v in cur.items() if v[2] != line.process or w in recs}
            if recs or len(kept) != len(cur):
                cur = {**kept, **{w: (line.now, k, line.process) for w in recs}}
        out[k] = cur
    return out


_NEW = tuple.__new__  # a namedtuple made without _make's checks: a tick is most of a lazy search's steps
assert M.State._fields[0] == "claim" and M.Claim._fields[2] == "ttl"


def run_down(cfg: M.Config, claims: tuple) -> tuple | None:
    """The claims one tick on: each lease that still runs down (spec `_ticking`) one tick shorter; None when
    none runs down."""
    floor, out, moved = -cfg.eff_grace, [], False
    for c in claims:
        if c[3] != "none" and c[2] > floor:
            c = _NEW(M.Claim, (c[0], c[1], c[2] - 1, *c[3:]))
            moved = True
        out.append(c)
    return tuple(out) if moved else None


def view_tick(cfg: M.Config, st: M.State, nodes) -> M.State | None:
    """A tick seen by one process: every lease runs down, and only that process's own actors hold the clock
    (its supervision overdue, TimelyDispatch between its renewal and its dispatch)."""
    claims = run_down(cfg, st.claim)
    if claims is None:
        return None
    for n in nodes:
        r = st.run[n]
        if _overdue_by_own_clock(cfg, st, n):
            return None
        if cfg.timely_dispatch and r.pc in ("renewed", "tool_started"):
            c = st.claim[M.si(cfg, r.sess)]
            if c.exec == r.exec and c.ttl == 1:
                return None
    return _NEW(M.State, (claims, *st[1:]))


def _overdue_by_own_clock(cfg: M.Config, st: M.State, n: int) -> bool:
    """Node n's supervision is overdue by its own clock (spec `overdue`, less one case): its lease of a claim
    still of its identity ran out Lag ticks ago. A claim another process changed (a takeover at that
    process's later reading, held back to the frontier's clock) does not hold this process's clock: that lease
    ran out at no reading of this process's, and its next line is judged at its own reading."""
    r, f = st.run[n], st.fin[n]

    def own(sess, e, owner):
        c = st.claim[M.si(cfg, sess)]
        return c.exec == e and c.owner == owner and M.lag_of(cfg, st, sess, e, owner) + 1 >= cfg.supervision_lag
    return ((M.run_stale(cfg, st, n) and own(r.sess, r.exec, cfg.nodes[n]))
            or (M.fin_stale(cfg, st, n) and own(f.sess, f.exec, f.owner)))


def committers(cfg: M.Config, line: Line) -> tuple[frozenset, frozenset, frozenset]:
    """The committing process's actors (node indexes for `run` and `fin`, worker indexes for `rec`): those
    its recorded memory names, else the line's actor."""
    if line.memory is not None:
        mem = line.memory
        return (frozenset(cfg.nodes.index(n) for n in mem.run), frozenset(cfg.nodes.index(n) for n in mem.fin),
                frozenset(cfg.recoverers.index(r) for r in mem.rec))
    actor = line.commit.actor
    node = frozenset([cfg.nodes.index(actor)]) if actor in cfg.nodes else frozenset()
    rec = frozenset([cfg.recoverers.index(actor)]) if actor in cfg.recoverers else frozenset()
    return node, node, rec


def held_back(cfg: M.Config, w: M.State, x: M.State, y: M.State, d: int, mine) -> M.State:
    """`y` (the step's successor at the line's reading, `d` ticks after `w`'s clock) held at `w`'s clock: a
    claim the step left as it was is `w`'s; a claim whose lease the step did not write keeps `w`'s ttl; a
    lease the step wrote runs `d` ticks longer from the earlier clock (it was written at the later reading).
    Only the committing process's actors keep what they did in those `d` ticks; the others' memory is
    `w`'s (the later reading was this process's, not theirs: a paused node is not supervised by it)."""
    claims = []
    for cw, cx, cy in zip(w.claim, x.claim, y.claim):
        if cy == cx:
            claims.append(cw)
        elif cy == M.NO_CLAIM or cy.ttl == cx.ttl:
            claims.append(cy if cy == M.NO_CLAIM else cy._replace(ttl=cw.ttl))
        else:
            claims.append(cy._replace(ttl=cy.ttl + d))
    run, fin, rec = mine
    return y._replace(claim=tuple(claims),
                      run=tuple(b if k in run else a for k, (a, b) in enumerate(zip(w.run, y.run))),
                      fin=tuple(b if k in fin else a for k, (a, b) in enumerate(zip(w.fin, y.fin))),
                      rec=tuple(b if k in rec else a for k, (a, b) in enumerate(zip(w.rec, y.rec))))


def clock_holders(cfg: M.Config, st: M.State) -> frozenset:
    """The actors (names) whose memory holds the held clock's next tick (`held_tick`): a node whose runner must
    dispatch first (TimelyDispatch), whose supervision is overdue by its own clock, or whose actor works on a
    lease one tick from running out (spec `pausing`, without the pause fault), and such a worker. The lazy
    round that takes their steps beside the committing process's own (judge.py) takes a subset of the steps
    the whole search takes."""
    out = set()
    for n, node in enumerate(cfg.nodes):
        r = st.run[n]
        if cfg.timely_dispatch and r.pc in ("renewed", "tool_started") and st.claim[M.si(cfg, r.sess)].exec == r.exec \
                and st.claim[M.si(cfg, r.sess)].ttl == 1:
            out.add(node)
        elif _overdue_by_own_clock(cfg, st, n):
            out.add(node)
    if "pause" not in cfg.faults:
        for c in st.claim:
            if c.ttl == 1:
                out.update(node for n, node in enumerate(cfg.nodes) if M.active_on(st, n, c.exec))
                out.update(who for who, w in zip(cfg.recoverers, st.rec)
                           if w.exec == c.exec and w.pc not in ("idle", "scanned"))
    return frozenset(out)


def held_tick(cfg: M.Config, st: M.State) -> M.State | None:
    """The twin's Tick at the frontier's held clock of a log with readings: the spec's, but a node's
    supervision holds the clock back only when overdue by its own clock (`_overdue_by_own_clock`), and a
    worker's scan (a read, placed from its own process's later reading, `own_reading_scans`) is no actor
    working on the claim whose lease runs out (spec `pausing`)."""
    if not any(_ticking(cfg, c) for c in st.claim):
        return None
    if cfg.timely_dispatch and any(r.pc in ("renewed", "tool_started") and st.claim[M.si(cfg, r.sess)].exec == r.exec
                                   and st.claim[M.si(cfg, r.sess)].ttl == 1 for r in st.run):
        return None
    if any(_overdue_by_own_clock(cfg, st, n) for n in range(len(cfg.nodes))):
        return None
    paused = any(c.ttl == 1 and (any(M.active_on(st, n, c.exec) for n in range(len(cfg.nodes)))
                                 or any(w.exec == c.exec and w.pc not in ("idle", "scanned") for w in st.rec))
                 for c in st.claim)  # spec `pausing`, less a worker's scan (placed from its own later reading)
    if paused and "pause" not in cfg.faults:
        return None
    return st._replace(claim=tuple(c._replace(ttl=c.ttl - 1) if _ticking(cfg, c) else c for c in st.claim),
                       faults=st.faults | {"pause"} if paused else st.faults)


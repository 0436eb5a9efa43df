"""The silent steps of the twin: its steps that change no durable variable, which a commit log cannot show
and the validation search (search.py) takes between two lines.

`spec.model.successors` offers every instance of Next; most of them (an acquisition per queued input, a
retry per prompt, an admission and a resume per Session, a wake move per row, a heartbeat per Session)
always write a row, and enumerating them was ~60% of validation's time on a stress history. This module
offers only the actions that can commit nothing: the runner's and the finalizer's steps (a publication
whose fence fails, a return, a stop or exit, a reconciliation), supervision, the recovery worker's steps
(a scan, a lost takeover race, a reconciliation, a conversion or quarantine that no longer matches), a
waker's read and a reservation that lost every row (Wakers > 1), and a crash; each still checks its own guard, and the search keeps a successor only when its durable rows are
unchanged.
tests/validation/test_silent.py checks that every silent successor `successors` finds on the registered
configurations (and with defects on) is one this module offers.
"""

from __future__ import annotations

from spec import model as M

from harness import registry as R

from harness.validation.search_state import DURABLE_INDEX

DURABLE_HEAD = 5  # claim, nextExec, log, recovery, inputs: the State's first fields
DURABLE_REST = DURABLE_INDEX[DURABLE_HEAD:]
assert DURABLE_INDEX[:DURABLE_HEAD] == tuple(range(DURABLE_HEAD))

_RUNNER = dict(M.RUNNER_STEPS)


def silent_successors(cfg: M.Config, st: M.State, crashes: bool = True, only=None, wakes: bool = True):
    """(name, params, next state) for each step from `st` that changes no durable variable (no Tick); `only`:
    the steps of these actors (names) alone (a line's view from its own process's reading, search.py);
    `crashes`, `wakes`: False when the log records every crash, every racing waker's read and reservation."""
    head, rest = st[:DURABLE_HEAD], tuple(st[i] for i in DURABLE_REST)

    def keep(name, params, nxt):  # the durable variables compared as tuples (identity first, in C)
        return (nxt is not None and nxt != st and nxt[:DURABLE_HEAD] == head
                and tuple(nxt[i] for i in DURABLE_REST) == rest)

    for n, node in enumerate(cfg.nodes):
        if only is not None and node not in only:
            continue
        pc = st.run[n].pc
        if pc != "idle":
            for name in M._RUNNER_BY_PC[pc]:
                nxt = _RUNNER[name](cfg, st, n)
                if keep(name, (node,), nxt):
                    yield name, (node,), nxt
        fpc = st.fin[n].pc
        if fpc != "idle":
            name, fn = {"settle": (R.FINALIZER_RECONCILE, M.FinalizerReconcile),
                        "reconciling": (R.FINALIZER_SETTLE, M.FinalizerSettle)}.get(
                fpc, (R.FINALIZER_CLEAR, M.FinalizerClear))
            nxt = fn(cfg, st, n)
            if keep(name, (node,), nxt):
                yield name, (node,), nxt
        nxt = M.Supervise(cfg, st, n)
        if keep(R.SUPERVISE, (node,), nxt):
            yield R.SUPERVISE, (node,), nxt
    window = None
    for r, who in enumerate(cfg.recoverers):
        if only is not None and who not in only:
            continue
        pc = st.rec[r].pc
        if pc == "idle":  # RecoveryScan, with the scan window read once for every Session
            if window is None:  # no claim eligible (spec `eligible`, the common case): empty, not computed
                floor = -cfg.eff_grace
                window = (M.scan_window(cfg, st) if any(c.ttl <= floor and c.phase != "none" and not c.quar
                                                        for c in st.claim) else ())
            for k in sorted(window):
                s, c = cfg.sessions[k], st.claim[k]
                yield R.RECOVERY_SCAN, (who, s), st._replace(rec=st.rec[:r] + (M.Rec("scanned", s, c.exec, c.owner),)
                                                            + st.rec[r + 1:])
            continue
        steps = {"scanned": ((R.RECOVERY_TAKEOVER, M.RecoveryTakeover),),
                 "converting": ((R.RECOVERY_RECONCILE, M.RecoveryReconcile),),
                 "reconciled": ((R.RECOVERY_CONVERT, M.RecoveryConvert),
                                (R.RECOVERY_CONVERT_ACK_LOST, M.RecoveryConvertAckLost),
                                (R.RECOVERY_CONVERT_FAILS, M.RecoveryConvertFails)),
                 "reconverting": ((R.RECOVERY_RECONVERT, M.RecoveryReconvert),)}.get(
            pc, ((R.RECOVERY_QUARANTINE, M.RecoveryQuarantine),))
        for name, fn in steps:
            if name in (R.RECOVERY_CONVERT_ACK_LOST, R.RECOVERY_CONVERT_FAILS) and M.N.ACK_LOST not in cfg.faults:
                continue
            nxt = fn(cfg, st, r)
            if keep(name, (who,), nxt):
                yield name, (who,), nxt
    if cfg.wakers > 1 and only is None and wakes:  # a waker's read keeps its plan in memory; a reservation whose rows all moved
        for k in range(1, cfg.wakers + 1):
            for name, fn in ((R.WAKE_READ, M.WakeRead), (R.WAKE_RESERVE, M.WakeReserve)):
                nxt = fn(cfg, st, k)
                if keep(name, (k,), nxt):
                    yield name, (k,), nxt
    if crashes and "crash" in cfg.faults:
        for k, who in enumerate(cfg.nodes + cfg.recoverers):
            if only is not None and who not in only:
                continue
            nxt = M.Crash(cfg, st, k)
            if keep(R.CRASH, (who,), nxt):
                yield R.CRASH, (who,), nxt

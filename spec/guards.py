"""Why an action instance is not enabled: the first conjunct of its guard that fails, in the protocol's words.

`why_not(cfg, st, name, params)` takes an action instance as a trace writes it (registry parameters: nodes,
Sessions and workers by name, an input as `Input`) and returns None when its guard holds, else one
sentence for the first failing conjunct, in the order SessionExecution.tla writes the action's
conjuncts, e.g. "runner n1 is not at streaming (it is at renewed)" or "the claim for s1 is not free
(running, execution 1, owner n1, ttl 1)". `enabled(cfg, st)` lists the instances that are.

This explains the twin's guards; it decides nothing. `spec.model` alone says what is enabled, and
tests/spec/test_guards.py checks, over sampled reachable states of several configurations, that
`why_not` is None exactly when `spec.model.apply` has a successor.
"""

from __future__ import annotations

from typing import Callable

from . import model as M
from . import names as N
from .config import Config
from .input_actions import retry_refusal
from .state import Input, State, request_id, same_input


def show_input(i: Input) -> str:
    return f"{i.sess}/{i.kind}#{i.src}" + (f"/gen{i.gen}" if i.gen else "") + (f"/{i.flaw}" if i.flaw else "")


def label(name: str, params: tuple) -> str:
    """`Acquire(n1, s1/prompt#1)`: an action instance as reports print it."""
    return f"{name}(" + ", ".join(show_input(p) if isinstance(p, Input) else str(p) for p in params) + ")"


def enabled(cfg: Config, st: State) -> list[str]:
    """Every action instance the twin enables at `st`, labelled, in Next's order."""
    return [label(a, p) for a, p, _ in M.successors(cfg, st)]


def _claim(c: M.Claim) -> str:
    quar = ", quarantined" if c.quar else ""
    return f"{c.phase}, execution {c.exec}, owner {c.owner}, ttl {c.ttl}{quar}"


def _no_claim(cfg: Config, st: State, s: str) -> str | None:
    return f"there is no claim for {s}" if st.claim[M.si(cfg, s)].phase == "none" else None


# ---------------------------------------------------------------- the runner

def _selectable(cfg: Config, st: State, i: Input) -> str | None:
    if i.state != "pending":
        return f"input {show_input(i)} is not pending (it is {i.state})"
    if not cfg.hooks.ordinary_selects(cfg, st, i):
        return (f"continuation {show_input(i)} is recovery-owned (it has a session_recovery row): ordinary "
                "selection excludes it")
    return None


def _acquire_by(cfg: Config, st: State, n: str, i: Input, ordinary: bool) -> str | None:
    r = st.run[M.ni(cfg, n)]
    if r.pc != "idle":
        return f"runner {n} is not idle (it is at {r.pc})"
    if i not in st.inputs:
        queued = [x.state for x in st.inputs if x[:3] == i[:3]]
        return (f"input {show_input(i)} is not queued as {i.state} "
                + (f"(it is {queued[0]})" if queued else "(there is no such input)"))
    if st.nextExec > cfg.max_exec:
        return f"no execution id is left (nextExec {st.nextExec} > MaxExec {cfg.max_exec})"
    if not cfg.hooks.claim_free(cfg, st, M.si(cfg, i.sess), ordinary):
        return f"the claim for {i.sess} is not free ({_claim(st.claim[M.si(cfg, i.sess)])})"
    return None


def _in_order(cfg: Config, st: State, i: Input) -> str | None:
    """Why ordinary selection may not take i yet (DeliveryKinds): the input of its Session waiting ahead."""
    if M.in_order(cfg, st, i):
        return None
    ahead = sorted(j for j in M.pending_inputs(st, i.sess) if M.selectable(cfg, st, j) and not same_input(j, i)
                   and (cfg.hooks.kind_ahead(cfg, st, j, i) or cfg.hooks.age_ahead(cfg, st, j, i)))[0]
    return (f"{M.delivery(cfg, ahead)} input {show_input(ahead)} waits ahead of {M.delivery(cfg, i)} input "
            f"{show_input(i)} (steer before queue, then age)")


def Acquire(cfg, st, n, i):
    return _selectable(cfg, st, i) or _in_order(cfg, st, i) or _acquire_by(cfg, st, n, i, True)


def PromoteContinuation(cfg, st, n, i):
    if cfg.wakes_tied:
        return "wake rows are tied to their work (WakesTied): a continuation is promoted by its recovery wake (WakePromote)"
    if i.state != "pending":
        return f"input {show_input(i)} is not pending (it is {i.state})"
    if i.kind != "cont":
        return f"input {show_input(i)} is a {i.kind}, not a continuation"
    if not cfg.hooks.promotion_owned(cfg, st, i):
        if M.has_row(st, i.sess, i.src):  # (a promotion that excludes recovery-owned inputs, as the queue does)
            return f"continuation {show_input(i)} has its session_recovery row, and this promotion excludes it"
        return f"continuation {show_input(i)} has no session_recovery row (execution {i.src}, Session {i.sess})"
    return _acquire_by(cfg, st, n, i, False)


def _runner_at(pc: str) -> Callable:
    def guard(cfg, st, n):
        r = st.run[M.ni(cfg, n)]
        if r.pc != pc:
            return f"runner {n} is not at {pc} (it is at {r.pc})"
        if r.intr:
            return f"runner {n} has been interrupted (it can only stop)"
        return None
    return guard


Renew = _runner_at("acquired")
Dispatch = _runner_at("renewed")
PublishStepStarted = _runner_at("streaming")


def OpenFragment(cfg, st, n):
    if cfg.fragments == 0:
        return "no stream opens a partial fragment in this configuration (Fragments is 0)"
    why = _runner_at("streaming")(cfg, st, n)
    if why is None and st.run[M.ni(cfg, n)].active:
        return f"runner {n}'s publisher already holds an open fragment"
    return why
StepStartedReturn = _runner_at("started")
PublishStepFailed = _runner_at("stepping")
StepFailedReturn = _runner_at("failed")
ToolRun = _runner_at("tool_started")
PublishToolSuccess = _runner_at("tooling")


def MarkUnknown(cfg, st, n):
    r = st.run[M.ni(cfg, n)]
    return _runner_at("publish_failed" if r.pc == "publish_failed" else "tool_failed")(cfg, st, n)


def ToolStart(cfg, st, n):
    r = st.run[M.ni(cfg, n)]
    if r.pc == "stepping" and not r.intr and r.tool >= cfg.tools:
        return f"runner {n} has settled its Step's tool calls (Tools {cfg.tools})"
    return _runner_at("stepping")(cfg, st, n)


def ToolSuccessFails(cfg, st, n):
    if n not in cfg.nodes:
        return f"{n} is a recovery worker: it publishes no Tool.Success"
    if "publication" not in cfg.faults:
        return "publication is not among the faults of this configuration"
    return _runner_at("tooling")(cfg, st, n)


def _publication_fault(cfg, st, n, event):
    if n not in cfg.nodes:
        return f"{n} is a recovery worker: it publishes no {event}"
    if "publication" not in cfg.faults:
        return "publication is not among the faults of this configuration"
    return None


def StepStartedFails(cfg, st, n):
    return _publication_fault(cfg, st, n, "Step.Started") or _runner_at("streaming")(cfg, st, n)


def HostedReconcile(cfg, st, n):
    return "no provider call runs a hosted tool in this configuration (Hosted is 0)" if not cfg.hosted else _runner_at("hosted")(cfg, st, n)


def HostedReconcileFails(cfg, st, n):
    return _publication_fault(cfg, st, n, "hosted call's Tool.Success") or HostedReconcile(cfg, st, n)


def StepEndedFails(cfg, st, n):
    return _publication_fault(cfg, st, n, "Step.Ended") or PublishStepEnded(cfg, st, n)


def PublishStepEnded(cfg, st, n):
    r = st.run[M.ni(cfg, n)]
    if r.pc == "stepping" and not r.intr and r.tool < cfg.tools:
        return f"runner {n}'s Step has a local tool call to settle first (Tools {cfg.tools})"
    return _runner_at("stepping")(cfg, st, n)
StepEndedReturn = _runner_at("ended")
ClearClaim = _runner_at("done")


def RunnerStop(cfg, st, n):
    r = st.run[M.ni(cfg, n)]
    if not r.intr:
        return f"runner {n} has not been interrupted"
    if r.pc in ("idle", "stopped", "hung"):
        return f"runner {n} is {dict(idle='idle', stopped='already stopped').get(r.pc, 'hung in a listener')}"
    return None


def ListenerHangs(cfg, st, n):
    if n not in cfg.nodes:
        return f"{n} is a recovery worker: it runs no listener"
    if N.HANG not in cfg.faults:
        return "hang is not among the faults of this configuration"
    r = st.run[M.ni(cfg, n)]
    if not M.listener_gate(st, M.ni(cfg, n)):
        return f"runner {n} is not at a listener gate (it is at {r.pc}{', interrupted' if r.intr else ''})"
    return None


def RunnerExit(cfg, st, n):
    k = M.ni(cfg, n)
    r, f = st.run[k], st.fin[k]
    if r.pc != "stopped":
        return f"runner {n} is not stopped (it is at {r.pc})"
    if f.pc != "idle" and f.exec == r.exec:
        return f"finalizer {n} still works on the runner's execution {r.exec} (at {f.pc})"
    return None


# ---------------------------------------------------------------- cancellation

def CancelRequest(cfg, st, n, s):
    f = st.fin[M.ni(cfg, n)]
    c = st.claim[M.si(cfg, s)]
    if f.pc != "idle":
        return f"finalizer {n} is busy (at {f.pc}, execution {f.exec} of {f.sess})"
    if c.phase != "running":
        return _no_claim(cfg, st, s) or f"the claim for {s} is not running ({_claim(c)})"
    if c.ttl <= 0:
        return f"the lease of the claim for {s} has expired ({_claim(c)})"
    if cfg.process_local_routing and c.owner != n:
        return f"the claim for {s} is owned by {c.owner}, not {n} (ProcessLocalRouting: an interrupt reaches its owner)"
    return None


def FinalizerReconcile(cfg, st, n):
    k = M.ni(cfg, n)
    f, r = st.fin[k], st.run[k]
    if f.pc != "settle":
        return f"finalizer {n} is not at settle (it is {f.pc})"
    if r.exec == f.exec and r.pc not in ("idle", "stopped"):
        return f"runner {n} still works on execution {f.exec} (at {r.pc}): the finalizer waits for it to stop"
    return None


def FinalizerSettle(cfg, st, n):
    f = st.fin[M.ni(cfg, n)]
    return f"finalizer {n} has not reconciled (it is {f.pc})" if f.pc != "reconciling" else None


def FinalizerClear(cfg, st, n):
    f = st.fin[M.ni(cfg, n)]
    return f"finalizer {n} is not at clear (it is {f.pc})" if f.pc != "clear" else None


# ---------------------------------------------------------------- lease keeping and time

def Heartbeat(cfg, st, k, s):
    c = st.claim[M.si(cfg, s)]
    if c.phase == "none":
        return f"there is no claim for {s}"
    if c.owner != k:
        return f"the claim for {s} is owned by {c.owner}, not {k}"
    if c.ttl >= cfg.lease:
        return f"the lease of the claim for {s} is fresh (ttl {c.ttl}, Lease {cfg.lease})"
    if not cfg.hooks.heartbeat_accepts(cfg, st, c):
        return f"the lease of the claim for {s} has expired"
    if k in cfg.nodes:
        if not M.active_on(st, M.ni(cfg, k), c.exec):
            return f"no actor of node {k} works on execution {c.exec}"
    elif st.rec[cfg.recoverers.index(k)] not in (M.Rec("converting", s, c.exec), M.Rec("reconciled", s, c.exec)):
        return f"recovery worker {k} is not converting execution {c.exec} of {s}"
    return None


def Supervise(cfg, st, n):
    k = M.ni(cfg, n)
    if not (M.run_stale(cfg, st, k) or M.fin_stale(cfg, st, k)):
        return f"node {n}'s runner and finalizer still hold their exact, live claims (or are idle)"
    return None


def Tick(cfg, st):
    if not any(c.phase != "none" and c.ttl > -cfg.eff_grace for c in st.claim):
        return f"no claim has a live lease or a grace tick left (Grace {cfg.eff_grace})"
    expiring = {cfg.sessions[k] for k, c in enumerate(st.claim) if c.ttl == 1}
    if cfg.timely_dispatch:
        for n, r in zip(cfg.nodes, st.run):
            if r.pc == "renewed" and r.sess in expiring and st.claim[M.si(cfg, r.sess)].exec == r.exec:
                return (f"runner {n} is between its renewal and the provider dispatch, and the lease of {r.sess} "
                        "would expire (TimelyDispatch)")
    paused = [s for s in sorted(expiring) if M.owner_active(cfg, st, M.si(cfg, s))]
    if paused and "pause" not in cfg.faults:
        return (f"the lease of {paused[0]} would expire while an actor works on it (a pause), and pause is not "
                "among the faults")
    late = [n for k, n in enumerate(cfg.nodes) if M.overdue(cfg, st, k)]
    if late:
        return (f"node {late[0]}'s supervision is overdue (SupervisionLag {cfg.supervision_lag}): it must stop "
                "its stale actor before the clock moves")
    return None


# ---------------------------------------------------------------- recovery

def RecoveryScan(cfg, st, r, s):
    w = st.rec[cfg.recoverers.index(r)]
    c = st.claim[M.si(cfg, s)]
    if w.pc != "idle":
        return f"recovery worker {r} is busy ({w.pc} execution {w.exec} of {w.sess})"
    if M.si(cfg, s) not in M.scan_window(cfg, st):
        if c.phase == "none":
            return f"there is no claim for {s}"
        if c.ttl > 0:
            return f"the lease of the claim for {s} has not expired (ttl {c.ttl})"
        if c.ttl > -cfg.eff_grace:
            return f"the claim for {s} is still in its grace (ttl {c.ttl}, Grace {cfg.eff_grace})"
        if c.quar:
            return f"the claim for {s} is quarantined"
        window = sorted(cfg.sessions[k] for k in M.scan_window(cfg, st))
        which = "oldest eligible claims" if cfg.scan_bound == 1 else \
            "eligible claims the scan plans (fresh ones first, up to the fresh share)"
        return f"the claim for {s} is not among the ScanBound = {cfg.scan_bound} {which} ({', '.join(window)})"
    return None


def RecoveryTakeover(cfg, st, r):
    w = st.rec[cfg.recoverers.index(r)]
    return f"recovery worker {r} has not scanned (it is {w.pc})" if w.pc != "scanned" else None


def RecoveryReconcile(cfg, st, r):
    w = st.rec[cfg.recoverers.index(r)]
    return f"recovery worker {r} has not taken a claim over (it is {w.pc})" if w.pc != "converting" else None


def RecoveryConvert(cfg, st, r):
    w = st.rec[cfg.recoverers.index(r)]
    return f"recovery worker {r} has not reconciled (it is {w.pc})" if w.pc != "reconciled" else None


def RecoveryQuarantine(cfg, st, r):
    w = st.rec[cfg.recoverers.index(r)]
    return f"recovery worker {r} is not quarantining (it is {w.pc})" if w.pc != "quarantining" else None


def RecoveryReconvert(cfg, st, r):
    w = st.rec[cfg.recoverers.index(r)]
    return f"recovery worker {r} is not retrying a conversion (it is {w.pc})" if w.pc != "reconverting" else None


# ---------------------------------------------------------------- faults

def Crash(cfg, st, k):
    if "crash" not in cfg.faults:
        return "crash is not among the faults of this configuration"
    if k in cfg.nodes:
        n = M.ni(cfg, k)
        if st.run[n].pc == "idle" and st.fin[n].pc == "idle":
            return f"node {k} has no runner or finalizer at work"
    elif st.rec[cfg.recoverers.index(k)].pc == "idle":
        return f"recovery worker {k} is idle"
    return None


def CorruptRecoveryRow(cfg, st, s, e):
    if not 1 <= e <= cfg.max_exec:  # Next: \E s \in Sessions, e \in 1..MaxExec
        return f"{e} is not an execution id (1..MaxExec = 1..{cfg.max_exec})"
    if "corrupt" not in cfg.faults:
        return "corrupt is not among the faults of this configuration"
    if "corrupt" in st.faults:
        return "a session_recovery row has been corrupted already (once per behaviour)"
    if not any(c.exec == e and cfg.sessions[k] != s for k, c in enumerate(st.claim)):
        return f"no other Session's claim holds execution {e}"
    if M.row_for_exec(st, e):
        return f"execution {e} already has a session_recovery row"
    return None


def ForgeContinuation(cfg, st, s, e, f):
    if f not in N.CONTINUATION_FLAWS:  # Next: \E f \in ContinuationFlaws
        return f"{f!r} is not a continuation flaw ({', '.join(N.CONTINUATION_FLAWS)})"
    if N.FORGE not in cfg.faults:
        return "forge is not among the faults of this configuration"
    if N.FORGE in st.faults:
        return "a continuation row has been forged already (once per behaviour)"
    if M.continuation(s, e, 0) not in st.inputs:
        return f"there is no pending continuation of execution {e} of Session {s} as recovery made it"
    return None


def RecoveryConvertAckLost(cfg, st, r):
    if N.ACK_LOST not in cfg.faults:
        return "ack (a lost commit acknowledgement) is not among the faults of this configuration"
    k = cfg.recoverers.index(r)
    w = st.rec[k]
    if w.pc != "reconciled":
        return f"recovery worker {r} has not reconciled (it is {w.pc})"
    c = st.claim[M.si(cfg, w.sess)]
    if not M.fenced(st, M.si(cfg, w.sess), w.exec, r):
        return f"recovery worker {r} no longer holds the exact, live claim for {w.sess} ({_claim(c)})"
    if M.RecoveryConvertAckLost(cfg, st, k) is None:
        return f"the claim for {w.sess} is not recovering work that validates ({_claim(c)}): no conversion commits"
    return None


def RecoveryConvertFails(cfg, st, r):
    """Where a conversion's COMMIT can fail: where its acknowledgement can be lost (the same guard)."""
    return RecoveryConvertAckLost(cfg, st, r)


# ---------------------------------------------------------------- wake scans (spec/wake_guards.py)

from .wake_guards import (WakeArrive, WakeLost, WakeRead, WakeReserve, WakeScan, WakeScanQueue,  # noqa: E402,F401
                          WakeServe, WakeSync, WakeAcquire, WakePromote)

# ---------------------------------------------------------------- inputs (Admission, Steering)

def Admit(cfg, st, s):
    if not cfg.admission:
        return "prompts are admitted at Init in this configuration (Admission is off)"
    if M.prompt_count(st, s) >= cfg.prompts:
        return f"{s} has admitted all its prompts (Prompts = {cfg.prompts})"
    return None


_RETRY_WHY = {
    N.UNKNOWN_INPUT: "names no admitted input",
    N.OTHER_SESSION: "is another Session's input",
    N.CONTINUATION: "is a continuation: internal, recovery's alone, never retried by a caller",
    N.RECOVERY_OWNED: "is an input recovery has taken",
    N.CONTENT_MISMATCH: "carries a content digest other than the admitted one",
}


def ExactRetry(cfg, st, s, i, d):
    if not cfg.admission:
        return "there is no exact retry in this configuration (Admission is off)"
    reason = retry_refusal(cfg, st, s, i, d)
    if reason:
        return f"refused, {reason}: the retry by {s} of {show_input(i)} ({d}) {_RETRY_WHY[reason]}"
    j = M.find_input(st, i)
    if not cfg.hooks.retry_appends(cfg, st, j):
        if M.requests_of(st, j.sess, request_id(j)):
            return f"prompt {show_input(i)} has its PromptExecutionRequested already (the retry is idempotent)"
        return f"prompt {show_input(i)} is waiting already (pending)"
    return None


def Resume(cfg, st, n, s):
    if not cfg.admission:
        return "there is no explicit resume in this configuration (Admission is off)"
    held = M.held_prompts(st, s)
    if not held:
        return f"{s} has no held prompt (none admitted without its execution requested)"
    if not cfg.hooks.resume_requests(cfg, st):  # the drain, forced with no durable request first
        return _acquire_by(cfg, st, n, sorted(held)[0], True)
    return None


def Steer(cfg, st, n, i):
    if not cfg.steering:
        return "there is no steer in this configuration (Steering is off)"
    guard = _runner_at("acquired")(cfg, st, n)
    if guard:
        return guard
    r = st.run[M.ni(cfg, n)]
    if i not in st.inputs:
        return f"input {show_input(i)} is not queued as {i.state}"
    if i.sess != r.sess:
        return f"input {show_input(i)} is not of runner {n}'s Session {r.sess}"
    if i.state != "pending":
        return f"input {show_input(i)} is not pending (it is {i.state})"
    if not cfg.hooks.steer_selects(cfg, st, i):
        return (f"continuation {show_input(i)} is recovery-owned (it has a session_recovery row): steer "
                "selection excludes it")
    if not cfg.hooks.steer_takes_kind(cfg, st, i):
        return f"input {show_input(i)} was admitted with queue delivery: it waits for the drain, never steered"
    guard = _in_order(cfg, st, i)
    if guard:
        return guard
    if not M.ordinary_ok(st, M.si(cfg, r.sess), r.exec, n):
        return f"the claim for {r.sess} is not runner {n}'s exact, live, running claim ({_claim(st.claim[M.si(cfg, r.sess)])})"
    return None


GUARDS: dict[str, Callable] = {name: globals()[name] for name in N.ACTIONS}


def why_not(cfg: Config, st: State, name: str, params: tuple) -> str | None:
    """The first failing conjunct of `name`'s guard on registry parameters, or None when the guard holds."""
    return GUARDS[name](cfg, st, *params)


def explain(cfg: Config, st: State, name: str, params: tuple) -> str:
    """One line for an instance the twin does not enable: its failing conjunct and what is enabled."""
    why = why_not(cfg, st, name, params) or "its guard holds, but it changes nothing (a stuttering step)"
    here = enabled(cfg, st)
    shown = ", ".join(here[:MAX_LISTED]) + (f", … {len(here) - MAX_LISTED} more" if len(here) > MAX_LISTED else "")
    return f"{label(name, params)} is not enabled in the twin: {why}; enabled here: {shown or 'nothing (a deadlock)'}"


MAX_LISTED = 16  # enabled instances an explanation lists (a large configuration enables hundreds)

"""The twin's invariants, one function per name in the registry, each mirroring the TLA+ definition.

State invariants take `(cfg, state)`; action invariants take `(cfg, state, next_state)` and are checked on
every edge, as TLC checks `[][P]_vars`; the liveness properties are checked on the whole graph by
`harness.engines.liveness`, which needs their premise and goal predicates from here.
"""

from __future__ import annotations

from collections import Counter

from . import names as N
from .model import (NO_CLAIM, Config, Effect, State, active_on, asst, delivery, eligible, exec_of, fenced, foreign_row, fresh_row, justified,
                    open_call, retried_row, has_row, row_for_exec, scan_window, si, CALL_INDICES)


def TypeOK(cfg: Config, st: State) -> bool:
    ok_claim = all(
        c == NO_CLAIM or (1 <= c.exec <= cfg.max_exec and c.owner in cfg.nodes + cfg.recoverers and -cfg.eff_grace <= c.ttl <= cfg.lease
                          and c.phase in N.PHASES[1:] and isinstance(c.quar, bool)
                          and c.asst in {0} | {asst(cfg, c.exec, k) for k in range(1, cfg.max_steps + 1)}
                          and 0 <= c.tries <= cfg.max_tries and c.why in ("",) + N.QUARANTINE_REASONS
                          and (c.why == "") == (not c.quar))
        for c in st.claim)
    ok_run = all(r.pc in N.RUNNER_PCS and (r.sess == "" or r.sess in cfg.sessions) and 0 <= r.ordinal <= cfg.max_steps
                 and 0 <= r.tool <= cfg.tools for r in st.run)
    ok_fin = all(f.pc in N.FINALIZER_PCS for f in st.fin)
    ok_rec = all(w.pc in N.RECOVERY_PCS for w in st.rec)
    ok_log = all(e.kind in N.LOG_KINDS and e.sess in cfg.sessions for e in st.log)
    ok_in = all(i.kind in N.INPUT_KINDS and i.state in N.INPUT_STATES and i.gen in (0, 1)
                and (i.flaw == "" or i.flaw in N.CONTINUATION_FLAWS) for i in st.inputs)
    ok_eff = all(x.kind in N.EFFECT_KINDS and x.by in cfg.nodes + cfg.recoverers and 0 <= x.step <= cfg.max_steps
                 for x in st.effects)
    ok_wake = all(isinstance(x.work, bool) and 0 <= x.tries <= cfg.max_wake_tries and x.woken in N.WAKE_RESERVATIONS
                  and isinstance(x.turned, bool) for x in st.wakes)
    ok_wake = ok_wake and all(1 <= p.row <= cfg.wake_rows and 0 <= p.tries <= cfg.max_wake_tries
                              and p.slot in N.WAKE_RESERVATIONS[1:] for plan in st.waker for p in plan)
    return (ok_claim and ok_run and ok_fin and ok_rec and ok_log and ok_in and ok_eff and ok_wake
            and 1 <= st.nextExec <= cfg.max_exec + 1 and st.faults <= set(N.FAULT_KINDS))


def AtMostOneStart(cfg: Config, st: State) -> bool:
    counts = Counter(e.asst for e in st.log if e.kind == "Started")
    return all(v <= 1 for v in counts.values())


def AtMostOneTerminal(cfg: Config, st: State) -> bool:
    counts = Counter(e.asst for e in st.log if e.kind in N.TERMINAL_KINDS)
    return all(v <= 1 for v in counts.values())


def InterruptOnlyAfterStart(cfg: Config, st: State) -> bool:
    return all(any(st.log[j].kind == "Started" and st.log[j].asst == e.asst for j in range(k))
               for k, e in enumerate(st.log) if e.kind == "Interrupted")


def MemoryFollowsDurable(cfg: Config, st: State) -> bool:
    return all(r.mem == 0 or any(e.kind == "Started" and e.asst == r.mem for e in st.log) for r in st.run)


def CancelLeavesNoRecovery(cfg: Config, st: State) -> bool:
    return all(x not in st.recovery
               and not any(i.kind == "cont" and i.src == x.exec and i.sess == x.sess for i in st.inputs)
               for x in st.cancelled)


def RecoveryRowsIsolated(cfg: Config, st: State) -> bool:
    return all((i.src, i.sess) in {(r.exec, r.sess) for r in st.recovery}
               for i in st.inputs if i.kind == "cont")


def ContinuationsRecoveryOwned(cfg: Config, st: State) -> bool:
    return all(not (i.kind == "cont" and i.state == "ordinary") for i in st.inputs)


def PromotedContinuationsValid(cfg: Config, st: State) -> bool:
    return all(i.flaw == "" for i in st.inputs if i.state == "recovery")


def QuarantineOnlyMalformed(cfg: Config, st: State) -> bool:
    return all(justified(cfg, st, s) for s, c in enumerate(st.claim) if c.quar)


def OneContinuationPerRecovery(cfg: Config, st: State) -> bool:
    ids: dict[tuple[str, int], int] = {}
    for i in st.inputs:
        if i.kind == "cont" and ids.setdefault((i.sess, i.src), i.gen) != i.gen:
            return False
    return True


def OneExecutionRequestPerPrompt(cfg: Config, st: State) -> bool:
    counts = Counter((e.sess, e.asst) for e in st.log if e.kind == N.REQUEST_KIND and e.asst > 0)
    return all(v <= 1 for v in counts.values())


def RequestsNameAdmittedPrompts(cfg: Config, st: State) -> bool:
    prompts = {(i.sess, i.src) for i in st.inputs if i.kind == "prompt"}
    return all(e.asst > 0 and e.node == "" and (e.sess, e.asst) in prompts
               for e in st.log if e.kind == N.REQUEST_KIND)


def SteerExcludesRecoveryOwned(cfg: Config, st: State) -> bool:
    return all(not (i.kind == "cont" and i.state == "steered") for i in st.inputs)


def SteerTakesSteerInputs(cfg: Config, st: State) -> bool:
    """With delivery kinds, every steered input was admitted with steer delivery."""
    return not cfg.delivery_kinds or all(delivery(cfg, i) == "steer" for i in st.inputs if i.state == "steered")


def ScanWindowShared(cfg: Config, st: State) -> bool:
    """The claim scan's window: the oldest eligible claims of each kind, min(ScanBound, eligible) of them;
    with ScanBound >= 2, fresh ones keep the fresh share (FreshShare, not the hook) and retried ones the rest."""
    E = [s for s in range(len(cfg.sessions)) if eligible(cfg, st, s)]
    if not E:
        return True
    W = scan_window(cfg, st)
    F = {s for s in E if st.claim[s].tries == 0}
    if not W <= set(E) or len(W) != min(cfg.scan_bound, len(E)):
        return False
    if any(t not in W and (t in F) == (s in F) and st.claim[t].exec < st.claim[s].exec for s in W for t in E):
        return False
    return cfg.scan_bound < 2 or (len(W & F) >= min(cfg.fresh_share, len(F))
                                  and len(W - F) >= min(cfg.scan_bound - cfg.fresh_share, len(E) - len(F)))


# ---------------------------------------------------------------- action invariants ([][P]_vars)


def AcquireNeverOverwrites(cfg: Config, st: State, nx: State) -> bool:
    return all(not (c.phase != "none" and d.phase != "none") or d.exec == c.exec
               for c, d in zip(st.claim, nx.claim))


# the phase moves a claim of one execution may make: forward only, never back
PHASE_STEPS = frozenset({(p, p) for p in N.PHASES} | {("none", "running"), ("running", "cancelling"),
                                                     ("cancelling", "cancelled"), ("running", "recovering"),
                                                     ("running", "unknown")})


def _allowed_claim_change(cfg: Config, c, d) -> bool:
    if c.phase == "none" or d == c:
        return True
    if c.ttl > 0 and d == NO_CLAIM and (c.phase != "cancelling" or c.owner in cfg.recoverers):
        return True  # the owner's fenced removal (a live cancellation only by the recovery that finishes it)
    if (c.ttl > 0 and d.exec == c.exec and d.owner == c.owner and d.quar == c.quar
            and (c.phase, d.phase) in PHASE_STEPS
            and (d.asst == c.asst or c.asst == 0 or d.asst == c.asst + 1 and exec_of(cfg, d.asst) == c.exec)):
        return True  # a live lease: the owner's fenced update, phases forward, the assistant kept (or the next Step's)
    if d == c._replace(ttl=c.ttl - 1):
        return True  # the clock
    if (c.ttl <= -cfg.eff_grace and not c.quar and d.exec == c.exec and d.owner in cfg.recoverers and d.ttl == cfg.lease
            and d.asst == c.asst and not d.quar
            and d.phase == ("recovering" if c.phase == "running" else c.phase)):
        return True  # recovery takeover (compare-and-swap on an expired claim)
    # quarantine, of a recovery worker's claim only
    return d == c._replace(quar=True, why=d.why) and c.owner in cfg.recoverers and c.phase != "running"


def FencedMutation(cfg: Config, st: State, nx: State) -> bool:
    if not all(_allowed_claim_change(cfg, c, d) for c, d in zip(st.claim, nx.claim)):
        return False
    for ev in nx.log[len(st.log):]:
        if ev.kind == N.REQUEST_KIND:
            continue  # an input event: a caller's, written under no claim
        c = st.claim[si(cfg, ev.sess)]
        if not (c.exec == exec_of(cfg, ev.asst) and c.owner == ev.node and c.ttl > 0):
            return False
    return True


def PhaseMonotonic(cfg: Config, st: State, nx: State) -> bool:
    return all((c.phase, d.phase) in PHASE_STEPS for c, d in zip(st.claim, nx.claim)
               if d.phase != "none" and (c.phase == "none" or d.exec == c.exec))


def _settled_after(nx: State, a: int) -> bool:
    return any(e.kind in N.TERMINAL_KINDS and e.asst == a for e in nx.log)


def ClearOnlySettled(cfg: Config, st: State, nx: State) -> bool:
    for c, d in zip(st.claim, nx.claim):
        if c.phase == "cancelling" and d.phase == "cancelled" and not (d.asst == 0 or _settled_after(nx, d.asst)):
            return False  # a cancellation settles only with the latest Step's assistant settled
        if c.phase != "none" and d.phase == "none":
            ok = (c.phase == "cancelled"
                  or c.phase == "cancelling" and c.owner in cfg.recoverers
                  and (c.asst == 0 or _settled_after(nx, c.asst))
                  or c.phase == "running" and c.asst != 0 and _settled_after(nx, c.asst)
                  or c.phase in ("recovering", "unknown") and (c.asst == 0 or _settled_after(nx, c.asst)))
            if not ok:
                return False
    return True


def QuarantineOnlyByRecovery(cfg: Config, st: State, nx: State) -> bool:
    for k, (c, d) in enumerate(zip(st.claim, nx.claim)):
        if not c.quar and d.quar:
            if c.owner not in cfg.recoverers or c.phase == "running":
                return False
            w = st.rec[cfg.recoverers.index(c.owner)]
            if not (w.pc == "quarantining" and w.sess == cfg.sessions[k] and w.exec == c.exec
                    and d == c._replace(quar=True, why=d.why)):
                return False
    return True


# a provider call dispatched and not yet returned (a Step's local tool runs inside it; a hung listener's
# runner never returned from its Step)
IN_FLIGHT = ("streaming", "started", "stepping", "tool_started", "tooling", "tool_failed", "publish_failed", "hung",
             "hosted")


def call_in_flight(cfg: Config, st: State, m: int, s: str) -> bool:
    """Node m's provider call on Session s is in flight (TLA+ CallInFlight)."""
    r = st.run[m]
    node = cfg.nodes[m]
    return r.sess == s and r.pc in IN_FLIGHT and Effect(s, r.exec, node, node, "dispatch", r.ordinal) in st.effects


def recovery_effects_begun(cfg: Config, st: State, nx: State) -> list[Effect]:
    """TLA+ RecoveryEffectsBegun: a worker's takeover (scanned -> converting) and its reconciliation
    (converting -> reconciled under its own exact, live claim), read from its move."""
    out = []
    for r, (w, w2) in enumerate(zip(st.rec, nx.rec)):
        me = cfg.recoverers[r]
        if w.pc == "scanned" and w2.pc == "converting":
            out.append(Effect(w.sess, w.exec, me, me, "takeover"))
        elif w.pc == "converting" and w2.pc == "reconciled" and fenced(st, si(cfg, w.sess), w.exec, me):
            out.append(Effect(w.sess, w.exec, me, me, "reconcile"))
    return out


def NoOverlappingEffects(cfg: Config, st: State, nx: State) -> bool:
    for x in list(nx.effects - st.effects) + recovery_effects_begun(cfg, st, nx):
        c = st.claim[si(cfg, x.sess)]
        if x.kind != "takeover" and not (c.exec == x.exec and c.owner == x.owner):
            return False  # a successor holds the Session's claim
        if any(call_in_flight(cfg, st, m, x.sess) for m, node in enumerate(cfg.nodes) if node != x.by):
            return False  # another node's provider call on the Session is still in flight
        if any(f.pc != "idle" and f.sess == x.sess and (f.exec, f.owner) != (x.exec, x.owner) for f in st.fin):
            return False  # an older owner's finalizer on the Session is still in flight (R003-MUST-FIX-2)
    return True


def NoPhysicalReplay(cfg: Config, st: State, nx: State) -> bool:
    for n, (r, r2) in enumerate(zip(st.run, nx.run)):
        if (r.pc, r2.pc) in (("renewed", "streaming"), ("tool_started", "tooling")):
            c = st.claim[si(cfg, r.sess)]
            if not (c.exec == r.exec and c.owner == cfg.nodes[n] and c.ttl > 0):
                return False
    return True


def ConversionRetryChangesNothing(cfg: Config, st: State, nx: State) -> bool:
    """A retry whose first attempt committed (the execution's session_recovery row of its Session exists)
    changes nothing; a retry of an attempt that did not commit replays the conversion."""
    if not any(w.pc == "reconverting" and w2 != w and has_row(st, w.sess, w.exec) for w, w2 in zip(st.rec, nx.rec)):
        return True
    return all(getattr(st, v) == getattr(nx, v) for v in DURABLE)


# the durable variables a retried conversion must leave alone (TLA+ ConversionRetryChangesNothingStep)
DURABLE = ("claim", "log", "recovery", "inputs", "cancelled")


from .wakes import ReservationsExclusive, WakePlanShared  # noqa: E402,F401 - the wake scans' action properties


def DeliveryOrder(cfg: Config, st: State, nx: State) -> bool:
    """With delivery kinds, a prompt taken in the step (the drain's or a steer) had no prompt of its Session
    waiting ahead of it: no steer input before a queue one, no older one of its kind."""
    if not cfg.delivery_kinds:
        return True
    for i in nx.inputs - st.inputs:
        if i.kind == "prompt" and i.state in ("ordinary", "steered"):
            for j in st.inputs:
                if (j.sess == i.sess and j.kind == "prompt" and j.state == "pending" and j.src != i.src
                        and ((delivery(cfg, j), delivery(cfg, i)) == ("steer", "queue")
                             or (delivery(cfg, j) == delivery(cfg, i) and j.src < i.src))):
                    return False
    return True


def ResumeRequestedBeforeDrain(cfg: Config, st: State, nx: State) -> bool:
    """A prompt taken in the step (by the drain's Acquire or a steer) was pending (requested) before it."""
    return all(j._replace(state="pending") in st.inputs for j in nx.inputs - st.inputs
               if j.kind == "prompt" and j.state in ("ordinary", "steered"))
def _tool_ran(st: State, s: str, e: int, k: int, i: int) -> bool:
    return any(y.kind == "tool" and (y.sess, y.exec, y.step, y.call) == (s, e, k, i) for y in st.effects)


def ToolStartsOnce(cfg: Config, st: State, nx: State) -> bool:
    """A local tool effect that begins is the first of its call (Session, execution, Step, call index), and a runner
    starts its physical tool only for a call none has run yet (its own second run adds no new element)."""
    if any(_tool_ran(st, x.sess, x.exec, x.step, x.call) for x in nx.effects - st.effects if x.kind == "tool"):
        return False
    return not any(r.pc == "tool_started" and r2.pc == "tooling" and _tool_ran(st, r.sess, r.exec, r.ordinal, r.tool + 1)
                   for r, r2 in zip(st.run, nx.run))


def UnknownNeverReexecuted(cfg: Config, st: State, nx: State) -> bool:
    """A tool begins only for running work; a claim is removed only with its execution's tool calls settled."""
    if any(x.kind == "tool" and st.claim[si(cfg, x.sess)].phase != "running" for x in nx.effects - st.effects):
        return False
    for c, d in zip(st.claim, nx.claim):
        if c.phase != "none" and d.phase == "none":
            first = asst(cfg, c.exec, 1)
            if any(open_call(nx, a, i) for a in range(first, first + cfg.max_steps) for i in CALL_INDICES):
                return False
    return True


STATE_CHECKS = {name: globals()[name] for name in N.STATE_INVARIANTS}
ACTION_CHECKS = {name: globals()[name] for name in N.ACTION_INVARIANTS}


# ---------------------------------------------------------------- liveness: (P ~> Q) per Session

def _claimed(st: State, s: int) -> bool:
    return st.claim[s].phase != "none"


def _eligible(cfg: Config, st: State, s: int) -> bool:
    c = st.claim[s]
    return c.phase != "none" and c.ttl <= -cfg.eff_grace and not c.quar


def _rejected(cfg: Config, st: State, s: int) -> bool:
    """TLA+ Rejected: the Session's claim is quarantined as malformed (another Session's session_recovery row
    names its execution), the one quarantine that is a goal; `exhausted` is Residual R1's, `invalid` never."""
    c = st.claim[s]
    return c.quar and c.why == "malformed" and foreign_row(cfg, st, s, c.exec)


def exhausted_by_pauses(cfg: Config, st: State, s: int) -> bool:
    """TLA+ ExhaustedByPauses: Residual R1 (docs/protocol.md section 5) quarantined s's claim `exhausted`, its
    MaxTries takeovers used up and the last conversion's lease lost."""
    c = st.claim[s]
    return c.quar and c.why == "exhausted" and c.tries >= cfg.max_tries


def listener_hung(cfg: Config, st: State, s: int) -> bool:
    """TLA+ ListenerHung: Residual R2, a runner on s's Session hangs in a listener (it never returns)."""
    return any(r.pc == "hung" and r.sess == cfg.sessions[s] for r in st.run)


def _waiting(st: State, sess: str, kind: str) -> bool:
    """TLA+ Waiting: an input of this kind for the Session is pending."""
    return any(i.sess == sess and i.kind == kind and i.state == "pending" for i in st.inputs)


def _exhausted(cfg: Config, st: State) -> bool:
    return st.nextExec > cfg.max_exec


# The steps each liveness property's premise says eventually stop (TLA+ FaultsCease, CrashesCease): a
# violating behaviour's cycle takes none of them; before the cycle it may take any. A step's kind is its
# action's name, or PAUSE_STEP for a Tick that expires a working actor's lease (TLA+ Tick /\ Pausing).
PAUSE_STEP = "pause"
CRASH = N.ACTIONS["Crash"].name
FAULT_STEPS = frozenset({a.name for a in N.ACTIONS.values() if a.actor == "fault"} | {PAUSE_STEP})
CEASING = {"SessionsEventuallyAvailable": FAULT_STEPS, "ExpiredClaimsEventuallyHandled": frozenset({CRASH}),
           "PendingInputsEventuallyServed": FAULT_STEPS, "ContinuationsEventuallyPromoted": FAULT_STEPS,
           # fresh arrivals cease; woken rows may be lost forever (retry saturation)
           "FreshWorkKeepsCapacity": frozenset({N.ACTIONS["WakeArrive"].name}),
           # nothing ceases: fresh work may keep arriving, woken rows may keep being lost
           "RetryAdvances": frozenset()}
TICK = N.ACTIONS["Tick"].name


def step_kind(action: str, paused: bool) -> str:
    """The kind of a step taken from a state where a tick would (`paused`) or would not pause an actor."""
    return PAUSE_STEP if action == TICK and paused else action


# The residuals each property takes as a premise per Session, by their TLA+ operator (spec.names.RESIDUALS):
# R1, `NotExhaustedByPauses(s) => (P ~> Q)`: a Session R1 quarantined is exempt; the quarantine is stable (a
# quarantined claim is never taken over, converted or cleared again), so `[]~R(s) => (P ~> Q)` is
# `P ~> (Q \/ R(s))`, the form leads_to returns. R2, a hang, can end: TLA+ writes that form itself,
# `P ~> (Q \/ ListenerHung(s))`. EXEMPT: each premise operator's state, by which leads_to widens Q.
RESIDUAL_PREMISES = {name: tuple(r.premise for r in N.RESIDUALS.values() if name in r.properties)
                     for name in N.LIVENESS if any(name in r.properties for r in N.RESIDUALS.values())}
EXEMPT = {"NotExhaustedByPauses": lambda cfg, st, s: exhausted_by_pauses(cfg, st, s),
          "ListenerHung": lambda cfg, st, s: listener_hung(cfg, st, s)}
assert set(EXEMPT) == {r.premise for r in N.RESIDUALS.values()}


def leads_to(name: str, cfg: Config):
    """For a liveness property, the list of (label, P, Q) with P ~> Q, one per Session (the label); the
    property holds on behaviours whose cycle takes none of the steps in CEASING[name], for the Sessions
    its residual premises (RESIDUAL_PREMISES) leave in: Q is widened by their states (EXEMPT) there."""
    if name == "FreshWorkKeepsCapacity":  # one per wake row (none when wake scans are not modelled)
        return [(f"wake row {w}", lambda st, w=w: fresh_row(st, w), lambda st, w=w: not fresh_row(st, w))
                for w in range(1, cfg.wake_rows + 1)]
    if name == "RetryAdvances":  # one per wake row: the retried row is woken (none without wake rows)
        return [(f"wake row {w}", lambda st, w=w: retried_row(st, w), lambda st, w=w: st.wakes[w - 1].woken == "retry")
                for w in range(1, cfg.wake_rows + 1)]
    out = []
    for s, sess in enumerate(cfg.sessions):
        if name == "PendingInputsEventuallyServed":
            p = lambda st, sess=sess: _waiting(st, sess, "prompt")
            q = lambda st, s=s, sess=sess: ((not _waiting(st, sess, "prompt") and not _claimed(st, s))
                                            or _exhausted(cfg, st) or _rejected(cfg, st, s))
        elif name == "ContinuationsEventuallyPromoted":
            p = lambda st, sess=sess: _waiting(st, sess, "cont")
            q = lambda st, s=s, sess=sess: not _waiting(st, sess, "cont") or _exhausted(cfg, st) or _rejected(cfg, st, s)
        elif name == "SessionsEventuallyAvailable":
            p = lambda st, s=s: _claimed(st, s)
            q = lambda st, s=s: not _claimed(st, s) or _rejected(cfg, st, s)
        elif name == "ExpiredClaimsEventuallyHandled":
            p = lambda st, s=s: _eligible(cfg, st, s)
            q = lambda st, s=s: not _eligible(cfg, st, s)
        else:
            raise KeyError(name)
        for premise in RESIDUAL_PREMISES.get(name, ()):
            q = lambda st, s=s, q=q, x=EXEMPT[premise]: q(st) or x(cfg, st, s)
        out.append((sess, p, q))
    return out


# ---------------------------------------------------------------- read-side helpers (trace expectations)

def assistant_outcome(st: State, a: int) -> str:
    """Assistant `a`'s outcome from the durable log (names.ASSISTANT_OUTCOMES): "none" (never started),
    "open" (started, no terminal event), or its terminal kind; several terminals (AtMostOneTerminal
    broken) are joined by "+", in log order."""
    kinds = [e.kind for e in st.log if e.asst == a and e.kind != N.REQUEST_KIND]
    terminals = [k for k in kinds if k in N.TERMINAL_KINDS]
    if terminals:
        return "+".join(terminals)
    return "open" if "Started" in kinds else "none"


def quarantine_reason(cfg: Config, st: State, s: int) -> str | None:
    """Why Session s's claim is quarantined: the reason recorded with it (names.QUARANTINE_REASONS;
    QuarantineOnlyMalformed says which are justified); None when it is not quarantined."""
    c = st.claim[s]
    if c.phase == "none" or not c.quar:
        return None
    return c.why


# the variables each check reads: a state whose parent held an invariant only needs it re-checked when
# one of these changed; an edge only needs an action check when one of them changed in the step
READS = {
    "TypeOK": tuple(State._fields),
    "AtMostOneStart": ("log",), "AtMostOneTerminal": ("log",), "InterruptOnlyAfterStart": ("log",),
    "MemoryFollowsDurable": ("run", "log"), "CancelLeavesNoRecovery": ("cancelled", "recovery", "inputs"),
    "RecoveryRowsIsolated": ("inputs", "recovery"), "ContinuationsRecoveryOwned": ("inputs",),
    "PromotedContinuationsValid": ("inputs",),
    "QuarantineOnlyMalformed": ("claim", "recovery"), "OneContinuationPerRecovery": ("inputs",),
    "OneExecutionRequestPerPrompt": ("log",), "SteerExcludesRecoveryOwned": ("inputs",), "ScanWindowShared": ("claim",),
    "RequestsNameAdmittedPrompts": ("log", "inputs"),
    "ResumeRequestedBeforeDrain": ("inputs",), "SteerTakesSteerInputs": ("inputs",), "DeliveryOrder": ("inputs",),
    "AcquireNeverOverwrites": ("claim",), "FencedMutation": ("claim", "log"),
    "PhaseMonotonic": ("claim",), "ClearOnlySettled": ("claim",), "QuarantineOnlyByRecovery": ("claim",),
    "NoOverlappingEffects": ("effects", "rec"), "NoPhysicalReplay": ("run",),
    "ConversionRetryChangesNothing": ("rec",), "WakePlanShared": ("wakes", "waker"),
    "ReservationsExclusive": ("wakes", "waker"),
    "ToolStartsOnce": ("effects", "run"), "UnknownNeverReexecuted": ("effects", "claim"),
}


_READ_IDX = {name: frozenset(State._fields.index(v) for v in reads) for name, reads in READS.items()}


def changed(a: State, b: State) -> frozenset[int]:
    """Indexes of the variables that differ between two states."""
    return frozenset(k for k in range(len(a)) if a[k] is not b[k] and a[k] != b[k])


def check_state(cfg: Config, st: State, delta: frozenset[int] | None = None) -> list[str]:
    """Violated state invariants. With `delta` (the variables changed from a parent that held them
    all), only the invariants reading a changed variable are evaluated."""
    return [name for name, fn in STATE_CHECKS.items()
            if (delta is None or _READ_IDX[name] & delta) and not fn(cfg, st)]


def check_edge(cfg: Config, st: State, nx: State, delta: frozenset[int] | None = None) -> list[str]:
    delta = changed(st, nx) if delta is None else delta
    return [name for name, fn in ACTION_CHECKS.items() if _READ_IDX[name] & delta and not fn(cfg, st, nx)]


__all__ = ["check_state", "check_edge", "leads_to", "assistant_outcome", "quarantine_reason", "STATE_CHECKS", "ACTION_CHECKS", "active_on"]

"""The registry: every name that the spec, the twin, the implementation and the reports share.

Nothing else in claimcheck spells an action, invariant, assumption, defect or boundary name as a
literal of its own; it refers to this module, so a rename is one edit and a typo is an import error.
"""

from __future__ import annotations

from .boundary_names import BOUNDARIES  # noqa: F401 - the implementation's failpoints, between two actions
from .fence_names import FENCED_ACTIONS, FENCE_UNREACHABLE  # noqa: F401 - the fenced actions, their unreached branches
from .assumption_names import ASSUMPTIONS, RESIDUALS  # noqa: F401 - the assumptions, the accepted residuals
from .defect_names import DEFECTS  # noqa: F401 - the defects, each a bug the hooks can switch on
from .flaw_names import CONTINUATION_CHECKS, CONTINUATION_FLAWS, FLAW_DEFECTS  # noqa: F401 - forged continuation rows
from .records import Action, Assumption, Boundary, Defect, Invariant, Residual, UnknownName, _index  # noqa: F401
from .source import HOOKS  # noqa: F401 - the protocol's hooks, read from SessionExecution.tla's section Hooks
from .vocabulary import *  # noqa: F401,F403 - the state's values (phases, pcs, kinds), part of the registry

ACTIONS = _index([
    # ordinary execution (the runner on a node)
    Action("Acquire", ("n", "i"), "runner", True,
           "ordinary selection picks a pending non-recovery input and inserts a claim (insert-only)"),
    Action("PromoteContinuation", ("n", "i"), "runner", True,
           "recovery's continuation is promoted exactly: a claim is inserted for it"),
    Action("Renew", ("n",), "runner", True, "the renewal that precedes each Step's provider dispatch (fenced)"),
    Action("Dispatch", ("n",), "runner", True, "the provider call begins: an external effect, no transaction"),
    Action("OpenFragment", ("n",), "runner", False,
           "the provider's stream has begun: a partial fragment is open in the publisher, whose memory names "
           "no assistant yet (in memory only; constant Fragments; the provider's choice, not fair)"),
    Action("PublishStepStarted", ("n",), "runner", True,
           "one transaction: append Step.Started, project the assistant, store its id in the claim (fenced)"),
    Action("StepStartedReturn", ("n",), "runner", True,
           "after listeners, the publish returns and the runner sets publisher memory"),
    Action("HostedReconcile", ("n",), "runner", True, "one transaction (Hosted 1): the Step's hosted call's "
           "outcome, Tool.Success with its index (fenced), before any local tool, Step.Ended or Step.Failed"),
    Action("ToolStart", ("n",), "runner", True,
           "the fenced tool start, one transaction: under the exact, live, running claim, renew the lease and "
           "record the Step's local tool call (ToolStarted)"),
    Action("ToolRun", ("n",), "runner", True, "the physical local tool runs: an external effect, no transaction"),
    Action("PublishToolSuccess", ("n",), "runner", True,
           "one transaction: publish Tool.Success (fenced); the runner's tool-settlement flag changes only once "
           "it committed"),
    Action("MarkUnknown", ("n",), "runner", True,
           "after a failed publication (Tool.Success, Step.Started or Step.Ended), the runner's fenced update "
           "running -> unknown (the call's outcome is uncertain; it is never re-run), then the runner stops"),
    Action("PublishStepFailed", ("n",), "runner", True,
           "one transaction: append Step.Failed and complete the assistant (fenced)"),
    Action("StepFailedReturn", ("n",), "runner", True,
           "after listeners, the publish returns and publisher memory marks the assistant inactive"),
    Action("PublishStepEnded", ("n",), "runner", True,
           "one transaction: append Step.Ended and complete the assistant (fenced); listeners follow, and "
           "after the last Step the runner's return is its release (ClearClaim)"),
    Action("StepEndedReturn", ("n",), "runner", True,
           "after listeners, the publish returns: publisher memory marks the assistant inactive and the "
           "runner goes on to its next Step (renewal, dispatch, Step.Started with the next assistant id)"),
    Action("ClearClaim", ("n",), "runner", True, "remove the exact, settled claim (fenced)"),
    Action("RunnerStop", ("n",), "runner", True, "the runner observes the interrupt and stops at its next step"),
    Action("RunnerExit", ("n",), "runner", True, "a stopped runner with no finalizer of its own releases its memory"),
    # cancellation
    Action("CancelRequest", ("n", "s"), "finalizer", False,
           "an authenticated interrupt: phase running -> cancelling (fenced); finalizer and heartbeat start"),
    Action("FinalizerReconcile", ("n",), "finalizer", True,
           "after the runner stopped, the finalizer's span begins: its own supervision check (a stale "
           "finalizer stops, no effect), then it reconciles tools, an external effect before any "
           "transaction; the finalizer is in flight until it settles, is stopped or dies"),
    Action("FinalizerSettle", ("n",), "finalizer", True,
           "one fenced transaction after the reconciliation: read the claimed execution's assistant from the "
           "database, publish at most one Step.Interrupted, phase cancelling -> cancelled; a failed fence "
           "stops the finalizer with nothing written"),
    Action("FinalizerClear", ("n",), "finalizer", True, "remove the exact cancelled claim (fenced)"),
    # lease keeping and time
    Action("Heartbeat", ("n", "s"), "node", True,
           "a node renews the lease of a claim one of its actors is working on (fenced)"),
    Action("Supervise", ("n",), "supervisor", True,
           "the node notices that its runner's or finalizer's claim is no longer its exact, live claim "
           "(expired, taken over, gone) and stops that actor (in memory)"),
    Action("Tick", (), "environment", True,
           "the discrete clock advances: every claim's lease loses one tick, down to -Grace; it waits while "
           "a node's supervision is overdue (SupervisionLag). A tick that expires the lease of an actor "
           "still working on it is a pause (a fault, never forced); a calm tick is weakly fair"),
    # recovery
    Action("RecoveryScan", ("r", "s"), "recovery", True,
           "a read: the bounded oldest-first window of expired unquarantined claims; the worker remembers "
           "the row it will try (Session, execution, former owner)"),
    Action("RecoveryTakeover", ("r",), "recovery", True,
           "compare-and-swap on what the scan saw (exact Session, execution, former owner, expired lease, "
           "null recovery error) to this worker; a lost race changes nothing durable"),
    Action("RecoveryReconcile", ("r",), "recovery", True,
           "between takeover and conversion: under its own exact, live claim the worker reconciles the "
           "execution's hosted tools, an external effect before any transaction (a worker whose lease is "
           "gone begins none and leaves the lost lease to its conversion)"),
    Action("RecoveryConvert", ("r",), "recovery", True,
           "one fenced transaction: finish cancellation-owned work (Step.Interrupted once for an open "
           "assistant, cancelled, claim cleared, no recovery row); or validate recovering work, settle an "
           "open assistant with Step.Interrupted, insert one session_recovery row, create the continuation, "
           "clear the claim; malformed work goes to quarantine; a conversion that lost its lease releases "
           "the claim to a later takeover until its attempts reach MaxTries"),
    Action("RecoveryQuarantine", ("r",), "recovery", True,
           "mark the exact claim this worker owns as quarantined; must change exactly one row"),
    Action("RecoveryReconvert", ("r",), "recovery", True, "after a connection error, the same conversion with "
           "the same ids: its own committed work found (its Session's row naming the continuation id it derives), "
           "nothing changes; else it replays the keyed and fenced writes, never touching a claim not its own"),
    # faults
    Action("Crash", ("n",), "fault", False, "a node process dies: its runner, finalizer and recovery worker lose their memory"),
    Action("ToolSuccessFails", ("n",), "fault", False,
           "the Tool.Success publication's transaction fails (the environment's publication fault): nothing "
           "durable changes and the call stays unsettled"),
    Action("StepStartedFails", ("n",), "fault", False, "the Step.Started publication's transaction fails: "
           "nothing durable changes; the provider call was made, and the runner's error path follows"),
    Action("HostedReconcileFails", ("n",), "fault", False, "the hosted call's Tool.Success fails: the call stays open"),
    Action("StepEndedFails", ("n",), "fault", False, "the Step.Ended publication's transaction fails (the "
           "Step's tools settled): nothing durable changes, and the runner's error path follows"),
    Action("ListenerHangs", ("n",), "fault", False,
           "a listener of a committed Step event never returns (Residual R2): the runner stays at its listener "
           "gate, hung, while its node's heartbeat keeps the lease live"),
    Action("CorruptRecoveryRow", ("s", "e"), "fault", False,
           "an adversary writes a session_recovery row for Session s that reuses another Session's execution id e"),
    Action("ForgeContinuation", ("s", "e", "f"), "fault", False, "an adversary replaces recovery's pending "
           "continuation of (s, e) with a row of one flaw f (CONTINUATION_FLAWS); one-shot (fault forge)"),
    Action("RecoveryConvertAckLost", ("r",), "fault", False, "recovery worker r's conversion commits (RecoveryConvert's "
           "durable effects), its acknowledgement lost: on a connection error it keeps (Session, execution)"),
    Action("RecoveryConvertFails", ("r",), "fault", False, "recovery worker r's conversion loses its COMMIT "
           "(nothing durable changes); on the same connection error it keeps (Session, execution)"),
    # wake scans (the recovery-wake and ordinary-wake redrive; spec/README.md, decision 16)
    Action("WakeArrive", ("w",), "environment", False,
           "fresh work arrives: wake row w (a Session with new pending work) is inserted, its counter 0"),
    Action("WakeScan", (), "waker", True,
           "one waker's scan: read the window of unreserved wake rows, plan the batch (fresh rows first up to the "
           "fresh share, then retried), reserve each planned row by compare-and-set on its counter (rotating)"),
    Action("WakeRead", ("k",), "waker", True, "with Wakers > 1, waker k's read: the window and its planned batch "
           "(as WakeScan's), kept in the waker's memory with the counter observed for each row"),
    Action("WakeReserve", ("k",), "waker", True, "waker k's reservation: each planned row's compare-and-set on "
           "the counter it observed; a row whose counter moved or another waker reserved is lost to it"),
    Action("WakeServe", ("w",), "waker", True, "the woken redrive takes row w's work (an ordinary wake's "
           "acquisition, a recovery wake's promotion) and removes the row in that transaction"),
    Action("WakeSync", ("w",), "waker", True, "tied rows: wake row w (1 ordinary, 2 recovery) arrives with its work"),
    Action("WakeScanQueue", ("w",), "waker", True, "tied rows: the scan of row w's kind's queue (1 ordinary, 2 "
           "recovery) in a transaction of its own: its one row, fresh or retried, reserved by compare-and-set"),
    Action("WakeAcquire", ("n", "w", "i"), "waker", True, "tied: ordinary wake w, woken, acquires i"),
    Action("WakePromote", ("n", "w", "i"), "waker", True, "tied: recovery wake w, woken, promotes continuation i"),
    Action("WakeLost", ("w",), "environment", False, "the woken redrive of row w takes nothing (a lost race, "
           "its node died): the reservation lapses, the row waits as a retry; maybe forever (retry saturation)"),
    # inputs (constants Admission and Steering; spec/README.md decisions 17 and 18)
    Action("Admit", ("s",), "caller", False,
           "a caller admits Session s's next prompt: one transaction inserting the prompt input with its "
           "execution not yet requested (held); at most Prompts per Session"),
    Action("ExactRetry", ("s", "i", "d"), "caller", False,
           "caller s retries input id i's admission (any id: any Session's prompt or continuation, or forged, "
           "prompt 0) with content digest d (DIGESTS): the identity check (s's admitted prompt, no continuation, "
           "not recovery-owned, the admitted content; else refused, RETRY_REFUSALS), then one transaction "
           "appending its one PromptExecutionRequested (deterministic id) and arming a held prompt"),
    Action("Resume", ("n", "s"), "runner", False,
           "an explicit resume of Session s on node n: one transaction durably requesting its pending "
           "ordinary execution (every held prompt now waits), before the drain it forces (Acquire)"),
    Action("Steer", ("n", "i"), "runner", False,
           "at a Step's start runner n steers a pending input of its Session into its running execution "
           "(fenced); steer selection excludes recovery-owned inputs as queue selection does; with "
           "DeliveryKinds it takes steer-delivery inputs only, the oldest first"),
])

STATE_INVARIANTS = ("TypeOK", "AtMostOneStart", "AtMostOneTerminal", "InterruptOnlyAfterStart",
                    "MemoryFollowsDurable", "CancelLeavesNoRecovery", "RecoveryRowsIsolated",
                    "ContinuationsRecoveryOwned", "QuarantineOnlyMalformed", "OneContinuationPerRecovery",
                    "OneExecutionRequestPerPrompt", "SteerExcludesRecoveryOwned", "RequestsNameAdmittedPrompts",
                    "ScanWindowShared", "SteerTakesSteerInputs", "PromotedContinuationsValid")
# the narrower invariants come before FencedMutation: TLC reports the first action property a step breaks
ACTION_INVARIANTS = ("AcquireNeverOverwrites", "PhaseMonotonic", "ClearOnlySettled", "QuarantineOnlyByRecovery",
                     "UnknownNeverReexecuted", "ToolStartsOnce", "FencedMutation", "NoOverlappingEffects",
                     "NoPhysicalReplay", "ConversionRetryChangesNothing", "WakePlanShared", "ReservationsExclusive",
                     "ResumeRequestedBeforeDrain", "DeliveryOrder")
# Actions a caller attempts with parameters of its choosing (the others are an actor's next step, picked
# from its record): the server refuses every instance the twin does not enable (probes, `refused` steps).
ATTEMPTS = ("Acquire", "PromoteContinuation", "CancelRequest", "Heartbeat", "RecoveryScan", "Admit", "ExactRetry",
            "Resume", "Steer")
assert set(ATTEMPTS) <= set(ACTIONS)
# the actors a scheduler can ask to move (by Action.actor): any of their actions that is not an attempt is
# the actor's own next step, which it picks from its own record (a trace step marked `refused` on one
# asks the actor to move and checks it does not take that action)
STEPPING_ACTORS = ("runner", "finalizer", "recovery", "supervisor")

LIVENESS = ("SessionsEventuallyAvailable", "ExpiredClaimsEventuallyHandled", "PendingInputsEventuallyServed",
            "ContinuationsEventuallyPromoted", "FreshWorkKeepsCapacity", "RetryAdvances")
WAKE_PROPERTIES = ("WakePlanShared", "ReservationsExclusive", "FreshWorkKeepsCapacity", "RetryAdvances")  # WakeRows > 0 only

# SessionExecution refines the abstract protocol SessionLifecycle (spec/SessionLifecycle.tla) under the
# mapping in spec/SessionExecutionRefinesLifecycle.tla; TLC checks it as a PROPERTY (the twin does not)
REFINEMENT = "Refinement"
# the defects and switched-off assumptions whose counterexample TLC reports as the refinement violated, each on
# its witness configuration (tests/engines/test_refinement.py checks every one, and that the rest do not break it)
REFINEMENT_BROKEN_BY = ("unfenced-step-publication", "renew-after-expiry", "acquire-overwrites-expired",
                        "cancel-trusts-previous-step-memory", "step-failed-duplicate-interrupt", "cancel-restarts-assistant",
                        "cancel-interrupts-unstarted", "dispatch-after-failed-renewal", "cancel-requeues-continuation",
                        "conversion-retry-mints-new-ids", "TimelyDispatch", "ProcessLocalRouting", "exact-retry-appends-twice")

INVARIANTS = _index([
    Invariant("TypeOK", "state", "every variable has its declared shape"),
    Invariant("AcquireNeverOverwrites", "action",
              "an ordinary acquisition never replaces an existing claim, live or expired"),
    Invariant("FencedMutation", "action",
              "only the exact owner holding an unexpired lease changes or removes a claim or appends its "
              "Session's events (recovery takeover and quarantine excepted); its phase moves forward only, "
              "its assistant id is never dropped, a cancelling claim is never removed, and only a recovery "
              "worker's claim (never a running one) is quarantined"),
    Invariant("PhaseMonotonic", "action",
              "a claim's phase moves running -> cancelling -> cancelled or running -> recovering, never back"),
    Invariant("ClearOnlySettled", "action",
              "a claim is removed only when settled (a running claim after its assistant's terminal event, a "
              "recovering one with its assistant interrupted in the same transaction, or none started) or "
              "cancelled; and a cancellation settles (cancelling -> cancelled) only with the claim's assistant, "
              "the latest Step's, settled"),
    Invariant("QuarantineOnlyByRecovery", "action",
              "only the recovery worker that owns a claim and is quarantining it marks it quarantined, and "
              "never a running one"),
    Invariant("AtMostOneStart", "state", "no assistant has two Step.Started events"),
    Invariant("AtMostOneTerminal", "state",
              "no assistant has more than one of Step.Failed, Step.Interrupted, Step.Ended"),
    Invariant("InterruptOnlyAfterStart", "state", "a Step.Interrupted names an assistant that was started"),
    Invariant("MemoryFollowsDurable", "state",
              "publisher memory never names an assistant whose Step.Started is not committed"),
    Invariant("CancelLeavesNoRecovery", "state",
              "a cancelled execution has no session_recovery row and no continuation"),
    Invariant("NoOverlappingEffects", "action",
              "every effect (provider dispatch, tool start, a finalizer's or recovery's reconciliation, "
              "recovery's takeover: the effects history) begins under the claim identity its Session still "
              "carries (a takeover is the successor's taking), while no other node's provider call on that "
              "Session is in flight and no older owner's finalizer on it is (R003-MUST-FIX-2)"),
    Invariant("RecoveryRowsIsolated", "state",
              "every continuation has a session_recovery row of the same Session and execution"),
    Invariant("ContinuationsRecoveryOwned", "state", "ordinary selection never promotes a continuation"),
    Invariant("PromotedContinuationsValid", "state", "only a continuation recovery made is promoted: none with a "
              "flaw (a forged or corrupt row, CONTINUATION_FLAWS) is taken; the promotion quarantines it"),
    Invariant("NoPhysicalReplay", "action",
              "a provider call is dispatched only under a live lease of its exact execution, so recovery, "
              "which takes only expired claims, never re-executes a call whose outcome is uncertain"),
    Invariant("ToolStartsOnce", "action",
              "no physical tool call starts twice: a local tool effect that begins is the first of its call "
              "(Session, execution, Step), and a runner starts its physical tool only for a call none has run"),
    Invariant("UnknownNeverReexecuted", "action",
              "unknown work is reconciled, never re-executed: a local tool begins only for running work (never "
              "for unknown, recovering or cancellation-owned work), and a claim is removed only with every tool "
              "call of its execution given a durable outcome (Tool.Success, or the failure a reconciliation "
              "records) by the end of the step"),
    Invariant(REFINEMENT, "refinement",
              "SessionExecution refines SessionLifecycle: seen through the refinement mapping, every step is a "
              "step of the abstract protocol (only the live owner causes effects and writes an assistant's "
              "status, none -> open -> one terminal) or leaves it unchanged"),
    Invariant("QuarantineOnlyMalformed", "state",
              "a claim is quarantined only when its work is malformed (a session_recovery row already names "
              "its execution) or its bounded attempts are used up; never healthy work that a crash or pause "
              "interrupted, never cancellation-owned work"),
    Invariant("OneContinuationPerRecovery", "state",
              "at most one continuation per recovered (Session, execution): its id is derived from them, so a "
              "retried conversion names the continuation it created"),
    Invariant("ConversionRetryChangesNothing", "action",
              "a recovery worker leaving its retry after a lost acknowledgement (the retry itself, or a crash) "
              "changes no durable variable (claim, log, session_recovery rows, inputs, cancelled)"),
    Invariant("OneExecutionRequestPerPrompt", "state",
              "an exact retry adds exactly one PromptExecutionRequested: no prompt has two"),
    Invariant("RequestsNameAdmittedPrompts", "state",
              "every PromptExecutionRequested is a public request's of an admitted prompt of its Session with "
              "the admitted content: never a continuation (recovery's alone), never another content"),
    Invariant("SteerExcludesRecoveryOwned", "state",
              "steer selection never takes a recovery-owned input: no continuation is steered"),
    Invariant("ScanWindowShared", "state",
              "the claim scan's window holds the oldest eligible claims of each kind, as many as ScanBound "
              "allows; with a bound of two or more, fresh claims (never taken over) keep the fresh share "
              "whenever they wait and retried ones the rest: N poison claims never fill a window of N ahead of "
              "claim N+1"),
    Invariant("SteerTakesSteerInputs", "state",
              "with delivery kinds, a steer takes only an input its caller admitted with steer delivery (a "
              "queue input waits for the drain)"),
    Invariant("DeliveryOrder", "action",
              "with delivery kinds, ordinary selection (the drain's acquisition, a steer) takes no prompt while "
              "another of its Session waits ahead of it: no queue input while a steer input waits, and none "
              "while an older input of its delivery kind waits"),
    Invariant("ResumeRequestedBeforeDrain", "action",
              "ordinary selection (the drain's acquisition, a steer) takes a prompt only once its execution was "
              "durably requested (by its exact retry or an explicit resume): a resume requests before it drains"),
    Invariant("SessionsEventuallyAvailable", "liveness",
              "with fair scheduling and eventually no more faults (crash, pause, corrupt row), every claimed "
              "Session eventually has no claim, or is rejected (its claim quarantined as malformed); a Session "
              "Residual R1 quarantined (exhausted: MaxTries lost leases) is exempt, a premise"),
    Invariant("ExpiredClaimsEventuallyHandled", "liveness",
              "with fair scheduling and eventually no more crashes (pauses may go on), every expired, "
              "unquarantined claim is eventually taken over or quarantined, whatever the scan bound"),
    Invariant("PendingInputsEventuallyServed", "liveness",
              "with fair scheduling and eventually no more faults, every requested prompt (with Admission: "
              "armed by its exact retry or a resume) is eventually taken (by the drain or a steer) "
              "and its execution settled (its claim cleared after a terminal Step event, a cancellation or a "
              "conversion), or its Session rejected as malformed (Residual R1's exhausted Sessions exempt, a "
              "premise); a prompt still pending when the model's execution ids run out is the bound's, not a "
              "violation"),
    Invariant("WakePlanShared", "action",
              "a wake scan that had fresh and retried rows waiting reserves at least one of each: fresh work "
              "keeps capacity while retries saturate, and one retry advances while fresh work floods"),
    Invariant("ReservationsExclusive", "action", "a waker's reservation takes only rows no waker holds, each "
              "at the counter it observed when it read: a row another waker reserved or moved is lost to it; "
              "whoever scans, only a row with work is reserved, and a reserved row keeps its reservation until "
              "it is served or lapses"),
    Invariant("FreshWorkKeepsCapacity", "liveness",
              "with fair scheduling and eventually no more fresh arrivals (woken rows may be lost forever: "
              "retry saturation), every fresh wake row is eventually woken"),
    Invariant("RetryAdvances", "liveness",
              "with fair scheduling (fresh work may keep arriving and woken rows may keep being lost), every "
              "retried wake row is eventually woken (per row: retried rows take their slots in rounds)"),
    Invariant("ContinuationsEventuallyPromoted", "liveness",
              "with fair scheduling and eventually no more faults, every continuation recovery created is "
              "eventually promoted, or its Session rejected as malformed (or the execution ids run out; "
              "Residual R1's exhausted Sessions exempt, a premise)"),
])


def check_defects(names) -> tuple[str, ...]:
    """Validate defect names from a user; raise UnknownName naming the unknown one."""
    for name in names:
        if name not in DEFECTS:
            raise UnknownName(f"unknown defect {name!r}; known: {', '.join(DEFECTS)}")
    return tuple(sorted(set(names)))

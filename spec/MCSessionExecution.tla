-------------------------- MODULE MCSessionExecution --------------------------
(***************************************************************************)
(* What TLC model-checks: the protocol (SessionExecution), its refinement  *)
(* of the abstract protocol (SessionExecutionRefinesLifecycle), and what   *)
(* is model checking, not protocol, as CCF keeps ccfraft.tla and           *)
(* MCccfraft.tla apart.  The generated spec/MC_*.cfg files configure this  *)
(* module (spec/configs.py writes them).                                   *)
(*                                                                         *)
(* The defect switches live here, not in the protocol: `Defects` names the *)
(* known defects switched on (spec/names.py), and each of the protocol's   *)
(* hooks has an MC<Hook> below, its defective alternatives first and the   *)
(* protocol's own hook (Protocol!<Hook>) otherwise.  Every MC_*.cfg        *)
(* overrides every hook (`Hook <- MCHook`), with `Defects = {}` too, so    *)
(* the correct protocol is checked through the same overrides as a defect. *)
(*                                                                         *)
(* The protocol's hook is reached through the INSTANCE below, never by its *)
(* own name: TLC applies `Hook <- MCHook` to every use of the name `Hook`  *)
(* (so MCHook calling Hook would call itself), but not to Protocol!Hook,   *)
(* the instance's own copy of the definition; inside that copy, uses of    *)
(* other hooks are overridden as everywhere else.                          *)
(*                                                                         *)
(* What stays in the protocol: the model's bounds (Prompts, MaxExec,       *)
(* MaxSteps, Tools, MaxTries, Lease, ScanBound, Grace, SupervisionLag,   *)
(* the wake constants), the environment's Faults, Admission, Steering and *)
(* the assumptions; spec/README.md, "Model checking apart from the         *)
(* protocol", says why.                                                    *)
(***************************************************************************)
EXTENDS SessionExecutionRefinesLifecycle, TLC

CONSTANT
    \* @type: Set(Str);
    Defects         \* known defects switched on (names in spec/names.py)

Has(d) == d \in Defects

Protocol == INSTANCE SessionExecution

\* unsupervised-cancel-heartbeat: the finalizer's heartbeat is not supervised and its step not checked
MCFinalizerSupervised(f) ==
    IF Has("unsupervised-cancel-heartbeat") THEN TRUE ELSE Protocol!FinalizerSupervised(f)

\* recovery-input-in-ordinary-queue: ordinary selection takes recovery-owned continuations too
MCOrdinarySelects(i) ==
    IF Has("recovery-input-in-ordinary-queue") THEN TRUE ELSE Protocol!OrdinarySelects(i)

\* acquire-overwrites-expired: ordinary acquisition overwrites an expired claim
MCClaimFree(s, ordinary) ==
    IF Has("acquire-overwrites-expired") THEN Protocol!ClaimFree(s, ordinary) \/ (ordinary /\ claim[s].ttl <= 0)
    ELSE Protocol!ClaimFree(s, ordinary)

\* recovery-input-excluded-everywhere: the promotion reuses ordinary selection's exclusion
MCPromotionOwned(i) ==
    IF Has("recovery-input-excluded-everywhere") THEN ~HasRow(i.sess, i.src) ELSE Protocol!PromotionOwned(i)

\* promotion-ignores-<flaw> (one per spec/names.py CONTINUATION_FLAWS): the promotion's validation omits that
\* check, so a continuation row with that flaw is promoted
MCContinuationValid(i) ==
    IF \/ Has("promotion-ignores-id") /\ i.flaw = "id"
       \/ Has("promotion-ignores-session") /\ i.flaw = "session"
       \/ Has("promotion-ignores-delivery") /\ i.flaw = "delivery"
       \/ Has("promotion-ignores-prompt") /\ i.flaw = "prompt"
       \/ Has("promotion-ignores-assistant") /\ i.flaw = "assistant"
       \/ Has("promotion-ignores-newest") /\ i.flaw = "newest"
       \/ Has("promotion-ignores-synthetic") /\ i.flaw = "synthetic"
    THEN TRUE ELSE Protocol!ContinuationValid(i)

\* renew-after-expiry: the renewal (and the heartbeat, below) accepts an expired lease
MCRenewAccepts(c, r, n) ==
    IF Has("renew-after-expiry") THEN c.exec = r.exec /\ c.owner = n ELSE Protocol!RenewAccepts(c, r, n)

\* dispatch-after-failed-renewal: a failed renewal's row count is ignored and the runner goes on
MCFailedRenewalPc ==
    IF Has("dispatch-after-failed-renewal") THEN "renewed" ELSE Protocol!FailedRenewalPc

\* unfenced-step-publication: Step events are published without the fence
MCPublishOK(n) ==
    IF Has("unfenced-step-publication") THEN TRUE ELSE Protocol!PublishOK(n)

\* memory-before-publish: publisher memory is set in the commit's step, before the publish returns
MCMemoryAtCommit ==
    IF Has("memory-before-publish") THEN TRUE ELSE Protocol!MemoryAtCommit

\* cancel-interrupts-unstarted: with none attached, the assistant is derived from the execution (its first
\* Step's), not read (with one attached, that is the one derived, with MaxSteps = 1);
\* cancel-trusts-previous-step-memory: publisher memory names the assistant whenever it names one, so
\* between a later Step's Step.Started commit and its return it names the earlier Step's, completed
MCSettledAssistant(f, c, mem) ==
    IF Has("cancel-interrupts-unstarted") /\ c.asst = 0 THEN Asst(f.exec, 1)
    ELSE IF Has("cancel-trusts-previous-step-memory") /\ mem # 0 THEN mem
    ELSE Protocol!SettledAssistant(f, c, mem)

\* step-failed-duplicate-interrupt: publisher memory still names the assistant as active, so it is
\* interrupted again after its Step.Failed
MCInterruptOwed(settle, a, mem, active) ==
    IF Has("step-failed-duplicate-interrupt") /\ active /\ mem = a THEN TRUE
    ELSE Protocol!InterruptOwed(settle, a, mem, active)

\* cancel-restarts-assistant: memory has no assistant, so it starts one again, and that commits
MCRestartCommits(a, mem) ==
    IF Has("cancel-restarts-assistant") THEN a # 0 /\ mem = 0 ELSE Protocol!RestartCommits(a, mem)

\* step-started-window: memory has no assistant, the restart is rejected and the finalizer retries, live
MCRestartRejected(a, mem) ==
    IF Has("step-started-window") THEN a # 0 /\ mem = 0 ELSE Protocol!RestartRejected(a, mem)

\* flush-without-assistant: the finalizer's flush of a fragment with no assistant in memory raises; it
\* retries, live, under its supervised heartbeat
MCFlushRaises(mem, active) ==
    IF Has("flush-without-assistant") THEN active /\ mem = 0 ELSE Protocol!FlushRaises(mem, active)

\* cancel-requeues-continuation: the cancellation's clear inserts a session_recovery row (the insert's
\* conflict ignored) and a continuation, as conversion does
MCCancelRequeues ==
    IF Has("cancel-requeues-continuation") THEN TRUE ELSE Protocol!CancelRequeues

\* renew-after-expiry (as MCRenewAccepts): a heartbeat renews an expired lease
MCHeartbeatAccepts(c) ==
    IF Has("renew-after-expiry") THEN TRUE ELSE Protocol!HeartbeatAccepts(c)

\* heartbeat-extends-lease: the lease grows by Lease from what remains of it, not from now
MCRenewedTtl(c) ==
    IF Has("heartbeat-extends-lease") THEN c.ttl + Lease ELSE Protocol!RenewedTtl(c)

\* takeover-trusts-scan: the compare-and-swap trusts the scan (execution and quarantine flag only)
MCTakeoverMatches(c, w) ==
    IF Has("takeover-trusts-scan") THEN c.exec = w.exec /\ ~c.quar ELSE Protocol!TakeoverMatches(c, w)

\* scan-quarantines-cancellation: the takeover quarantines cancellation-owned work in place
MCTakeoverQuarantines(c) ==
    IF Has("scan-quarantines-cancellation") THEN c.phase \in {"cancelling", "cancelled"}
    ELSE Protocol!TakeoverQuarantines(c)

\* takeover-overwrites-phase: the takeover sets recovering whatever the phase
MCTakeoverPhase(c) ==
    IF Has("takeover-overwrites-phase") THEN "recovering" ELSE Protocol!TakeoverPhase(c)

\* cross-session-recovery-collision: validation looks for a row of this Session only;
\* conversion-conflicts-on-own-row: any row naming the execution is a conflict, its own Session's too
MCConversionConflict(w) ==
    IF Has("cross-session-recovery-collision") THEN HasRow(w.sess, w.exec)
    ELSE IF Has("conversion-conflicts-on-own-row") THEN RowForExec(w.exec)
    ELSE Protocol!ConversionConflict(w)

\* recovery-retries-unbounded: a conversion that lost its lease is always released for a retry
MCMayRetry(c) ==
    IF Has("recovery-retries-unbounded") THEN TRUE ELSE Protocol!MayRetry(c)

\* cancellation-quarantine-strands: cancellation-owned work is quarantined, not finished
MCFinishesCancellation(c) ==
    IF Has("cancellation-quarantine-strands") THEN FALSE ELSE Protocol!FinishesCancellation(c)

\* conversion-leaves-assistant-open: conversion publishes no Step.Interrupted for an open assistant
MCConversionSettles ==
    IF Has("conversion-leaves-assistant-open") THEN FALSE ELSE Protocol!ConversionSettles

\* silent-quarantine-noop: the quarantine adds a lease predicate, and a worker whose lease expired
\* changes zero rows, silently
MCQuarantineMatches(c, w, r) ==
    IF Has("silent-quarantine-noop") THEN Protocol!QuarantineMatches(c, w, r) /\ c.ttl > 0
    ELSE Protocol!QuarantineMatches(c, w, r)

\* conversion-retry-mints-new-ids: the continuation id is minted per attempt, not derived from Session and
\* execution, so a retry after a lost acknowledgement does not find the continuation it created
MCContinuationGen(attempt) ==
    IF Has("conversion-retry-mints-new-ids") THEN attempt ELSE Protocol!ContinuationGen(attempt)
\* reconvert-replay-leaves-assistant-open: the retry that does not find its own committed work replays the
\* conversion without its settling Step.Interrupted (as if the first attempt's had committed)
MCReplaySettles ==
    IF Has("reconvert-replay-leaves-assistant-open") THEN FALSE ELSE Protocol!ReplaySettles
\* wake-fresh-share-zero: no slot of a wake batch is kept for fresh rows (retries fill it first);
\* wake-fresh-share-full: every slot is (fresh rows fill it first, no retry advances)
MCFreshSlots ==
    IF Has("wake-fresh-share-zero") THEN 0
    ELSE IF Has("wake-fresh-share-full") THEN WakeBatch
    ELSE Protocol!FreshSlots
\* scan-window-ignores-fresh-share: the claim scan's window is the oldest ScanBound eligible claims whatever
\* their kind, so retried poison claims fill it ahead of a fresh one
MCScanPlansByKind ==
    IF Has("scan-window-ignores-fresh-share") THEN FALSE ELSE Protocol!ScanPlansByKind
\* wake-retry-oldest-first: retried wake rows take their slots oldest first, with no rounds, so a poison
\* retried row woken and lost for ever takes every retry slot ahead of a younger one
MCRetryRounds ==
    IF Has("wake-retry-oldest-first") THEN FALSE ELSE Protocol!RetryRounds
\* wake-reserve-without-cas: a waker's reservation updates each planned row by its id alone, with no
\* compare-and-set on the counter it observed: it takes a row another waker reserved since its read
MCReserveMatches(p) ==
    IF Has("wake-reserve-without-cas") THEN wakes[p.row].work ELSE Protocol!ReserveMatches(p)
\* wake-serves-regardless: a woken ordinary wake (WakesTied) acquires any pending input of its Session,
\* a continuation recovery owns too
MCWakeSelects(i) ==
    IF Has("wake-serves-regardless") THEN TRUE ELSE Protocol!WakeSelects(i)
\* exact-retry-appends-twice: the retry's idempotency check reads the input's projection (is it waiting?)
\* instead of the deterministic request id, and every request arms the prompt: once the prompt was taken, a
\* retry appends a second PromptExecutionRequested and the prompt waits to run again
MCRetryAppends(j) ==
    IF Has("exact-retry-appends-twice") THEN j.state # "pending" ELSE Protocol!RetryAppends(j)
MCRequestArms(j) ==
    IF Has("exact-retry-appends-twice") THEN TRUE ELSE Protocol!RequestArms(j)

\* exact-retry-arms-continuation: the identity check asks only whether recovery has taken the input, not
\* its kind: a public retry names a continuation and its request is appended (R003-MUST-FIX-1's impact)
MCRetryRefusesContinuation(j) ==
    IF Has("exact-retry-arms-continuation") THEN FALSE ELSE Protocol!RetryRefusesContinuation(j)

\* exact-retry-ignores-content: the identity check compares the id only, not the content's digest: a retry
\* with another content is taken as the admitted prompt's
MCRetryContentMatches(d) ==
    IF Has("exact-retry-ignores-content") THEN TRUE ELSE Protocol!RetryContentMatches(d)

\* resume-drains-without-request: the resume forces the drain with no durable request first; the drain
\* takes a held prompt at once (on a busy Session nothing would be left to redrive it)
MCResumeRequests ==
    IF Has("resume-drains-without-request") THEN FALSE ELSE Protocol!ResumeRequests

\* steer-selects-recovery-input: steer selection omits the exclusion of recovery-owned inputs
MCSteerSelects(i) ==
    IF Has("steer-selects-recovery-input") THEN TRUE ELSE Protocol!SteerSelects(i)

\* steer-takes-queued-input: steer selection ignores the delivery kind
MCSteerTakesKind(i) ==
    IF Has("steer-takes-queued-input") THEN TRUE ELSE Protocol!SteerTakesKind(i)

\* queue-before-steer: the drain orders by age alone (no steer input goes ahead of a queue one)
MCKindAhead(j, i) ==
    IF Has("queue-before-steer") THEN FALSE ELSE Protocol!KindAhead(j, i)

\* selection-ignores-age: ordinary selection takes any waiting input of a delivery kind, not the oldest
MCAgeAhead(j, i) ==
    IF Has("selection-ignores-age") THEN FALSE ELSE Protocol!AgeAhead(j, i)
\* tool-settled-before-publication: the runner's tool-settlement flag is set before Tool.Success is
\* published, so after a failed publication the runner goes on as if the call were settled
MCSettlementFlagEarly ==
    IF Has("tool-settled-before-publication") THEN TRUE ELSE Protocol!SettlementFlagEarly

\* recovery-reruns-unknown-tool: conversion re-runs the physical tool of a call whose outcome is uncertain
\* (then publishes its Tool.Success) instead of recording the call as failed
MCConversionReruns ==
    IF Has("recovery-reruns-unknown-tool") THEN TRUE ELSE Protocol!ConversionReruns

\* retry-tool-after-failed-publication: after a failed Tool.Success the runner runs the tool again (and
\* publishes again) instead of marking the claim unknown
MCRetriesFailedTool ==
    IF Has("retry-tool-after-failed-publication") THEN TRUE ELSE Protocol!RetriesFailedTool

\* tool-call-identified-by-step: a reconciliation identifies a tool call by its Step alone (no call index):
\* an outcome of any call of the Step reads as the outcome of every call started in it
MCReconcilesCall(a, i) ==
    IF Has("tool-call-identified-by-step")
    THEN CallStarted(a, i) /\ ~\E k \in DOMAIN log : log[k].kind \in ToolOutcomes /\ log[k].asst = a
    \* reconciliation-skips-hosted-call: a reconciliation settles only calls a Tool.Started records (never the
    \* hosted call, whose start is its Step.Started)
    ELSE IF Has("reconciliation-skips-hosted-call") THEN Protocol!ReconcilesCall(a, i) /\ i # HostedCall
    ELSE Protocol!ReconcilesCall(a, i)

\* step-ended-before-hosted-tool: the runner goes on from Step.Started's return without reconciling the Step's
\* hosted call (its local tools, then Step.Ended)
MCReconcilesHosted ==
    IF Has("step-ended-before-hosted-tool") THEN FALSE ELSE Protocol!ReconcilesHosted

\* symmetry (TLC's SYMMETRY; spec/symmetry.py says why it is sound, and the twin's canonical form): with
\* Nodes (and Sessions) as model values in the generated .cfg, the permutations TLC reduces states by
NodeSymmetry == Permutations(Nodes)
NodeSessionSymmetry == Permutations(Nodes) \cup Permutations(Sessions)
=============================================================================

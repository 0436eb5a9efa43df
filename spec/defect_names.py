"""The registry's defects, part of the registry (spec.names re-exports them): each a realistic bug the spec
can switch on through its hooks, with the invariants or properties it breaks, the finding it stands for and
the configuration whose graph shows it (spec/README.md, "Defect table")."""

from __future__ import annotations

from .flaw_names import FLAW_DEFECTS
from .records import Defect, _index

DEFECTS = _index([
    Defect("step-started-window", ("SessionsEventuallyAvailable", "PendingInputsEventuallyServed"), "R000-v18",
           "cancellation asks publisher memory for the assistant; between Step.Started's commit and its "
           "return it starts the assistant again, the start is rejected, and the finalizer retries under "
           "its live heartbeat: the claim stays cancelling"),
    Defect("step-failed-duplicate-interrupt", ("AtMostOneTerminal",), "R000-v17",
           "cancellation trusts publisher memory's active flag instead of the durable assistant and "
           "publishes Step.Interrupted after Step.Failed committed"),
    Defect("cross-session-recovery-collision", ("RecoveryRowsIsolated",), "R003-MUST-FIX-1",
           "the recovery existence check is scoped by execution and Session; the insert's conflict is "
           "ignored, the claim is cleared without a row, and the continuation, owned by no row, is "
           "selected as ordinary work once an execution id is left (ContinuationsRecoveryOwned, MaxExec 2)",
           "rows"),
    Defect("unsupervised-cancel-heartbeat", ("NoOverlappingEffects",), "R003-MUST-FIX-2",
           "the cancellation heartbeat's failure is never observed; the finalizer keeps running after "
           "its lease expired and recovery took over"),
    Defect("silent-quarantine-noop", ("ExpiredClaimsEventuallyHandled",), "R003-MUST-FIX-3",
           "quarantine requires an unexpired lease and ignores its row count; a conversion that outlasts "
           "its lease leaves the claim eligible and the oldest-first scan starves later claims", "sessions"),
    Defect("memory-before-publish", ("MemoryFollowsDurable",), "R003-CONCERN",
           "publisher memory is set before Step.Started commits; a failed publication leaves it set"),
    Defect("acquire-overwrites-expired", ("AcquireNeverOverwrites",),
           "R000-acquire, R003-PASS-ordinary-acquisition (regression guard)",
           "ordinary acquisition upserts over an expired claim", "prompts"),
    Defect("renew-after-expiry", ("FencedMutation",),
           "R000-PASS-cleanup, R003-PASS-claim-fencing (regression guard)",
           "renewal accepts an expired lease"),
    Defect("recovery-input-in-ordinary-queue", ("ContinuationsRecoveryOwned",),
           "R000-PASS-recovery-identity (regression guard)",
           "ordinary selection includes recovery-owned continuations"),
    Defect("unfenced-step-publication", ("FencedMutation",), "R000-PASS-fencing (regression guard)",
           "Step events are published without the claim fence, so a stale owner keeps appending"),
    Defect("takeover-trusts-scan", ("FencedMutation",), "R003-PASS-recovery-acquisition (regression guard)",
           "the takeover's compare-and-swap matches Session and execution only, trusting its scan for the "
           "former owner and the expired lease; a second worker that scanned the same row takes the claim "
           "from the first under its live lease", "workers"),
    Defect("takeover-overwrites-phase", ("PhaseMonotonic", "FencedMutation"),
           "R000-PASS-recovery-scheduling (regression guard)",
           "the takeover's compare-and-swap writes phase recovering unconditionally, so an expired "
           "cancelling or cancelled claim moves back to be recovered as if it were running"),
    Defect("conversion-leaves-assistant-open", ("ClearOnlySettled",),
           "R003-PASS-stream-settlement (regression guard)",
           "recovery's conversion clears the claim and creates the continuation without publishing "
           "Step.Interrupted for the started, open assistant"),
    Defect("scan-quarantines-cancellation", ("QuarantineOnlyMalformed", "QuarantineOnlyByRecovery", "FencedMutation"),
           "R000-PASS-recovery-scheduling (regression guard)",
           "the recovery scan marks an expired cancellation-owned claim quarantined in place instead of "
           "taking it over first, so a claim the node still owns is quarantined by no owner of it"),
    Defect("cancellation-quarantine-strands", ("QuarantineOnlyMalformed", "SessionsEventuallyAvailable",
                                                "PendingInputsEventuallyServed"),
           "R000-v18-strand",
           "recovery quarantines expired cancellation-owned work (the reviewed behaviour) instead of "
           "finishing it: the assistant never gets a terminal event and the Session refuses every later prompt"),
    Defect("recovery-retries-unbounded", ("ExpiredClaimsEventuallyHandled",), "R003-MUST-FIX-3",
           "the attempts recorded on the claim are never compared with the bound: a claim whose conversion "
           "keeps losing its lease is taken over again and again and the oldest-first scan starves the "
           "claims behind it", "sessions"),
    Defect("recovery-input-excluded-everywhere", ("ContinuationsEventuallyPromoted",),
           "R000-PASS-recovery-identity",
           "the promotion path reuses ordinary selection's exclusion of recovery-owned inputs, so no path "
           "selects a continuation and it waits forever", "lag"),
    Defect("heartbeat-extends-lease", ("TypeOK",), "R003-PASS-wall-clock (regression guard)",
           "the heartbeat adds a lease to the lease's remaining time (lease_expires_at + lease) instead of "
           "renewing it to now + lease, so a lease outlives the bound the lease/skew condition relies on",
           "heartbeat"),
    Defect("cancel-restarts-assistant", ("AtMostOneStart",), "R000-v18 (the start that commits)",
           "cancellation asks publisher memory for the assistant; between Step.Started's commit and its "
           "return it starts the assistant again, and the restart, fenced by identity and lease but not "
           "phase, commits: a second Step.Started for the execution, then Step.Interrupted"),
    Defect("cancel-interrupts-unstarted", ("InterruptOnlyAfterStart",),
           "R003-PASS-stream-settlement (regression guard)",
           "the finalizer settles the assistant id derived from the execution instead of the one the claim "
           "names, and publishes Step.Interrupted for it even when no assistant was started"),
    Defect("dispatch-after-failed-renewal", ("NoPhysicalReplay",),
           "R003-PASS-accepted-residual, R000-PASS-fencing (regression guard)",
           "the pre-dispatch renewal's row count is ignored: a runner whose renewal failed (lease expired, "
           "claim taken over or gone) goes on to dispatch the provider call"),
    Defect("cancel-trusts-previous-step-memory", ("ClearOnlySettled",),
           "R000-v18 (the window in a later Step)",
           "cancellation takes the assistant from publisher memory whenever it names one; between Step k's "
           "Step.Started commit and its return memory still names Step k-1's completed assistant, so the "
           "finalizer settles that one without an event and the cancelled claim is cleared with Step k's "
           "assistant open", "steps"),
    Defect("recovery-reruns-unknown-tool", ("UnknownNeverReexecuted", "ToolStartsOnce"),
           "R003-PASS-tool-publication-failure",
           "recovery's conversion of unknown (or recovering) work re-runs the physical tool of a call whose "
           "outcome is uncertain, then publishes its Tool.Success, instead of recording the call as failed: "
           "the tool runs twice", "tools"),
    Defect("tool-settled-before-publication", ("UnknownNeverReexecuted",), "R003-PASS-tool-publication-failure",
           "the runner sets its tool-settlement flag before Tool.Success is published; after a failed "
           "publication it goes on as if the call were settled, publishes Step.Ended and clears the claim "
           "with the call's outcome never recorded", "tools"),
    Defect("retry-tool-after-failed-publication", ("ToolStartsOnce",), "R003-PASS-tool-publication-failure",
           "after a failed Tool.Success publication the runner's error path runs the physical tool again and "
           "publishes again, instead of leaving the call unsettled and the claim unknown: the tool runs twice",
           "tools"),
    Defect("tool-call-identified-by-step", ("UnknownNeverReexecuted",), "R003-PASS-tool-publication-failure",
           "a reconciliation (recovery's conversion, the finalizer's settlement, recovery's finishing of a "
           "cancellation) identifies a local tool call by its Step alone, without its call index: once the "
           "Step's first call has Tool.Success, its second call's recorded start reads as settled, so a "
           "second call whose Tool.Success failed is never reconciled and the claim is removed with it open",
           "tools2"),
    Defect("step-ended-before-hosted-tool", ("UnknownNeverReexecuted",), "R003-PASS-step-ending", "the runner "
           "goes on from Step.Started's return without reconciling the Step's hosted call: its Step ends (Step.Ended, "
           "or Step.Failed) and the claim is removed with the hosted call's outcome never recorded", "hosted"),
    Defect("reconciliation-skips-hosted-call", ("UnknownNeverReexecuted",), "R003-PASS-step-ending", "a reconciliation "
           "settles only calls a Tool.Started records: an open hosted call stays open as the claim is removed", "hosted"),
    Defect("flush-without-assistant", ("SessionsEventuallyAvailable", "PendingInputsEventuallyServed"), "R000-v18-flush",
           "the finalizer flushes publisher memory's open stream fragment, and the flush raises when memory "
           "names no assistant: the finalizer neither settles nor clears and retries under its supervised "
           "heartbeat, which keeps the lease live, so the claim stays cancelling and the Session is stranded",
           "fragments"),
    Defect("cancel-requeues-continuation", ("CancelLeavesNoRecovery",),
           "R000-v18 (its regression: cancellation leaves no recovery state), R000-PASS-recovery-scheduling",
           "the finalizer's clear hands the cancelled execution to recovery's bookkeeping: it inserts a "
           "session_recovery row and a continuation, so work the caller cancelled is resumed"),
    Defect("conversion-retry-mints-new-ids", ("OneContinuationPerRecovery", "ConversionRetryChangesNothing"),
           "R000-PASS-recovery-identity",
           "the continuation id is minted per attempt, not derived from Session and execution: a conversion "
           "retried after its lost acknowledgement does not find the continuation it created and creates a "
           "second one for the same recovered execution", "retries"),
    Defect("reconvert-replay-leaves-assistant-open", ("ClearOnlySettled",), "R000-PASS-recovery-identity",
           "the retry of a conversion whose COMMIT was lost replays it without its settling Step.Interrupted: "
           "the claim is cleared with its assistant open", "retries"),
    Defect("conversion-conflicts-on-own-row", ("QuarantineOnlyMalformed",), "R000-PASS-recovery-identity",
           "any session_recovery row naming the execution is a conflict, its own Session's too: after a retry replayed "
           "its keyed writes with its lease expired, the next takeover quarantines the healthy Session", "replays"),
    Defect("wake-fresh-share-zero", ("WakePlanShared", "FreshWorkKeepsCapacity"), "R003-PASS-scanner-bounds",
           "the wake scan keeps no slot for fresh rows (fresh share 0): retried rows fill the batch first, and "
           "while woken rows keep being lost a fresh row is never woken", "wakes"),
    Defect("wake-fresh-share-full", ("WakePlanShared", "RetryAdvances"), "R003-PASS-scanner-bounds",
           "the wake scan keeps every slot for fresh rows (fresh share = the batch): while fresh work keeps "
           "arriving no retried row is ever woken", "wakes"),
    Defect("wake-retry-oldest-first", ("RetryAdvances",), "R003-PASS-scanner-bounds",
           "retried wake rows take their slots oldest first, with no rounds (issue 31 item 3): a poison retried "
           "row, woken and lost for ever, takes every retry slot while fresh work keeps arriving, and a younger "
           "retried row is never woken", "wakes"),
    Defect("wake-reserve-without-cas", ("ReservationsExclusive",), "R003-PASS-wake-reservations", "a waker's "
           "reservation updates each planned row by its id alone, no compare-and-set on the counter it observed: "
           "two wakers that read the same window both reserve a row, the second over the first's", "wakes2"),
    Defect("wake-serves-regardless", ("ContinuationsRecoveryOwned",), "R000-PASS-recovery-scheduling", "a woken "
           "ordinary wake (tied rows) acquires any pending input of its Session: after a crash recovery's "
           "continuation waits, and the ordinary wake runs it as ordinary work", "wakestied"),
    Defect("scan-window-ignores-fresh-share", ("ScanWindowShared",), "R003-MUST-FIX-3, R003-PASS-scanner-bounds",
           "the claim scan's window is the oldest ScanBound eligible claims whatever their kind (the reviewed "
           "code's first version): ScanBound poison claims, retried again and again, fill it and the fresh "
           "claim behind them waits", "leftclaims"),
    Defect("exact-retry-appends-twice", ("OneExecutionRequestPerPrompt",),
           "R003-PASS-prompt-intent-replay",
           "the exact retry's idempotency check reads the input's projection (is it waiting?) instead of the "
           "deterministic request id: once the prompt was taken, a retry appends a second "
           "PromptExecutionRequested, which arms the prompt to run again", "inputs"),
    Defect("exact-retry-arms-continuation", ("RequestsNameAdmittedPrompts",), "R003-MUST-FIX-1",
           "the exact retry's identity check asks whether recovery has taken the input (the reviewed code: "
           "is it recovery-owned?) instead of its kind: a public retry naming a continuation not yet promoted "
           "is taken, its PromptExecutionRequested naming the continuation", "boundary"),
    Defect("exact-retry-ignores-content", ("RequestsNameAdmittedPrompts",), "R003-MUST-FIX-1",
           "the exact retry's identity check compares the input id, not the content's digest: a retry with "
           "another content is taken as the admitted prompt's, its request recording content never admitted",
           "inputs"),
    Defect("resume-drains-without-request", ("ResumeRequestedBeforeDrain",),
           "R000-PASS-resume-and-bounds",
           "explicit resume forces the drain without first durably requesting pending ordinary execution: the "
           "drain takes a held prompt no request names, and a resume whose drain finds the Session busy (or "
           "whose node dies first) leaves nothing to redrive it", "inputs"),
    Defect("steer-selects-recovery-input", ("SteerExcludesRecoveryOwned",),
           "R000-PASS-recovery-identity (steer selection)",
           "steer selection omits the exclusion of recovery-owned inputs that queue selection has: a running "
           "execution steers recovery's continuation into itself, which only recovery may promote", "steer"),
    # delivery kinds (constant DeliveryKinds; spec/README.md decision 27)
    Defect("steer-takes-queued-input", ("SteerTakesSteerInputs",),
           "R000-PASS-recovery-identity (ordinary steer/queue selection)",
           "steer selection ignores the delivery kind: a running execution steers an input its caller "
           "queued, which was to wait for the drain after the execution", "delivery"),
    Defect("queue-before-steer", ("DeliveryOrder",),
           "R000-PASS-recovery-identity (ordinary steer/queue selection)",
           "the drain orders its selection by age alone, not steer before queue: it takes a queue input "
           "while a steer input of the Session waits", "delivery"),
    Defect("selection-ignores-age", ("DeliveryOrder",),
           "R000-PASS-recovery-identity (ordinary steer/queue selection)",
           "ordinary selection takes any waiting input of a delivery kind, not the oldest: a younger input "
           "runs while an older one of its kind waits", "delivery"),
])

DEFECTS.update(FLAW_DEFECTS)  # the promotion's validation, one defect per check (spec/flaw_names.py)

"""The implementation's named boundaries (failpoints), part of the registry: spec.names re-exports them."""

from __future__ import annotations

from .records import Boundary, _index

# Named boundaries (failpoints) of the implementation: each sits where the spec splits one code path
# into two actions, so the deterministic scheduler can hold an actor exactly between them.
BOUNDARIES = _index([
    Boundary("acquire.committed", "Acquire", "Renew", "after the claim insert commits",
             also=("PromoteContinuation", "WakeAcquire", "WakePromote")),  # each inserts the claim as Acquire does
    Boundary("renew.committed", "Renew", "Dispatch", "between the pre-dispatch renewal and the provider call"),
    Boundary("provider.dispatched", "Dispatch", "PublishStepStarted", "the provider call is in flight"),
    Boundary("fragment.opened", "OpenFragment", "PublishStepStarted",
             "a partial stream fragment is open in the publisher; memory names no assistant, Step.Started is "
             "not published (the listener boundary of R000-v18-flush)"),
    Boundary("step_started.committed", "PublishStepStarted", "StepStartedReturn",
             "Step.Started committed; listeners have not returned (the listener gate)"),
    Boundary("tool.started", "ToolStart", "ToolRun",
             "the tool call is recorded and the lease renewed; the physical tool has not run"),
    Boundary("tool.ran", "ToolRun", "PublishToolSuccess",
             "the physical tool ran; Tool.Success is not published"),
    Boundary("tool.publish_failed", "ToolSuccessFails", "MarkUnknown",
             "the Tool.Success publication failed; the claim is not yet unknown"),
    Boundary("step_failed.committed", "PublishStepFailed", "StepFailedReturn",
             "Step.Failed committed; listeners have not returned (the listener gate)"),
    Boundary("step_ended.committed", "PublishStepEnded", "StepEndedReturn",
             "Step.Ended committed; listeners have not returned (the listener gate); after the last Step the "
             "runner's return is its release, ClearClaim"),
    Boundary("cancel.requested", "CancelRequest", "FinalizerReconcile", "phase is cancelling; finalizer waits"),
    Boundary("finalizer.reconciling", "FinalizerReconcile", "FinalizerSettle",
             "the finalizer's reconciliation began (an effect); its fenced settlement has not run"),
    Boundary("finalizer.settled", "FinalizerSettle", "FinalizerClear", "phase is cancelled"),
    Boundary("recovery.scanned", "RecoveryScan", "RecoveryTakeover",
             "the scan window was read; the compare-and-swap on the row it saw has not run"),
    Boundary("recovery.taken_over", "RecoveryTakeover", "RecoveryReconcile", "the CAS committed"),
    Boundary("recovery.reconciling", "RecoveryReconcile", "RecoveryConvert",
             "recovery's reconciliation began (an effect); its fenced conversion has not run"),
    Boundary("recovery.convert_failed", "RecoveryConvert", "RecoveryQuarantine",
             "conversion refused or lost its lease"),
    Boundary("recovery.converted", "RecoveryConvertAckLost", "RecoveryReconvert",
             "the conversion committed; its acknowledgement is lost (the worker sees a connection error) and "
             "the retry has not run"),
    Boundary("wake.reserved", "WakeScan", "WakeServe",
             "the wake batch is reserved (counters moved by compare-and-set); no woken redrive has run",
             also=("WakeScanQueue", "WakeReserve")),  # a tied queue's scan, a racing waker's reservation
    Boundary("resume.requested", "Resume", "Acquire",
             "the resume's durable request committed; the drain it forces has not run"),
])

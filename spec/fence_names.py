"""The fenced actions and the fence branches no gate configuration reaches, each with why (part of the
registry: spec.names re-exports both; harness/engines/fences.py prints the table)."""

from __future__ import annotations

# the actions that read their actor's claim by identity before they write (harness/engines/fences.py: each
# takes one of three branches, held, expired or replaced, and the gate prints which its configurations reach)
FENCED_ACTIONS = ("Renew", "PublishStepStarted", "Steer", "HostedReconcile", "ToolStart", "PublishToolSuccess", "MarkUnknown",
                  "PublishStepFailed", "PublishStepEnded", "ClearClaim", "FinalizerReconcile", "FinalizerSettle",
                  "FinalizerClear", "RecoveryTakeover", "RecoveryConvert", "RecoveryQuarantine", "RecoveryReconvert")
# (action, branch) no gate configuration reaches, each with why: the protocol rules it out, the failed fence
# is a refusal (no edge: conformance's refusal probes cover it), or a gap the configurations leave (named;
# the gate fails when a branch outside this table has no edge, or a branch in it has one)
_SUPERVISED = ("ruled out under SynchronizedClocks (Grace >= SupervisionLag): the node's supervision stops its "
               "runner or finalizer before a successor can take the claim over, and a cancellation's finalizer "
               "waits for its own runner to stop; with the assumption off it is reached (tests/engines/test_fences.py)")
FENCE_UNREACHABLE: dict[tuple[str, str], str] = {
    ("Steer", "expired"): "a refusal: a steer whose fence fails is not enabled (no edge); conformance probes it",
    ("Steer", "replaced"): "a refusal: as its expired branch",
    **{(a, "replaced"): _SUPERVISED
       for a in ("Renew", "PublishStepStarted", "HostedReconcile", "ToolStart", "PublishToolSuccess", "MarkUnknown",
                 "PublishStepFailed", "PublishStepEnded", "ClearClaim", "FinalizerReconcile", "FinalizerSettle",
                 "FinalizerClear")},
}

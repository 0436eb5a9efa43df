"""The registry names the implementation uses, bound once from `spec.names`.

Each constant is looked up in the registry at import time, so a misspelt name is an import error
(KeyError) rather than a silently dead branch.
"""

from __future__ import annotations

from spec import names as N


def _pick(table: dict, name: str) -> str:
    return table[name].name


# defects (spec/names.py DEFECTS)
STEP_STARTED_WINDOW = _pick(N.DEFECTS, "step-started-window")
STEP_FAILED_DUPLICATE_INTERRUPT = _pick(N.DEFECTS, "step-failed-duplicate-interrupt")
CROSS_SESSION_RECOVERY_COLLISION = _pick(N.DEFECTS, "cross-session-recovery-collision")
UNSUPERVISED_CANCEL_HEARTBEAT = _pick(N.DEFECTS, "unsupervised-cancel-heartbeat")
SILENT_QUARANTINE_NOOP = _pick(N.DEFECTS, "silent-quarantine-noop")
MEMORY_BEFORE_PUBLISH = _pick(N.DEFECTS, "memory-before-publish")
ACQUIRE_OVERWRITES_EXPIRED = _pick(N.DEFECTS, "acquire-overwrites-expired")
RENEW_AFTER_EXPIRY = _pick(N.DEFECTS, "renew-after-expiry")
RECOVERY_INPUT_IN_ORDINARY_QUEUE = _pick(N.DEFECTS, "recovery-input-in-ordinary-queue")
UNFENCED_STEP_PUBLICATION = _pick(N.DEFECTS, "unfenced-step-publication")
TAKEOVER_TRUSTS_SCAN = _pick(N.DEFECTS, "takeover-trusts-scan")
TAKEOVER_OVERWRITES_PHASE = _pick(N.DEFECTS, "takeover-overwrites-phase")
CONVERSION_LEAVES_ASSISTANT_OPEN = _pick(N.DEFECTS, "conversion-leaves-assistant-open")
SCAN_QUARANTINES_CANCELLATION = _pick(N.DEFECTS, "scan-quarantines-cancellation")
SUPERVISE_ON_EXPIRY_ONLY = _pick(N.DEFECTS, "supervise-on-expiry-only")
CANCELLATION_QUARANTINE_STRANDS = _pick(N.DEFECTS, "cancellation-quarantine-strands")
RECOVERY_RETRIES_UNBOUNDED = _pick(N.DEFECTS, "recovery-retries-unbounded")
RECOVERY_INPUT_EXCLUDED_EVERYWHERE = _pick(N.DEFECTS, "recovery-input-excluded-everywhere")
HEARTBEAT_EXTENDS_LEASE = _pick(N.DEFECTS, "heartbeat-extends-lease")
CANCEL_RESTARTS_ASSISTANT = _pick(N.DEFECTS, "cancel-restarts-assistant")
CANCEL_INTERRUPTS_UNSTARTED = _pick(N.DEFECTS, "cancel-interrupts-unstarted")
DISPATCH_AFTER_FAILED_RENEWAL = _pick(N.DEFECTS, "dispatch-after-failed-renewal")
CANCEL_REQUEUES_CONTINUATION = _pick(N.DEFECTS, "cancel-requeues-continuation")
CANCEL_TRUSTS_PREVIOUS_STEP_MEMORY = _pick(N.DEFECTS, "cancel-trusts-previous-step-memory")
CONVERSION_RETRY_MINTS_NEW_IDS = _pick(N.DEFECTS, "conversion-retry-mints-new-ids")
WAKE_FRESH_SHARE_ZERO = _pick(N.DEFECTS, "wake-fresh-share-zero")
WAKE_FRESH_SHARE_FULL = _pick(N.DEFECTS, "wake-fresh-share-full")
EXACT_RETRY_APPENDS_TWICE = _pick(N.DEFECTS, "exact-retry-appends-twice")
RESUME_DRAINS_WITHOUT_REQUEST = _pick(N.DEFECTS, "resume-drains-without-request")
STEER_SELECTS_RECOVERY_INPUT = _pick(N.DEFECTS, "steer-selects-recovery-input")
RECOVERY_RERUNS_UNKNOWN_TOOL = _pick(N.DEFECTS, "recovery-reruns-unknown-tool")
TOOL_SETTLED_BEFORE_PUBLICATION = _pick(N.DEFECTS, "tool-settled-before-publication")
RETRY_TOOL_AFTER_FAILED_PUBLICATION = _pick(N.DEFECTS, "retry-tool-after-failed-publication")

# quarantine reasons (spec/names.py QUARANTINE_REASONS): the category that begins a claim's recovery_error
MALFORMED, EXHAUSTED, INVALID = N.QUARANTINE_REASONS

# actions (spec/names.py ACTIONS): what a step of an actor reports it ran
ACQUIRE = _pick(N.ACTIONS, "Acquire")
PROMOTE_CONTINUATION = _pick(N.ACTIONS, "PromoteContinuation")
RENEW = _pick(N.ACTIONS, "Renew")
DISPATCH = _pick(N.ACTIONS, "Dispatch")
PUBLISH_STEP_STARTED = _pick(N.ACTIONS, "PublishStepStarted")
STEP_STARTED_RETURN = _pick(N.ACTIONS, "StepStartedReturn")
TOOL_START = _pick(N.ACTIONS, "ToolStart")
TOOL_RUN = _pick(N.ACTIONS, "ToolRun")
PUBLISH_TOOL_SUCCESS = _pick(N.ACTIONS, "PublishToolSuccess")
TOOL_SUCCESS_FAILS = _pick(N.ACTIONS, "ToolSuccessFails")
MARK_UNKNOWN = _pick(N.ACTIONS, "MarkUnknown")
PUBLISH_STEP_FAILED = _pick(N.ACTIONS, "PublishStepFailed")
STEP_FAILED_RETURN = _pick(N.ACTIONS, "StepFailedReturn")
PUBLISH_STEP_ENDED = _pick(N.ACTIONS, "PublishStepEnded")
STEP_ENDED_RETURN = _pick(N.ACTIONS, "StepEndedReturn")
CLEAR_CLAIM = _pick(N.ACTIONS, "ClearClaim")
RUNNER_STOP = _pick(N.ACTIONS, "RunnerStop")
RUNNER_EXIT = _pick(N.ACTIONS, "RunnerExit")
CANCEL_REQUEST = _pick(N.ACTIONS, "CancelRequest")
FINALIZER_SETTLE = _pick(N.ACTIONS, "FinalizerSettle")
FINALIZER_CLEAR = _pick(N.ACTIONS, "FinalizerClear")
HEARTBEAT = _pick(N.ACTIONS, "Heartbeat")
RECOVERY_SCAN = _pick(N.ACTIONS, "RecoveryScan")
SUPERVISE = _pick(N.ACTIONS, "Supervise")
RECOVERY_TAKEOVER = _pick(N.ACTIONS, "RecoveryTakeover")
RECOVERY_CONVERT = _pick(N.ACTIONS, "RecoveryConvert")
RECOVERY_QUARANTINE = _pick(N.ACTIONS, "RecoveryQuarantine")
RECOVERY_CONVERT_ACK_LOST = _pick(N.ACTIONS, "RecoveryConvertAckLost")
RECOVERY_RECONVERT = _pick(N.ACTIONS, "RecoveryReconvert")
WAKE_SCAN = _pick(N.ACTIONS, "WakeScan")
WAKE_SERVE = _pick(N.ACTIONS, "WakeServe")
WAKE_LOST = _pick(N.ACTIONS, "WakeLost")
ADMIT = _pick(N.ACTIONS, "Admit")
EXACT_RETRY = _pick(N.ACTIONS, "ExactRetry")
RESUME = _pick(N.ACTIONS, "Resume")
STEER = _pick(N.ACTIONS, "Steer")

# boundaries (spec/names.py BOUNDARIES)
B_ACQUIRE_COMMITTED = _pick(N.BOUNDARIES, "acquire.committed")
B_RENEW_COMMITTED = _pick(N.BOUNDARIES, "renew.committed")
B_PROVIDER_DISPATCHED = _pick(N.BOUNDARIES, "provider.dispatched")
B_STEP_STARTED_COMMITTED = _pick(N.BOUNDARIES, "step_started.committed")
B_STEP_FAILED_COMMITTED = _pick(N.BOUNDARIES, "step_failed.committed")
B_STEP_ENDED_COMMITTED = _pick(N.BOUNDARIES, "step_ended.committed")
B_TOOL_STARTED = _pick(N.BOUNDARIES, "tool.started")
B_TOOL_RAN = _pick(N.BOUNDARIES, "tool.ran")
B_TOOL_PUBLISH_FAILED = _pick(N.BOUNDARIES, "tool.publish_failed")
B_CANCEL_REQUESTED = _pick(N.BOUNDARIES, "cancel.requested")
B_FINALIZER_SETTLED = _pick(N.BOUNDARIES, "finalizer.settled")
B_RECOVERY_SCANNED = _pick(N.BOUNDARIES, "recovery.scanned")
B_RECOVERY_TAKEN_OVER = _pick(N.BOUNDARIES, "recovery.taken_over")
B_RECOVERY_CONVERT_FAILED = _pick(N.BOUNDARIES, "recovery.convert_failed")
B_RECOVERY_CONVERTED = _pick(N.BOUNDARIES, "recovery.converted")
B_WAKE_RESERVED = _pick(N.BOUNDARIES, "wake.reserved")
B_RESUME_REQUESTED = _pick(N.BOUNDARIES, "resume.requested")

# event kinds: the twin's short names and the durable names the log stores
STARTED, FAILED, INTERRUPTED, ENDED = N.STEP_KINDS
TOOL_STARTED, TOOL_SUCCEEDED, TOOL_FAILED = N.TOOL_KINDS
TOOL_OUTCOMES = frozenset(N.TOOL_OUTCOMES)
TOOL_KINDS = frozenset(N.TOOL_KINDS)
DURABLE_KIND = {**{kind: f"Step.{kind}" for kind in N.STEP_KINDS},
                TOOL_STARTED: "Tool.Started", TOOL_SUCCEEDED: "Tool.Success", TOOL_FAILED: "Tool.Failed"}
SHORT_KIND = {v: k for k, v in DURABLE_KIND.items()} | {N.REQUEST_KIND: N.REQUEST_KIND}
REQUESTED = N.REQUEST_KIND  # the input event an exact retry appends (its durable name is the same)
TERMINAL = frozenset(N.TERMINAL_KINDS)

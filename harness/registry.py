"""The registry names the harness uses, bound once from `spec.names`.

Each constant is looked up in the registry at import time, so a misspelt name is an import error
(KeyError) rather than a silently dead branch; `tests/spec/test_registry_literals.py` fails on any
registry name spelt as a literal elsewhere in `harness/` or `impl/`.
"""

from __future__ import annotations

from spec import names as N


def _pick(table: dict, name: str) -> str:
    return table[name].name


# actions (spec/names.py ACTIONS)
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
CLEAR_CLAIM = _pick(N.ACTIONS, "ClearClaim")
RUNNER_STOP = _pick(N.ACTIONS, "RunnerStop")
RUNNER_EXIT = _pick(N.ACTIONS, "RunnerExit")
CANCEL_REQUEST = _pick(N.ACTIONS, "CancelRequest")
FINALIZER_SETTLE = _pick(N.ACTIONS, "FinalizerSettle")
FINALIZER_CLEAR = _pick(N.ACTIONS, "FinalizerClear")
HEARTBEAT = _pick(N.ACTIONS, "Heartbeat")
SUPERVISE = _pick(N.ACTIONS, "Supervise")
TICK = _pick(N.ACTIONS, "Tick")
RECOVERY_SCAN = _pick(N.ACTIONS, "RecoveryScan")
RECOVERY_TAKEOVER = _pick(N.ACTIONS, "RecoveryTakeover")
RECOVERY_CONVERT = _pick(N.ACTIONS, "RecoveryConvert")
RECOVERY_QUARANTINE = _pick(N.ACTIONS, "RecoveryQuarantine")
CRASH = _pick(N.ACTIONS, "Crash")
CORRUPT_RECOVERY_ROW = _pick(N.ACTIONS, "CorruptRecoveryRow")
RECOVERY_CONVERT_ACK_LOST = _pick(N.ACTIONS, "RecoveryConvertAckLost")
RECOVERY_RECONVERT = _pick(N.ACTIONS, "RecoveryReconvert")
WAKE_ARRIVE = _pick(N.ACTIONS, "WakeArrive")
WAKE_SCAN = _pick(N.ACTIONS, "WakeScan")
WAKE_SERVE = _pick(N.ACTIONS, "WakeServe")
WAKE_LOST = _pick(N.ACTIONS, "WakeLost")
ADMIT = _pick(N.ACTIONS, "Admit")
EXACT_RETRY = _pick(N.ACTIONS, "ExactRetry")
RESUME = _pick(N.ACTIONS, "Resume")
STEER = _pick(N.ACTIONS, "Steer")

# the actions each kind of actor takes, by the registry's `actor` field
RUNNER_ACTIONS = tuple(a.name for a in N.ACTIONS.values() if a.actor == "runner")
FINALIZER_ACTIONS = tuple(a.name for a in N.ACTIONS.values() if a.actor == "finalizer")
RECOVERY_ACTIONS = tuple(a.name for a in N.ACTIONS.values() if a.actor == "recovery")

# stress
NO_PHYSICAL_REPLAY = _pick(N.INVARIANTS, "NoPhysicalReplay")
NO_OVERLAPPING_EFFECTS = _pick(N.INVARIANTS, "NoOverlappingEffects")
TIMELY_DISPATCH = _pick(N.ASSUMPTIONS, "TimelyDispatch")
SYNCHRONIZED_CLOCKS = _pick(N.ASSUMPTIONS, "SynchronizedClocks")

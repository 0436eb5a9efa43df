"""The values the state's fields take (phases, actor pcs, event, fault, effect and input kinds): part of the
registry, which re-exports them (`spec.names`), kept apart so the table of names stays readable."""

PHASES = ("none", "running", "recovering", "cancelling", "cancelled", "unknown")
RUNNER_PCS = ("idle", "acquired", "renewed", "streaming", "started", "stepping", "failed", "ended", "done",
              "stopped", "tool_started", "tooling", "tool_failed", "publish_failed", "hung", "hosted")
FINALIZER_PCS = ("idle", "settle", "reconciling", "clear")
RECOVERY_PCS = ("idle", "scanned", "converting", "reconciled", "quarantining", "reconverting")
# the reservation a wake row holds: none, or the kind of slot the scan reserved it in
WAKE_RESERVATIONS = ("", "fresh", "retry")
# why a claim is quarantined (recorded with it): malformed work (a session_recovery row already names its
# execution), exhausted attempts (the last conversion the bound allows lost its lease), or invalid (a
# phase recovery does not convert: only defects quarantine for it)
QUARANTINE_REASONS = ("malformed", "exhausted", "invalid")
TERMINAL_KINDS = ("Failed", "Interrupted", "Ended")
# a local tool call's events: its fenced start, and its outcome: Tool.Success, or the failure a
# reconciliation (recovery's, the finalizer's) records when the outcome is uncertain
TOOL_OUTCOMES = ("ToolSucceeded", "ToolFailed")
TOOL_KINDS = ("ToolStarted",) + TOOL_OUTCOMES
STEP_KINDS = ("Started",) + TERMINAL_KINDS
EVENT_KINDS = STEP_KINDS + TOOL_KINDS
# the input event an exact retry appends (one per prompt; it names the prompt, written under no claim)
REQUEST_KIND = "PromptExecutionRequested"
LOG_KINDS = EVENT_KINDS + (REQUEST_KIND,)
# the content digest an exact retry carries (TLA+ Digests): the admitted input's own, or another's
ADMITTED = "admitted"
DIGESTS = (ADMITTED, "other")
# why an exact retry is refused (TLA+ RetryRefusal), in the order the identity check asks: the id names no
# input (never admitted, or forged), another Session's input, a continuation, an input recovery has taken,
# or the content is not the admitted one
UNKNOWN_INPUT, OTHER_SESSION, CONTINUATION, RECOVERY_OWNED, CONTENT_MISMATCH = (
    "unknown-input", "other-session", "continuation", "recovery-owned", "content-mismatch")
RETRY_REFUSALS = (UNKNOWN_INPUT, OTHER_SESSION, CONTINUATION, RECOVERY_OWNED, CONTENT_MISMATCH)
# "ack": a conversion's commit acknowledgement lost, "publication": a Tool.Success publication that
# fails, and "hang": a listener that never returns (Residual R2); only a configuration that names one has
# it (NAMED_FAULTS: spec/configs.py ALL_FAULTS, and the twin's default, are the first three, so no earlier
# configuration's state space changes)
ACK_LOST = "ack"
PUBLICATION = "publication"
HANG = "hang"
# "forge": a continuation-kind input row recovery did not make (ForgeContinuation; spec/README.md decision 28)
FORGE = "forge"
FAULT_KINDS = ("crash", "pause", "corrupt", ACK_LOST, PUBLICATION, HANG, FORGE)
NAMED_FAULTS = (ACK_LOST, PUBLICATION, HANG, FORGE)
EFFECT_KINDS = ("dispatch", "tool", "reconcile")
INPUT_KINDS = ("prompt", "cont")
# held: admitted, its execution not yet requested (Admission); steered: taken into a running execution
# quarantined: a flawed continuation row the promotion refused (decision 28)
INPUT_STATES = ("pending", "ordinary", "recovery", "held", "steered", "quarantined")
# an assistant's outcome as its durable log shows it: never started, started and open, or its one terminal
ASSISTANT_OUTCOMES = ("none", "open") + TERMINAL_KINDS

"""The model configurations, by name: the one place their constants are written.

`MC_<name>.cfg` files beside this module are generated from here (`claimcheck check` writes them to a
temporary folder with the defects and assumptions of the run; tests/cli/test_bad_config_files.py checks the committed
copies are current).
"""

from __future__ import annotations

from dataclasses import replace

from . import names as N
from .mc import MC
from .model import Config
from .symmetry import perms

# every fault but the named ones (the lost acknowledgement, the failed publication, the hung listener), which
# only `retries`, `tools` and `listeners` name (so no earlier state space changes)
ALL_FAULTS = frozenset(N.FAULT_KINDS) - set(N.NAMED_FAULTS)

CONFIGS: dict[str, Config] = {
    # one Session, two nodes, one prompt, every fault, one retry (MaxTries 2): 19 of the 24 defects and all
    # three assumptions show here; TLC checks it with liveness and the refinement in the gate
    "ci": Config(sessions=("s1",), nodes=("n1", "n2"), recoverers=("r1",), prompts=1, max_exec=2,
                 lease=1, scan_bound=1, max_tries=2, faults=ALL_FAULTS),
    # `ci` with a second prompt queued, crashes only (and no retry): ordinary acquisition meets an expired
    # claim (`acquire-overwrites-expired`) only when a prompt is still pending after a crash
    "prompts": Config(sessions=("s1",), nodes=("n1", "n2"), recoverers=("r1",), prompts=2, max_exec=2,
                      lease=1, scan_bound=1, max_tries=1, faults=frozenset({"crash"})),
    # the scan window: two Sessions, one node, pauses: a claim that recovery keeps failing to settle
    # starves the claims behind it (`silent-quarantine-noop`, `recovery-retries-unbounded`)
    # (Grace 1 = SupervisionLag 1: the clock assumption holds. With Grace 0 the takeover, an effect of the
    # successor, may begin while the paused node's call or finalizer is in flight: R003-MUST-FIX-2)
    # (MaxTries 1: a conversion that lost its lease is quarantined at once, exhausted; `ci` retries)
    "sessions": Config(sessions=("s1", "s2"), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2,
                       lease=1, scan_bound=1, grace=1, max_tries=1, faults=frozenset({"pause"})),
    # the scan window of two rows (issue 31 item 2, R003-MUST-FIX-3 with N = ScanBound = 2): three Sessions
    # on one node, pauses, MaxTries 2, so two claims whose conversions lose their lease are retried (poison)
    # while a third waits fresh behind them; the window keeps the fresh share (FreshShare 1) for it
    # (`scan-window-ignores-fresh-share`: the oldest two, both poison). Grace 1 = SupervisionLag 1, as on
    # `sessions`. Millions of states (spec/README.md): the deep profile's, never the gate's. No smaller
    # configuration has a window that matters: the plan by kind first differs from the oldest two rows at
    # depth 19 here and at depth 14 with crashes (Grace 0), with 227,683 and 90,235 states at smaller depths
    # (spec/README.md decision 16)
    "scans": Config(sessions=("s1", "s2", "s3"), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=3,
                    lease=1, scan_bound=2, grace=1, max_tries=2, faults=frozenset({"pause"}), fresh_share=1),
    # the scan window of two rows on a restart (issue 31 item 2, R003-MUST-FIX-3 with N = ScanBound = 2): s1's
    # and s2's claims were left at Init as poison rows (LeftClaims: executions 1 and 2, recovering, taken over
    # once by r1, which crashed; spec/README.md decision 16), so the window's order, fresh share and durable
    # advance matter from the first scan, not after the 19 steps `scans` needs to make them. s3's one prompt
    # makes the fresh claim behind them (FreshShare 1 keeps its slot: `scan-window-ignores-fresh-share`);
    # pauses make its conversion, and the poison rows' retries, lose their lease; MaxTries 1, so a retry whose
    # conversion loses its lease quarantines the row, exhausted (the durable advance: `silent-quarantine-noop`,
    # `recovery-retries-unbounded`); MaxExec 3: each left execution's continuation, or s3's prompt, may run;
    # Grace 1 = SupervisionLag 1 (the clock assumption holds with pauses, as on `sessions`); one node and one
    # recovery worker, the least the window needs
    "leftclaims": Config(sessions=("s1", "s2", "s3"), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=3,
                         lease=1, scan_bound=2, grace=1, max_tries=1, faults=frozenset({"pause"}), fresh_share=1,
                         left_claims=frozenset({"s1", "s2"})),
    # recovery rows of two Sessions: one execution, a forged row under the other Session's name
    # (CorruptRecoveryRow needs a second Session): the cross-Session recovery collision
    # (Grace 1: the clock assumption holds with pauses, as on `sessions`)
    "rows": Config(sessions=("s1", "s2"), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=1,
                   lease=1, scan_bound=1, grace=1, max_tries=1, faults=frozenset({"pause", "corrupt"})),
    # a two-tick lease, so heartbeats renew a live lease: a heartbeat must not extend it past Lease
    "heartbeat": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2,
                        lease=2, scan_bound=1, grace=1, max_tries=1, faults=frozenset({"pause"})),
    # two recovery workers on one Session: two scans of one row, then their compare-and-swaps race
    # (Grace 1 = SupervisionLag 1: the assumption holds, as on `ci`)
    "workers": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1", "r2"), prompts=1, max_exec=2,
                      lease=1, scan_bound=1, grace=1, supervision_lag=1, faults=frozenset({"crash"})),
    # several recovery workers under pauses (issue 30 item 3): two workers, one node, one execution, pauses,
    # a retry (MaxTries 2). A paused worker's claim runs out while the other takes it over, so every
    # recovery fence also fails against a successor: a takeover that loses the compare-and-swap, a
    # conversion or quarantine that finds zero rows changed (R003-MUST-FIX-3's confirmed successor). With
    # MaxExec 2 it has 70,492 states (MaxTries 1); one execution is enough for the race (Grace 1 =
    # SupervisionLag 1: the clock assumption holds)
    "takeovers": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1", "r2"), prompts=1, max_exec=1,
                        lease=1, scan_bound=1, grace=1, supervision_lag=1, max_tries=2,
                        faults=frozenset({"pause"})),
    # second-generation continuations (issue 30 item 2): MaxExec 3, so an execution promoted from a
    # continuation is itself recovered and its own continuation must be promoted before the model's ids
    # run out (`Exhausted`: nextExec > MaxExec), which with MaxExec 2 everywhere else held as soon as the
    # first continuation was promoted. One Session, one node, crashes (Grace 1 = SupervisionLag 1, as on
    # `workers`); 22,853 states with pauses instead
    "generations": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=3,
                          lease=1, scan_bound=1, grace=1, supervision_lag=1, max_tries=1,
                          faults=frozenset({"crash"})),
    # supervision that lags a tick past the expiry (SupervisionLag 2) on one node, covered by the takeover's
    # grace (Grace 2: the clock assumption holds). Before issue 30 this was Grace 0 < SupervisionLag 1, where
    # the finalizer's own check was taken as its guard; with the finalizer's reconciliation a span, and the
    # takeover an effect of the successor, that is the overlap R003-MUST-FIX-2 names (spec/README.md)
    "lag": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2, lease=1,
                  scan_bound=1, grace=2, supervision_lag=2, faults=frozenset({"pause"})),
    # two Steps per execution (MaxSteps 2) on one node: a later Step's window, where publisher memory
    # still names the earlier Step's completed assistant (`cancel-trusts-previous-step-memory`), and the
    # Step.Ended listener gate between two Steps (Grace 1 = SupervisionLag 1, as on `ci`; pauses only: a
    # crash in a later Step is a crash in Step 1 with another assistant id, which `ci` checks; 34,521 states
    # with crashes, 12,930 without)
    "steps": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2, max_steps=2,
                    lease=1, scan_bound=1, grace=1, supervision_lag=1, faults=frozenset({"pause"})),
    # a conversion's lost acknowledgement and its retry with the same deterministic ids (faults crash and
    # ack; one node, Grace 0: no second provider call can overlap): the retry must change nothing
    # (`conversion-retry-mints-new-ids`)
    "retries": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2,
                      lease=1, scan_bound=1, grace=0, max_tries=1, faults=frozenset({"crash", N.ACK_LOST})),
    # the retry of a conversion whose COMMIT was lost, meeting a pause (faults ack and pause, no crash; Grace
    # 1: the pause is not an overlap; MaxTries 2: the next takeover converts): a retry whose lease expired
    # changes nothing, and a later takeover converts (`reconvert-replays-unfenced`, decision 15)
    "replays": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=1,
                      lease=1, scan_bound=1, grace=1, max_tries=2, faults=frozenset({"pause", N.ACK_LOST})),
    # the wake scans (issue 13 item 5): three wake rows, a batch of two with one slot kept for fresh rows,
    # the counter rotating at 2; the protocol beside them as small as it runs (one Session, one node, one
    # execution, no fault), since the wake rows share no variable with it
    "wakes": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=0, max_exec=1, lease=1,
                    scan_bound=1, grace=0, max_tries=1, faults=frozenset(), wake_rows=4, wake_batch=2,
                    fresh_share=1, max_wake_tries=2),
    # two wakers racing their reads and reservations (issue 31 item 3): `wakes` with Wakers 2 and two rows
    # (3,168 states; three rows: 89,377, with MaxWakeTries 1 14,433, where a counter never visibly moves)
    "wakes2": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=0, max_exec=1, lease=1,
                     scan_bound=1, grace=0, max_tries=1, faults=frozenset(), wake_rows=2, wake_batch=2,
                     fresh_share=1, max_wake_tries=2, wakers=2),
    # wake rows tied to the work they wake (issue 31 item 3, WakesTied): one Session's ordinary wake (row 1)
    # and recovery wake (row 2); a crash makes recovery's continuation, promoted only through its recovery
    # wake, while the ordinary wake may not take it (`wake-serves-regardless`); each kind's queue is its own scan
    # (WakeScanQueue): 7,478 states (one scan over both rows: 6,223; with MaxWakeTries 2, 9,513; a counter that
    # never visibly moves changes nothing here, the rows are tied, not rotated)
    "wakestied": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2, lease=1,
                        scan_bound=1, grace=0, max_tries=1, faults=frozenset({"crash"}), wake_rows=2,
                        wake_batch=2, fresh_share=1, max_wake_tries=1, wakes_tied=True),
    # admission as an action (Admission): two prompts admitted by Admit, held until an exact retry (one
    # PromptExecutionRequested) or an explicit resume requests them, then drained by Acquire; no faults
    # (the request events' places in the log multiply the state space: with crashes, 166,463 states)
    "inputs": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=2, max_exec=2, lease=1,
                     scan_bound=1, grace=0, supervision_lag=1, max_tries=1, faults=frozenset(),
                     admission=True),
    # the continuation boundary (issue 31 item 1): admission as an action beside a crash that makes
    # recovery's continuation, so an exact retry can name a continuation (one prompt, one Session, one node;
    # MaxExec 1: the continuation is never promoted, so no retry meets a recovery-owned input; with MaxExec 2,
    # 5,660 states, and with a pause instead of the crash, Grace 1, 18,428)
    "boundary": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=1, lease=1,
                       scan_bound=1, grace=0, supervision_lag=1, max_tries=1, faults=frozenset({"crash"}),
                       admission=True),
    # forged continuation rows (spec/README.md decision 28; issue 31 item 1): one Session, one node, one recovery
    # worker; a crash makes recovery's continuation (MaxExec 2: an execution id left to promote it), and the
    # one-shot fault forge replaces it, still pending, with a row of one flaw (CONTINUATION_FLAWS), which the
    # promotion must refuse and quarantine (`promotion-ignores-<flaw>`: PromotedContinuationsValid). Grace 0, as
    # on the other one-node crash configurations
    "forged": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2, lease=1,
                     scan_bound=1, grace=0, supervision_lag=1, max_tries=1, faults=frozenset({"crash", N.FORGE})),
    # steer selection (Steering): two prompts at Init, one node; a pause makes recovery's continuation,
    # which a running execution's steer must leave to recovery (Grace 1 with pauses, as on `sessions`; with
    # crashes instead, 6,858 states, but lockstep reaches the continuation beside a running execution
    # less often: a crash is an interruption it holds back, a pausing tick is not)
    "steer": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=2, max_exec=2, lease=1,
                    scan_bound=1, grace=1, supervision_lag=1, max_tries=1, faults=frozenset({"pause"}),
                    steering=True),
    # delivery kinds and their order (DeliveryKinds, issue 31 item 4, spec/README.md decision 27): three
    # prompts at Init, steer, queue, steer (SteerPrompts {1, 3}), one node, no faults: the drain takes
    # prompt 1 (steer before queue, then age) and the running execution may steer prompt 3 but never the
    # queued prompt 2 (`steer-takes-queued-input`); the drain taking 2 or 3 first breaks the order
    # (`queue-before-steer`, `selection-ignores-age`). MaxExec 2: prompt 2 runs after, or stays the bound's
    "delivery": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=3, max_exec=2, lease=1,
                       scan_bound=1, grace=1, supervision_lag=1, max_tries=1, faults=frozenset(),
                       steering=True, delivery_kinds=True, steer_prompts=frozenset({1, 3})),
    # a partial stream fragment (Fragments 1, issue 30 item 2, R000-v18-flush): between the provider dispatch
    # and Step.Started the publisher holds an open fragment while its memory names no assistant, and a
    # cancellation's finalizer flushes it (`flush-without-assistant`). One Session, one node, pauses (Grace 1
    # = SupervisionLag 1, as on `steps`): a paused finalizer's claim goes to recovery, which finishes the
    # cancellation (v2 change 1); MaxExec 2, so recovery's continuation runs a stream of its own (874 states
    # with MaxExec 1, where the stranded prompt's execution is the last id and PendingInputsEventuallyServed
    # holds by the bound)
    "fragments": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2,
                        lease=1, scan_bound=1, grace=1, supervision_lag=1, max_tries=1,
                        faults=frozenset({"pause"}), fragments=1),
    # a listener that never returns (the fault "hang", Residual R2; issue 30 item 2): the runner stays at
    # its listener gate while its node's heartbeat keeps the lease live (Lease 2: calm ticks and renewals),
    # so a cancellation cannot finish; a pause past the lease (Grace 1 = SupervisionLag 1, as on `steps`)
    # or a crash ends it and recovery takes the claim over
    "listeners": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2,
                        lease=2, scan_bound=1, grace=1, supervision_lag=1, max_tries=1,
                        faults=frozenset({"pause", N.HANG})),
    # local tools (Tools 1) on one node: the fenced tool start, the physical tool, Tool.Success; a failed
    # publication leaves the claim unknown, a crash leaves a started call unsettled under a running claim,
    # and recovery (or the finalizer) must record the call's outcome, never re-run it
    # (`recovery-reruns-unknown-tool`, `tool-settled-before-publication`, `retry-tool-after-failed-publication`;
    # Grace 0, as on the other one-node configurations). Crashes, not pauses: with pauses (7,359 states; all
    # three faults 23,286) the runner's fences fail after a lapse too, and the twin holds every property
    # there, but a pausing tick then competes with the publication fault at every step and lockstep's ci
    # budget no longer reaches `retry-tool-after-failed-publication`
    "tools": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2, tools=1,
                    lease=1, scan_bound=1, grace=0, supervision_lag=1, max_tries=1,
                    faults=frozenset({"crash", "publication"})),
    # tools under pauses (issue 30 item 3): `tools`' one Session and node with pauses instead of crashes, and
    # the failed Tool.Success publication; Grace 1 = SupervisionLag 1 (SynchronizedClocks, as on `steps`), so
    # a paused runner meets its own expired claim at the tool start, Tool.Success and the unknown mark (their
    # fences' `expired` branches, reached nowhere else), never a successor's
    "toolpauses": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=2, tools=1,
                         lease=1, scan_bound=1, grace=1, supervision_lag=1, max_tries=1,
                         faults=frozenset({"pause", "publication"})),
    # two local tools in a Step (Tools 2; issue 31 item 4, its last part): `tools`' one Session and node, call 1
    # then call 2, each with its fenced start, physical run and Tool.Success; a failed publication or a crash
    # leaves call 2 open after call 1 settled, and every reconciliation must settle that call by its index
    # (`tool-call-identified-by-step`)
    "tools2": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=1, tools=2,
                     lease=1, scan_bound=1, grace=0, supervision_lag=1, max_tries=1,
                     faults=frozenset({"crash", "publication"})),
    # a hosted tool (Hosted 1; issue 31 item 4, its last part): `toolpauses`' one Session and node with one
    # local call and MaxExec 1, each Step's provider call running a hosted tool whose outcome the runner
    # publishes (HostedReconcile) before its local call and Step.Ended; a failed publication or a pause past
    # the lease leaves it open (the reconciliation's fence meets its own expired claim), and every
    # reconciliation must record it (`step-ended-before-hosted-tool`)
    "hosted": Config(sessions=("s1",), nodes=("n1",), recoverers=("r1",), prompts=1, max_exec=1, tools=1, hosted=1,
                     lease=1, scan_bound=1, grace=1, supervision_lag=1, max_tries=1,
                     faults=frozenset({"pause", "publication"})),
    # both dimensions at once, every fault: over five million distinct states
    "deep": Config(sessions=("s1", "s2"), nodes=("n1", "n2"), recoverers=("r1",), prompts=1, max_exec=2,
                   lease=1, scan_bound=1, faults=ALL_FAULTS),
}

# what `claimcheck gate` model-checks in full (every invariant, the liveness properties, the refinement) on
# both engines, and drives the implementation on: together they enable every action of the registry
GATE_CONFIGS = ("ci", "rows", "heartbeat", "steps")
# the rest of the gate's configurations: the explorer checks everything on them (liveness too), TLC their
# invariants only, lockstep leaves them to the tests. One feature of spec v2 each, behind constants (or a
# fault kind) every other configuration leaves off, `takeovers` (recovery workers racing under pauses),
# `generations` (MaxExec 3: a continuation's execution recovered in turn), `fragments` (a partial stream
# fragment before Step.Started: Fragments 1), `listeners` (a listener that never returns: the fault
# "hang"), `leftclaims` (the scan window of two rows, behind claims left at Init: a restart), and `forged`
# (a forged continuation row, the fault "forge": the promotion's validation).
# `sessions` (the scan window over two Sessions, 156,295 states since the reconciliation spans) left the
# gate for the deep profile (issue 34 item 2): the liveness pairs that needed it land on `leftclaims`
# (35,666 states, tests/smallest.json), and it reaches no action or fence branch the others miss
# (spec/README.md, "The gate's configurations")
FEATURE_CONFIGS = ("takeovers", "generations", "tools", "toolpauses", "tools2", "hosted", "retries", "replays", "wakes", "wakes2", "wakestied",
                   "inputs", "steer", "delivery", "fragments", "listeners", "leftclaims", "forged")

# too large for a liveness graph (millions of states): the deep profile checks their safety only
SAFETY_ONLY = ("scans",)

# the actions only a feature's constants (or its fault kind) enable: elsewhere they can never happen, and
# lockstep's swarm leaves them out (harness.conformance.lockstep.swarm_names)
FEATURE_ACTIONS = (
    (lambda cfg: cfg.tools > 0, ("ToolStart", "ToolRun", "PublishToolSuccess", "ToolSuccessFails")),
    (lambda cfg: cfg.wake_rows > 0, ("WakeLost",)),
    (lambda cfg: cfg.wake_rows > 0 and not cfg.wakes_tied, ("WakeArrive", "WakeServe")),
    (lambda cfg: cfg.wakes_tied, ("WakeSync", "WakeScanQueue", "WakeAcquire", "WakePromote")),
    # one waker, untied: the scan in one action (tied: each kind's queue apart, WakeScanQueue)
    (lambda cfg: cfg.wake_rows > 0 and cfg.wakers <= 1 and not cfg.wakes_tied, ("WakeScan",)),
    (lambda cfg: cfg.wake_rows > 0 and cfg.wakers > 1, ("WakeRead", "WakeReserve")),
    (lambda cfg: cfg.admission, ("Admit", "ExactRetry", "Resume")),
    (lambda cfg: cfg.steering, ("Steer",)),
    (lambda cfg: cfg.fragments > 0, ("OpenFragment",)),
    (lambda cfg: cfg.hosted > 0, ("HostedReconcile", "HostedReconcileFails")),
    (lambda cfg: N.PUBLICATION in cfg.faults, ("StepStartedFails", "StepEndedFails", "MarkUnknown")),
    (lambda cfg: N.HANG in cfg.faults, ("ListenerHangs",)),
    (lambda cfg: N.ACK_LOST in cfg.faults, ("RecoveryConvertAckLost", "RecoveryConvertFails", "RecoveryReconvert")),
    (lambda cfg: N.FORGE in cfg.faults, ("ForgeContinuation",)),
)


def possible_actions(cfg: Config) -> tuple[str, ...]:
    """The registry's actions, in its order, less those of the features `cfg` leaves off."""
    off = {a for on, actions in FEATURE_ACTIONS if not on(cfg) for a in actions}
    assert off <= set(N.ACTIONS), off - set(N.ACTIONS)
    return tuple(a for a in N.ACTIONS if a not in off)


ASSUMPTION_FIELDS = {"TimelyDispatch": "timely_dispatch", "SynchronizedClocks": "synchronized_clocks",
                     "ProcessLocalRouting": "process_local_routing"}


def get(name: str, defects=(), assumptions_off=()) -> Config:
    """The named configuration with defects switched on and assumptions switched off."""
    if name not in CONFIGS:
        raise N.UnknownName(f"unknown configuration {name!r}; known: {', '.join(CONFIGS)}")
    off = {}
    for a in assumptions_off:
        if a not in ASSUMPTION_FIELDS:
            raise N.UnknownName(f"unknown assumption {a!r}; known: {', '.join(ASSUMPTION_FIELDS)}")
        off[ASSUMPTION_FIELDS[a]] = False
    return replace(CONFIGS[name], defects=frozenset(N.check_defects(defects)), **off)


def _tla_set(items, model_values: bool = False) -> str:
    q = "" if model_values else '"'
    return "{" + ", ".join(f"{q}{x}{q}" for x in sorted(items)) + "}"


# TLC's SYMMETRY for each scope of spec.symmetry (operators of MCSessionExecution.tla)
SYMMETRY_OPERATORS = {"nodes": "NodeSymmetry", "sessions": "NodeSessionSymmetry"}


SPEC_MODULE = "SessionExecution"  # the protocol module (Apalache's; spec/SessionExecution.tla)
MC_MODULE = "MCSessionExecution"  # the module the generated .cfg files configure (spec/MCSessionExecution.tla)

# The protocol's hooks (the registry reads them from SessionExecution.tla's section Hooks): the operators where
# a known defect decides differently. Every TLC configuration overrides each with the MC module's MC<Hook>
# (`Hook <- MCHook`, as CCF's MCccfraft.cfg overrides ccfraft's operators), with or without defects, so that
# the correct protocol and every defect are checked through the same overrides.
HOOKS = N.HOOKS


class ProtocolOnly(ValueError):
    """A configuration with defects asked of an engine that reads the protocol module alone (Apalache)."""


def to_tlc_cfg(cfg: Config, *, liveness: bool = True, checks: bool = True, only=None,
               protocol_only: bool = False, symmetry: str | None = None) -> str:
    """The TLC configuration file for `cfg` (of the MC module): constants, the defect switches and the hook
    overrides, and (with `checks`) invariants and properties, the refinement among them; `only` (names)
    checks just those invariants and properties. `protocol_only`: the configuration of the protocol module
    itself (Apalache's: constants only; it has no `Defects` and no MC<Hook> to override with, so a
    configuration with defects is refused). `symmetry` (a scope of spec.symmetry): Nodes (and Sessions) as
    model values and TLC's SYMMETRY over them; refused with liveness, which symmetry can make unsound."""
    if symmetry is not None and (liveness and checks or protocol_only or symmetry not in SYMMETRY_OPERATORS):
        raise ValueError(f"symmetry {symmetry!r} is for the MC module's safety checks only "
                         f"(scopes: {', '.join(SYMMETRY_OPERATORS)}; liveness with symmetry is refused)")
    if symmetry is not None and len(perms(cfg, symmetry)) == 1:
        symmetry = None  # one node (and Session): nothing to permute, and TLC refuses a trivial group
    if protocol_only and cfg.defects:
        raise ProtocolOnly(f"defects {', '.join(sorted(cfg.defects))}: the defect switches are the MC module's "
                           f"({MC_MODULE}.tla, through TLC's operator overrides); the protocol module has none")
    b = lambda v: "TRUE" if v else "FALSE"
    props = list(N.ACTION_INVARIANTS) + (list(N.LIVENESS) if liveness else []) + ([] if protocol_only else [N.REFINEMENT])
    if not cfg.wake_rows:  # no wake rows: their properties hold vacuously, and TLC need not spend time on them
        props = [p for p in props if p not in N.WAKE_PROPERTIES]
    invs = list(N.STATE_INVARIANTS)
    if only is not None:
        props, invs = [p for p in props if p in only], [i for i in invs if i in only]
    lines = [
        f"\\* generated by spec/configs.py; do not edit. Model: {SPEC_MODULE if protocol_only else MC_MODULE}.tla",
        "CONSTANTS",
        f"  Sessions = {_tla_set(cfg.sessions, symmetry == 'sessions')}",
        f"  Nodes = {_tla_set(cfg.nodes, symmetry is not None)}",
        f"  Recoverers = {_tla_set(cfg.recoverers)}",
        f"  Prompts = {cfg.prompts}",
        f"  MaxExec = {cfg.max_exec}",
        f"  MaxSteps = {cfg.max_steps}",
        f"  Tools = {cfg.tools}",
        f"  Hosted = {cfg.hosted}",
        f"  Lease = {cfg.lease}",
        f"  ScanBound = {cfg.scan_bound}",
        f"  MaxTries = {cfg.max_tries}",
        f"  Faults = {_tla_set(cfg.faults)}",
        f"  TimelyDispatch = {b(cfg.timely_dispatch)}",
        f"  Grace = {cfg.eff_grace}",
        f"  SupervisionLag = {cfg.supervision_lag}",
        f"  ProcessLocalRouting = {b(cfg.process_local_routing)}",
        f"  WakeRows = {cfg.wake_rows}",
        f"  WakeBatch = {cfg.wake_batch}",
        f"  FreshShare = {cfg.fresh_share}",
        f"  MaxWakeTries = {cfg.max_wake_tries}",
        f"  Wakers = {cfg.wakers}",
        f"  WakesTied = {b(cfg.wakes_tied)}",
        f"  Admission = {b(cfg.admission)}",
        f"  Steering = {b(cfg.steering)}",
        f"  DeliveryKinds = {b(cfg.delivery_kinds)}",
        "  SteerPrompts = {" + ", ".join(str(p) for p in sorted(cfg.steer_prompts)) + "}",
        f"  Fragments = {cfg.fragments}",
        f"  LeftClaims = {_tla_set(cfg.left_claims)}",
    ]
    if not protocol_only:
        lines += [f"  Defects = {_tla_set(cfg.defects)}"] + [f"  {h} <- MC{h}" for h in HOOKS]
    lines += ["SPECIFICATION Spec" if liveness and checks else "INIT Init\nNEXT Next"]
    lines += [f"SYMMETRY {SYMMETRY_OPERATORS[symmetry]}"] if symmetry else []
    if checks:
        lines += ["INVARIANTS " + " ".join(invs)] if invs else []
        lines += ["PROPERTIES " + " ".join(props)] if props else []
    return "\n".join(lines) + "\n"

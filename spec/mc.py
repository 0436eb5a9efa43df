"""The twin's defect switches, as MCSessionExecution.tla holds TLC's: for each of the protocol's hooks
(spec.hooks, SessionExecution.tla's section "Hooks"), the defective alternatives keyed by registry defect
name (spec/names.py), and the protocol's own hook otherwise.

`MC` lists the hooks in MCSessionExecution.tla's order, each with the same comment per defect; it is the
one place in spec/ outside names.py where a defect's name is written (tests/spec/test_registry_literals.py),
and tests/spec/test_spec_files.py checks that it names the same hooks and defects as the MC module's
MC<Hook> operators. An alternative takes `otherwise` first, the hook it replaces (the next alternative
switched on, else the protocol's: MC<Hook>'s ELSE branch), then the hook's own parameters.

`resolve(defects)` chooses once per set of defects (cached; `Config.hooks` holds the result from the
configuration's making), so the explorer's hot path calls one function per hook, never asks which defect
is on.
"""

from __future__ import annotations

import functools
import re

from . import hooks as P
from .state import asst, call_started, has_row, row_for_exec, si, step_has_outcome
from .flaw_names import CONTINUATION_FLAWS


def _admits(flaw: str):
    """The promotion-ignores-<flaw> alternative of ContinuationValid: a row with that flaw passes."""
    assert flaw in CONTINUATION_FLAWS, flaw
    return lambda otherwise, cfg, st, i: i.flaw == flaw or otherwise(cfg, st, i)


MC = {
    # unsupervised-cancel-heartbeat: the finalizer's heartbeat is not supervised and its step not checked
    "FinalizerSupervised": (P.finalizer_supervised, {
        "unsupervised-cancel-heartbeat": lambda otherwise, cfg, st, f: True}),
    # recovery-input-in-ordinary-queue: ordinary selection takes recovery-owned continuations too
    "OrdinarySelects": (P.ordinary_selects, {
        "recovery-input-in-ordinary-queue": lambda otherwise, cfg, st, i: True}),
    # acquire-overwrites-expired: ordinary acquisition overwrites an expired claim
    "ClaimFree": (P.claim_free, {
        "acquire-overwrites-expired": lambda otherwise, cfg, st, s, ordinary:
            otherwise(cfg, st, s, ordinary) or (ordinary and st.claim[s].ttl <= 0)}),
    # recovery-input-excluded-everywhere: the promotion reuses ordinary selection's exclusion
    "PromotionOwned": (P.promotion_owned, {
        "recovery-input-excluded-everywhere": lambda otherwise, cfg, st, i: not has_row(st, i.sess, i.src)}),
    # promotion-ignores-<flaw> (one per spec/names.py CONTINUATION_FLAWS): the promotion's validation omits that
    # check, so a continuation row with that flaw is promoted
    "ContinuationValid": (P.continuation_valid, {
        "promotion-ignores-id": _admits("id"),
        "promotion-ignores-session": _admits("session"),
        "promotion-ignores-delivery": _admits("delivery"),
        "promotion-ignores-prompt": _admits("prompt"),
        "promotion-ignores-assistant": _admits("assistant"),
        "promotion-ignores-newest": _admits("newest"),
        "promotion-ignores-synthetic": _admits("synthetic")}),
    # renew-after-expiry: the renewal (and the heartbeat, below) accepts an expired lease
    "RenewAccepts": (P.renew_accepts, {
        "renew-after-expiry": lambda otherwise, cfg, st, c, r, n: c.exec == r.exec and c.owner == n}),
    # dispatch-after-failed-renewal: a failed renewal's row count is ignored and the runner goes on
    "FailedRenewalPc": (P.failed_renewal_pc, {
        "dispatch-after-failed-renewal": lambda otherwise, cfg, st: "renewed"}),
    # unfenced-step-publication: Step events are published without the fence
    "PublishOK": (P.publish_ok, {
        "unfenced-step-publication": lambda otherwise, cfg, st, n: True}),
    # memory-before-publish: publisher memory is set in the commit's step, before the publish returns
    "MemoryAtCommit": (P.memory_at_commit, {
        "memory-before-publish": lambda otherwise, cfg, st: True}),
    # cancel-interrupts-unstarted: with none attached, the assistant is derived from the execution (its first
    # Step's), not read (with one attached, that is the one derived, with MaxSteps = 1);
    # cancel-trusts-previous-step-memory: publisher memory names the assistant whenever it names one, so
    # between a later Step's Step.Started commit and its return it names the earlier Step's, completed
    "SettledAssistant": (P.settled_assistant, {
        "cancel-interrupts-unstarted": lambda otherwise, cfg, st, f, c, mem:
            asst(cfg, f.exec, 1) if c.asst == 0 else otherwise(cfg, st, f, c, mem),
        "cancel-trusts-previous-step-memory": lambda otherwise, cfg, st, f, c, mem:
            mem if mem != 0 else otherwise(cfg, st, f, c, mem)}),
    # step-failed-duplicate-interrupt: publisher memory still names the assistant as active, so it is
    # interrupted again after its Step.Failed
    "InterruptOwed": (P.interrupt_owed, {
        "step-failed-duplicate-interrupt": lambda otherwise, cfg, st, settle, a, mem, active:
            (active and mem == a) or otherwise(cfg, st, settle, a, mem, active)}),
    # cancel-restarts-assistant: memory has no assistant, so it starts one again, and that commits
    "RestartCommits": (P.restart_commits, {
        "cancel-restarts-assistant": lambda otherwise, cfg, st, a, mem: a != 0 and mem == 0}),
    # step-started-window: memory has no assistant, the restart is rejected and the finalizer retries, live
    "RestartRejected": (P.restart_rejected, {
        "step-started-window": lambda otherwise, cfg, st, a, mem: a != 0 and mem == 0}),
    # flush-without-assistant: the finalizer's flush of a fragment with no assistant in memory raises; it
    # retries, live, under its supervised heartbeat
    "FlushRaises": (P.flush_raises, {
        "flush-without-assistant": lambda otherwise, cfg, st, mem, active: active and mem == 0}),
    # cancel-requeues-continuation: the cancellation's clear inserts a session_recovery row (the insert's
    # conflict ignored) and a continuation, as conversion does
    "CancelRequeues": (P.cancel_requeues, {
        "cancel-requeues-continuation": lambda otherwise, cfg, st: True}),
    # renew-after-expiry (as MCRenewAccepts): a heartbeat renews an expired lease
    "HeartbeatAccepts": (P.heartbeat_accepts, {
        "renew-after-expiry": lambda otherwise, cfg, st, c: True}),
    # heartbeat-extends-lease: the lease grows by Lease from what remains of it, not from now
    "RenewedTtl": (P.renewed_ttl, {
        "heartbeat-extends-lease": lambda otherwise, cfg, st, c: c.ttl + cfg.lease}),
    # takeover-trusts-scan: the compare-and-swap trusts the scan (execution and quarantine flag only)
    "TakeoverMatches": (P.takeover_matches, {
        "takeover-trusts-scan": lambda otherwise, cfg, st, c, w: c.exec == w.exec and not c.quar}),
    # scan-quarantines-cancellation: the takeover quarantines cancellation-owned work in place
    "TakeoverQuarantines": (P.takeover_quarantines, {
        "scan-quarantines-cancellation": lambda otherwise, cfg, st, c: c.phase in ("cancelling", "cancelled")}),
    # takeover-overwrites-phase: the takeover sets recovering whatever the phase
    "TakeoverPhase": (P.takeover_phase, {
        "takeover-overwrites-phase": lambda otherwise, cfg, st, c: "recovering"}),
    # cross-session-recovery-collision: validation looks for a row of this Session only;
    # conversion-conflicts-on-own-row: any row naming the execution is a conflict, its own Session's too
    "ConversionConflict": (P.conversion_conflict, {
        "cross-session-recovery-collision": lambda otherwise, cfg, st, w: has_row(st, w.sess, w.exec),
        "conversion-conflicts-on-own-row": lambda otherwise, cfg, st, w: row_for_exec(st, w.exec)}),
    # recovery-retries-unbounded: a conversion that lost its lease is always released for a retry
    "MayRetry": (P.may_retry, {
        "recovery-retries-unbounded": lambda otherwise, cfg, st, c: True}),
    # cancellation-quarantine-strands: cancellation-owned work is quarantined, not finished
    "FinishesCancellation": (P.finishes_cancellation, {
        "cancellation-quarantine-strands": lambda otherwise, cfg, st, c: False}),
    # conversion-leaves-assistant-open: conversion publishes no Step.Interrupted for an open assistant
    "ConversionSettles": (P.conversion_settles, {
        "conversion-leaves-assistant-open": lambda otherwise, cfg, st: False}),
    # silent-quarantine-noop: the quarantine adds a lease predicate, and a worker whose lease expired
    # changes zero rows, silently
    "QuarantineMatches": (P.quarantine_matches, {
        "silent-quarantine-noop": lambda otherwise, cfg, st, c, w, r:
            otherwise(cfg, st, c, w, r) and c.ttl > 0}),
    # conversion-retry-mints-new-ids: the continuation id is minted per attempt, not derived from Session and
    # execution, so a retry after a lost acknowledgement does not find the continuation it created
    "ContinuationGen": (P.continuation_gen, {
        "conversion-retry-mints-new-ids": lambda otherwise, cfg, st, attempt: attempt}),
    # reconvert-replay-leaves-assistant-open: the retry that does not find its own committed work replays the
    # conversion without its settling Step.Interrupted (as if the first attempt's had committed)
    "ReplaySettles": (P.replay_settles, {
        "reconvert-replay-leaves-assistant-open": lambda otherwise, cfg, st: False}),
    # wake-fresh-share-zero: no slot of a wake batch is kept for fresh rows (retries fill it first);
    # wake-fresh-share-full: every slot is (fresh rows fill it first, no retry advances)
    "FreshSlots": (P.fresh_slots, {
        "wake-fresh-share-zero": lambda otherwise, cfg, st: 0,
        "wake-fresh-share-full": lambda otherwise, cfg, st: cfg.wake_batch}),
    # scan-window-ignores-fresh-share: the claim scan's window is the oldest ScanBound eligible claims whatever
    # their kind, so retried poison claims fill it ahead of a fresh one
    "ScanPlansByKind": (P.scan_plans_by_kind, {
        "scan-window-ignores-fresh-share": lambda otherwise, cfg, st: False}),
    # wake-retry-oldest-first: retried wake rows take their slots oldest first, with no rounds, so a poison
    # retried row woken and lost for ever takes every retry slot ahead of a younger one
    "RetryRounds": (P.retry_rounds, {
        "wake-retry-oldest-first": lambda otherwise, cfg, st: False}),
    # wake-reserve-without-cas: a waker's reservation updates each planned row by its id alone, with no
    # compare-and-set on the counter it observed: it takes a row another waker reserved since its read
    "ReserveMatches": (P.reserve_matches, {
        "wake-reserve-without-cas": lambda otherwise, cfg, st, p: st.wakes[p.row - 1].work}),
    # wake-serves-regardless: a woken ordinary wake (WakesTied) acquires any pending input of its Session, a
    # continuation recovery owns too
    "WakeSelects": (P.wake_selects, {
        "wake-serves-regardless": lambda otherwise, cfg, st, i: True}),
    # exact-retry-appends-twice: the retry's idempotency check reads the input's projection (is it waiting?)
    # instead of the deterministic request id, and every request arms the prompt: once the prompt was taken, a
    # retry appends a second PromptExecutionRequested and the prompt waits to run again
    "RetryAppends": (P.retry_appends, {
        "exact-retry-appends-twice": lambda otherwise, cfg, st, j: j.state != "pending"}),
    "RequestArms": (P.request_arms, {
        "exact-retry-appends-twice": lambda otherwise, cfg, st, j: True}),
    # exact-retry-arms-continuation: the identity check asks only whether recovery has taken the input, not
    # its kind: a public retry names a continuation and its request is appended (R003-MUST-FIX-1's impact)
    "RetryRefusesContinuation": (P.retry_refuses_continuation, {
        "exact-retry-arms-continuation": lambda otherwise, cfg, st, j: False}),
    # exact-retry-ignores-content: the identity check compares the id only, not the content's digest: a retry
    # with another content is taken as the admitted prompt's
    "RetryContentMatches": (P.retry_content_matches, {
        "exact-retry-ignores-content": lambda otherwise, cfg, st, d: True}),
    # resume-drains-without-request: the resume forces the drain with no durable request first; the drain
    # takes a held prompt at once (on a busy Session nothing would be left to redrive it)
    "ResumeRequests": (P.resume_requests, {
        "resume-drains-without-request": lambda otherwise, cfg, st: False}),
    # steer-selects-recovery-input: steer selection omits the exclusion of recovery-owned inputs
    "SteerSelects": (P.steer_selects, {
        "steer-selects-recovery-input": lambda otherwise, cfg, st, i: True}),
    # steer-takes-queued-input: steer selection ignores the delivery kind
    "SteerTakesKind": (P.steer_takes_kind, {
        "steer-takes-queued-input": lambda otherwise, cfg, st, i: True}),
    # queue-before-steer: the drain orders by age alone (no steer input goes ahead of a queue one)
    "KindAhead": (P.kind_ahead, {
        "queue-before-steer": lambda otherwise, cfg, st, j, i: False}),
    # selection-ignores-age: ordinary selection takes any waiting input of a delivery kind, not the oldest
    "AgeAhead": (P.age_ahead, {
        "selection-ignores-age": lambda otherwise, cfg, st, j, i: False}),
    # tool-settled-before-publication: the runner's tool-settlement flag is set before Tool.Success is
    # published, so after a failed publication the runner goes on as if the call were settled
    "SettlementFlagEarly": (P.settlement_flag_early, {
        "tool-settled-before-publication": lambda otherwise, cfg, st: True}),
    # recovery-reruns-unknown-tool: conversion re-runs the physical tool of a call whose outcome is uncertain
    # (then publishes its Tool.Success) instead of recording the call as failed
    "ConversionReruns": (P.conversion_reruns, {
        "recovery-reruns-unknown-tool": lambda otherwise, cfg, st: True}),
    # retry-tool-after-failed-publication: after a failed Tool.Success the runner runs the tool again (and
    # publishes again) instead of marking the claim unknown
    "RetriesFailedTool": (P.retries_failed_tool, {
        "retry-tool-after-failed-publication": lambda otherwise, cfg, st: True}),
    # tool-call-identified-by-step: a reconciliation identifies a tool call by its Step alone (no call index):
    # an outcome of any call of the Step reads as the outcome of every call started in it
    "ReconcilesCall": (P.reconciles_call, {
        "tool-call-identified-by-step": lambda otherwise, cfg, st, a, i: (
            call_started(st, a, i) and not step_has_outcome(st, a)),
        # reconciliation-skips-hosted-call: a reconciliation settles only calls a Tool.Started records
        "reconciliation-skips-hosted-call": lambda otherwise, cfg, st, a, i: (
            otherwise(cfg, st, a, i) and i != cfg.tools + 1)}),
    # step-ended-before-hosted-tool: the runner goes on from Step.Started's return without reconciling the
    # Step's hosted call (its local tools, then Step.Ended)
    "ReconcilesHosted": (P.reconciles_hosted, {
        "step-ended-before-hosted-tool": lambda otherwise, cfg, st: False}),
}


def snake(hook: str) -> str:
    """The twin's name of a TLA+ operator: SupHolds -> sup_holds, PublishOK -> publish_ok."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", hook).lower()


class Hooks:
    """One configuration's hooks, by the twin's names (`cfg.hooks.sup_holds(cfg, st, s, e, o)`)."""
    __slots__ = tuple(snake(h) for h in MC)

    def __init__(self, chosen: dict):
        for name, hook in chosen.items():
            setattr(self, name, hook)


@functools.lru_cache(maxsize=None)
def resolve(defects: frozenset[str]) -> Hooks:
    """Each hook as TLC's MC<Hook> decides it for `defects`: the first alternative switched on, falling
    through (`otherwise`) to the next one on, and to the protocol's hook."""
    chosen = {}
    for hook, (protocol, alternatives) in MC.items():
        decided = protocol
        for defect, alternative in reversed(alternatives.items()):
            if defect in defects:
                decided = functools.partial(alternative, decided)
        chosen[snake(hook)] = decided
    return Hooks(chosen)

"""The protocol's hooks (SessionExecution.tla, section "Hooks"): where a known defect decides differently,
the protocol's decision is a small named function, and these are the correct protocol's.

Each is the TLA+ operator of the same name (snake case), in the same order, taking the configuration
and the state, then the operator's parameters. Nothing here names a defect: `spec.mc` holds the
defective alternatives, as MCSessionExecution.tla does for TLC, and `Config.hooks` is the table one
configuration resolves to. A hook that reads another hook (SteerSelects reads OrdinarySelects) reads it
through that table, as TLC overrides it inside Protocol!SteerSelects too.
"""

from __future__ import annotations

from .state import completed, delivery, older_prompt, fenced, foreign_row, has_row, open_call, ordinary_ok, request_id, requests_of, row_for_exec, si, sup_holds


# The finalizer is supervised: its step begins with the supervision check, and its supervisor looks.
def finalizer_supervised(cfg, st, f):
    return sup_holds(cfg, st, f.sess, f.exec, f.owner)


# Ordinary steer/queue selection takes prompts, and continuations only without a recovery row.
def ordinary_selects(cfg, st, i):
    return i.kind == "prompt" or not has_row(st, i.sess, i.src)


# Acquisition finds the Session free: it has no claim, live or expired (insert-only).
def claim_free(cfg, st, s, ordinary):
    return st.claim[s].phase == "none"


# Recovery promotes its own continuation: one with its session_recovery row.
def promotion_owned(cfg, st, i):
    return has_row(st, i.sess, i.src)


# The promotion validates the continuation row as recovery made it (the reviewed input.ts 321-397): its id is
# the one derived from Session and execution, its Session the recovered execution's, queue delivery, the exact
# recovery prompt, its assistant the recovered execution's and the Session's newest, synthetic. A row with
# any flaw (forged or corrupt) is refused.
def continuation_valid(cfg, st, i):
    return i.flaw == ""


# The renewal's fence: exact Session, execution, owner, and an unexpired lease.
def renew_accepts(cfg, st, c, r, n):
    return c.exec == r.exec and c.owner == n and c.ttl > 0


# After a failed renewal (zero rows) the runner stops before any provider call.
def failed_renewal_pc(cfg, st):
    return "stopped"


# Step events are published only under the exact, live, running claim.
def publish_ok(cfg, st, n):
    r = st.run[n]
    return ordinary_ok(st, si(cfg, r.sess), r.exec, cfg.nodes[n])


# Publisher memory is set when the publish returns (after listeners), not in the commit's step.
def memory_at_commit(cfg, st):
    return False


# The assistant the finalizer settles: the one attached to the claim, read from the database (publisher
# memory, `mem`, which may still name an earlier Step's assistant, is not consulted).
def settled_assistant(cfg, st, f, c, mem):
    return c.asst


# Step.Interrupted is owed to a started assistant with no terminal event (from the log; publisher
# memory, `mem` and `active` of the assistant `a`, is not consulted).
def interrupt_owed(cfg, st, settle, a, mem, active):
    return settle != 0 and not completed(st, settle)


# The finalizer starts no assistant again (it reads the durable one), so no restart commits ...
def restart_commits(cfg, st, a, mem):
    return False


# ... and none is rejected and retried.
def restart_rejected(cfg, st, a, mem):
    return False


# The finalizer's flush of publisher memory's open stream fragment never raises: a fragment with no
# assistant in memory is dropped (nothing of it is durable) and the settlement goes on (R000-v18-flush).
def flush_raises(cfg, st, mem, active):
    return False


# Cancellation creates no recovery state (no session_recovery row, no continuation).
def cancel_requeues(cfg, st):
    return False


# A heartbeat renews only a live lease.
def heartbeat_accepts(cfg, st, c):
    return c.ttl > 0


# A renewed lease lives Lease ticks from now.
def renewed_ttl(cfg, st, c):
    return cfg.lease


# The takeover's compare-and-swap: what the scan saw (execution, former owner), still expired past the
# grace, with a null recovery error.
def takeover_matches(cfg, st, c, w):
    return c.exec == w.exec and c.owner == w.seen and c.ttl <= -cfg.eff_grace and not c.quar


# The takeover quarantines nothing in place (cancellation-owned work is finished by conversion).
def takeover_quarantines(cfg, st, c):
    return False


# The takeover moves running to recovering and keeps any other phase.
def takeover_phase(cfg, st, c):
    return "recovering" if c.phase == "running" else c.phase


# Conversion's validation: a session_recovery row of another Session already names this execution (forged or
# corrupt); its own Session's row is an earlier attempt's keyed writes, which the conversion completes.
def conversion_conflict(cfg, st, w):
    return foreign_row(cfg, st, si(cfg, w.sess), w.exec)


# A conversion that lost its lease is released for a retry while attempts remain.
def may_retry(cfg, st, c):
    return c.tries < cfg.max_tries


# Recovery finishes cancellation-owned work.
def finishes_cancellation(cfg, st, c):
    return c.phase in ("cancelling", "cancelled")


# Conversion settles an open assistant with Step.Interrupted.
def conversion_settles(cfg, st):
    return True


# The quarantine matches the exact claim the worker owns, with no lease predicate.
def quarantine_matches(cfg, st, c, w, r):
    return c.exec == w.exec and c.owner == r and not c.quar


# The continuation id a conversion's attempt (0 the first, 1 its retry) derives: from Session and
# execution alone, whatever the attempt (recovery-id.ts), so a retry names the continuation it created.
def continuation_gen(cfg, st, attempt):
    return 0


# The retry that does not find its own committed work (its first attempt did not commit: RecoveryConvertFails)
# replays every write of the conversion, the settling Step.Interrupted of an open assistant among them.
def replay_settles(cfg, st):
    return True


# The slots of a wake batch that fresh rows take first: the fresh share.
def fresh_slots(cfg, st):
    return cfg.fresh_share


# A claim scan of several rows plans its window by kind (impl/wakes.py plan_batch): fresh claims, never
# taken over, first up to the fresh share, then retried ones, so retried poison claims never fill it.
def scan_plans_by_kind(cfg, st):
    return True


# Retried wake rows take their slots in rounds: a row woken in the current round waits until every waiting
# retried row has been (issue 31 item 3), so a poison retried row cannot take every retry slot.
def retry_rounds(cfg, st):
    return True


# A waker's reservation of a planned row is a compare-and-set: the row is still unreserved and its counter
# is the one the waker observed when it read the window (the reviewed code's predicates, recovery.ts
# 311-324, 394-425); a row whose counter moved, or that another waker reserved, is lost to this waker.
def reserve_matches(cfg, st, p):
    x = st.wakes[p.row - 1]
    return x.work and x.woken == "" and x.tries == p.tries


# A woken ordinary wake (WakesTied) acquires what ordinary selection picks: never a continuation recovery owns.
def wake_selects(cfg, st, i):
    return cfg.hooks.ordinary_selects(cfg, st, i)


# An exact retry appends its request only if the prompt has none: the event's id is deterministic (derived
# from the prompt's), so a second retry of a requested prompt appends nothing.
def retry_appends(cfg, st, j):
    return requests_of(st, j.sess, request_id(j)) == 0


# The request's projection: a held prompt now waits for execution (pending); one already waiting or
# taken is unchanged (it is never armed again).
def request_arms(cfg, st, j):
    return j.state == "held"


# The exact retry's identity check refuses a continuation by its kind, whatever its rows say: continuations
# are internal, recovery's alone (R003-MUST-FIX-1's impact: the reviewed check asked for a recovery row).
def retry_refuses_continuation(cfg, st, j):
    return j.kind == "cont"


# The identity includes the content: a retry whose digest is not the admitted input's is refused.
def retry_content_matches(cfg, st, d):
    return d == "admitted"


# An explicit resume durably requests the Session's pending ordinary execution (one transaction) before
# any drain; the drain is a step of its own (Acquire).
def resume_requests(cfg, st):
    return True


# Steer selection is ordinary selection: it excludes recovery-owned inputs exactly as the queue does.
def steer_selects(cfg, st, i):
    return cfg.hooks.ordinary_selects(cfg, st, i)


# Steer takes only inputs their caller admitted with steer delivery (with DeliveryKinds; without, any).
def steer_takes_kind(cfg, st, i):
    return not cfg.delivery_kinds or delivery(cfg, i) == "steer"


# Ordinary selection takes a waiting steer input j before a queue input i (steer before queue) ...
def kind_ahead(cfg, st, j, i):
    return delivery(cfg, j) == "steer" and delivery(cfg, i) == "queue"


# ... and, within a delivery kind, the oldest first.
def age_ahead(cfg, st, j, i):
    return delivery(cfg, j) == delivery(cfg, i) and older_prompt(j, i)


# The runner's tool-settlement flag changes only after Tool.Success is published, so a failed publication
# leaves the call unsettled.
def settlement_flag_early(cfg, st):
    return False


# Conversion never re-runs a tool call whose outcome is uncertain: it records the outcome (ToolFailed).
def conversion_reruns(cfg, st):
    return False


# After a failed Tool.Success the runner's error path marks the claim unknown; it never runs the tool again.
def retries_failed_tool(cfg, st):
    return False


# A reconciliation (recovery's conversion, the finalizer's settlement, recovery's finishing of a cancellation)
# settles call i of assistant a's Step when that call, matched by its index, is open.
def reconciles_call(cfg, st, a, i):
    return open_call(st, a, i)


# After Step.Started's return the runner reconciles the Step's hosted call (publishes its outcome) before any
# local tool, Step.Ended or Step.Failed.
def reconciles_hosted(cfg, st):
    return True


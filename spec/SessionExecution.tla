-------------------------- MODULE SessionExecution --------------------------
(***************************************************************************)
(* Durable agent-session execution: claims with owners and leases,         *)
(* Step.Started / Step.Failed / Step.Interrupted / Step.Ended,             *)
(* cancellation, and crash recovery over a shared SQL database.            *)
(*                                                                         *)
(* Each action is one atomic unit of the code: one transaction, or one     *)
(* in-memory update.  Where the code commits, runs listeners, then updates *)
(* memory, there are two actions and the state between them is explored.  *)
(* The executable twin is spec/model.py; names come from spec/names.py.    *)
(*                                                                         *)
(* Time is a discrete clock kept as each lease's ticks-to-live: Tick takes *)
(* one tick from every claim's lease, down to -Grace, so the state space   *)
(* stays finite while the clock runs forever (see spec/README.md).  A      *)
(* node's supervisor is its own step (Supervise); the clock waits while a  *)
(* node's supervision is overdue (SupervisionLag).                         *)
(*                                                                         *)
(* Steps.  An execution runs MaxSteps Steps (renewal, dispatch,            *)
(* Step.Started, Step.Ended), one assistant each: Asst(e, k).  The claim   *)
(* names the latest Step's assistant; publisher memory the last one the    *)
(* runner published (between Step k's commit and its return: Step k-1's). *)
(*                                                                         *)
(* Wake scans.  WakeRows wake rows (0 by default: not modelled), each with *)
(* a bounded wake-attempt counter; WakeScan plans a batch of WakeBatch as  *)
(* impl/wakes.py's plan_batch does (FreshShare slots for fresh rows first) *)
(* and reserves it by compare-and-set; retried rows take their slots in  *)
(* rounds (each waiting retried row once before any twice, `turned`).    *)
(* With Wakers > 1 the scan is each waker's WakeRead (the plan, kept in   *)
(* its memory `waker` with the counters observed) and WakeReserve (each   *)
(* planned row's compare-and-set, which may lose to another waker); see    *)
(* spec/README.md, decision 16.                                            *)
(* Inputs (Admission).  With Admission, prompts are admitted by an action  *)
(* (Admit) with their execution not yet requested (held); an exact retry   *)
(* of the same prompt appends its one PromptExecutionRequested, an         *)
(* explicit resume durably requests the Session's held prompts, and only   *)
(* then may the drain (Acquire) or a running execution's steer take them.  *)
(* With Steering, a runner steers pending inputs into its execution at a   *)
(* Step's start, excluding recovery-owned ones as the queue does.          *)
(* Delivery kinds (DeliveryKinds).  Each prompt carries the delivery its   *)
(* caller chose at admission (steer for the prompt numbers SteerPrompts,   *)
(* queue for the rest and for every continuation): Steer takes only steer  *)
(* inputs, oldest first; the drain (Acquire) takes steer inputs before     *)
(* queue ones, each kind oldest first (spec/README.md, decision 27).       *)
(* Without DeliveryKinds the selection's order is left free.               *)
(* Local tools.  With Tools = 1 a Step runs one local tool call after its  *)
(* Step.Started (with Tools = 2, two, one after the other, each named by   *)
(* its call index), each: a fenced start that renews the lease and records *)
(* the call (ToolStart), the physical tool (ToolRun, an effect of kind     *)
(* "tool"), then the Tool.Success publication (PublishToolSuccess; the     *)
(* runner's settlement flag changes only once it committed).  A failed     *)
(* publication (ToolSuccessFails, the environment's "publication" fault)   *)
(* leaves the call unsettled and the runner marks the claim unknown        *)
(* (MarkUnknown).  Recovery and the finalizer never re-run a call: they   *)
(* record its outcome durably (ToolFailed) and the Session moves on.       *)
(* Tools = 0 is the model without tools.                                   *)
(* Hosted tools.  With Hosted = 1 each Step's provider call also runs one  *)
(* hosted tool (the provider executes it inside the dispatch; the runner   *)
(* never runs or replays it).  Its Step.Started names it (call index       *)
(* HostedCall = Tools + 1), and after Step.Started's return the runner's   *)
(* fenced HostedReconcile publishes its outcome (Tool.Success with that    *)
(* index) before any local tool, Step.Ended or Step.Failed.  A failed      *)
(* publication (HostedReconcileFails) is the runner's error path; recovery *)
(* and the finalizer reconcile the open hosted call as a local one.        *)
(* Step publication faults.  Under the same fault, Step.Started's or       *)
(* Step.Ended's transaction may fail too (StepStartedFails,                *)
(* StepEndedFails): the runner's error path is the same MarkUnknown.       *)
(* Stream fragments.  With Fragments = 1 a stream may open a partial       *)
(* fragment before its Step.Started (OpenFragment): publisher memory holds *)
(* it open and names no assistant; the finalizer's flush drops it.         *)
(* Hung listeners.  With the fault "hang" a listener of a committed Step   *)
(* event may never return (ListenerHangs): the runner stays at its gate    *)
(* ("hung") while its node's heartbeat keeps the lease live (Residual R2). *)
(*                                                                         *)
(* Hooks.  This module is the correct protocol only: no defect switch is   *)
(* declared or read here.  Each place a known defect (spec/names.py)       *)
(* changes the behaviour is a small named operator, a *hook*, stating what *)
(* the protocol decides there.  The section "Hooks" below defines them,    *)
(* and is their one list: spec/names.py's HOOKS reads it from there.       *)
(* These, and only these, are what a model-checking module may override   *)
(* (MCSessionExecution.tla, `Hook <- MCHook` in the generated MC_*.cfg, as *)
(* CCF's MCccfraft.cfg overrides ccfraft's operators), so that a defect is *)
(* a model-checking configuration, never a branch of the protocol, and the *)
(* protocol a reader reads is the one the code must implement.  A hook     *)
(* reads no primed variable, so replacing it changes a decision, never the *)
(* shape of an action.                                                     *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    \* @type: Set(Str);
    Sessions,
    \* @type: Set(Str);
    Nodes,
    \* @type: Set(Str);
    Recoverers,     \* recovery workers, each with an owner id of its own
    \* @type: Int;
    Prompts,        \* prompts admitted per Session at Init
    \* @type: Int;
    MaxExec,        \* execution ids are 1..MaxExec, globally unique
    \* @type: Int;
    MaxSteps,       \* Steps per execution; Step k of execution e writes assistant (e - 1) * MaxSteps + k
    \* @type: Int;
    Tools,          \* local tool calls per Step (0, 1 or 2; 0: the model without tools)
    \* @type: Int;
    Hosted,         \* 0 or 1: each Step's provider call also runs one hosted tool (call index Tools + 1)
    \* @type: Int;
    Lease,          \* ticks a fresh lease lives
    \* @type: Int;
    ScanBound,      \* rows a recovery scan looks at, oldest first
    \* @type: Int;
    MaxTries,       \* takeovers of one claim before a conversion that lost its lease quarantines it
    \* @type: Set(Str);
    Faults,         \* which of "crash", "pause", "corrupt", "ack", "publication", "hang", "forge" the environment may inject
    \* @type: Bool;
    TimelyDispatch,
    \* @type: Int;
    Grace,          \* ticks an expired claim waits before RecoveryTakeover may take it
    \* @type: Int;
    SupervisionLag, \* Supervise happens before this many ticks pass after a claim expires or changes
    \* @type: Bool;
    ProcessLocalRouting,
    \* @type: Int;
    WakeRows,       \* wake rows (1..WakeRows, oldest first); 0: wake scans are not modelled
    \* @type: Int;
    WakeBatch,      \* rows one wake scan reserves at most (the batch bound)
    \* @type: Int;
    FreshShare,     \* slots of a batch kept for fresh rows (never woken before): 1..WakeBatch-1
    \* @type: Int;
    MaxWakeTries,   \* a wake row's counter rotates from MaxWakeTries back to 1
    \* @type: Int;
    Wakers,         \* wakers scanning the wake rows (1: one scan transaction; 2: read and reserve race)
    \* @type: Bool;
    WakesTied,      \* wake rows tied to the work they wake: row 1 the Session's ordinary wake, row 2 its recovery wake
    \* @type: Bool;
    Admission,      \* prompts are admitted by Admit (not at Init), armed by ExactRetry or Resume
    \* @type: Bool;
    Steering,       \* a running execution steers pending inputs into itself at a Step's start (Steer)
    \* @type: Bool;
    DeliveryKinds,  \* inputs carry their delivery kind: Steer takes steer inputs, the drain steer before queue
    \* @type: Set(Int);
    SteerPrompts,   \* with DeliveryKinds, the prompt numbers admitted with steer delivery (the rest: queue)
    \* @type: Int;
    Fragments,      \* 0 or 1: a provider stream may open a partial fragment before its Step's Step.Started
    \* @type: Set(Str);
    LeftClaims      \* Sessions whose claim earlier processes left at Init: a poison row each (a restart)

(*
  @typeAlias: claim = {exec: Int, owner: Str, ttl: Int, phase: Str, asst: Int, quar: Bool, tries: Int, why: Str};
  @typeAlias: event = {sess: Str, kind: Str, asst: Int, node: Str, call: Int};
  @typeAlias: row = {exec: Int, sess: Str};
  @typeAlias: input = {sess: Str, kind: Str, src: Int, state: Str, gen: Int, flaw: Str};
  @typeAlias: runner = {pc: Str, sess: Str, exec: Int, mem: Int, active: Bool, intr: Bool, ordinal: Int, tool: Int};
  @typeAlias: finalizer = {pc: Str, sess: Str, exec: Int, owner: Str};
  @typeAlias: worker = {pc: Str, sess: Str, exec: Int, seen: Str, why: Str};
  @typeAlias: effect = {sess: Str, exec: Int, owner: Str, by: Str, kind: Str, step: Int, call: Int};
  @typeAlias: wake = {work: Bool, tries: Int, woken: Str, turned: Bool};
  @typeAlias: plan = {row: Int, tries: Int, slot: Str};
*)
SessionExecution_typedefs == TRUE

\* up to two local tool calls per Step, run one after the other; a call is identified by (Session,
\* execution, Step, call index), and its events and effect carry the index (spec/README.md, decision 19)
ASSUME Tools \in 0..2
\* at most one hosted tool per Step, run by the provider inside its dispatch (spec/README.md, decision 19)
ASSUME Hosted \in 0..1

\* one waker (its scan one action, WakeScan) or several racing their reads and reservations (decision 16)
ASSUME Wakers >= 1 /\ (Wakers > 1 => WakeRows > 0)
\* tied wake rows (decision 16): one Session, its ordinary wake (row 1) and its recovery wake (row 2), one waker
ASSUME WakesTied \in BOOLEAN /\ (WakesTied => Cardinality(Sessions) = 1 /\ WakeRows = 2 /\ Wakers = 1)

\* a left claim's execution took its Session's prompt 1 (admitted at Init), and its owner is the one
\* recovery worker (spec/README.md, decision 16)
ASSUME LeftClaims \subseteq Sessions
ASSUME LeftClaims # {} => /\ ~Admission /\ Prompts >= 1 /\ Cardinality(Recoverers) = 1
                          /\ Cardinality(LeftClaims) <= MaxExec

VARIABLES
    \* the execution claim of each Session (NoClaim when there is none)
    \* @type: Str -> $claim;
    claim,
    \* the next fresh execution id
    \* @type: Int;
    nextExec,
    \* the durable event log, in commit order
    \* @type: Seq($event);
    log,
    \* session_recovery rows
    \* @type: Set($row);
    recovery,
    \* queued prompts and continuations
    \* @type: Set($input);
    inputs,
    \* each node's runner, with its publisher memory (not durable)
    \* @type: Str -> $runner;
    run,
    \* each node's cancellation finalizer (not durable)
    \* @type: Str -> $finalizer;
    fin,
    \* each recovery worker (not durable)
    \* @type: Str -> $worker;
    rec,
    \* history: executions that reached cancelled, with their Session
    \* @type: Set($row);
    cancelled,
    \* history: which faults have happened (the liveness premises)
    \* @type: Set(Str);
    faults,
    \* history: every external effect a node begins (provider dispatch, local tool, finalizer
    \* reconciliation; recovery's are read from its workers' moves: RecoveryEffectsBegun),
    \* with the claim identity (execution, owner) its actor works under, the node (or worker) it runs on
    \* and the Step of a dispatch or tool (0 for a reconciliation)
    \* @type: Set($effect);
    effects,
    \* the wake rows (durable): pending work, its wake counter (0: fresh, never woken), and the kind of
    \* reservation it holds ("" none, "fresh", "retry"), and whether it was woken in the current round of
    \* retries (turned: a retried row that was waits until every waiting retried row has been)
    \* @type: Int -> $wake;
    wakes,
    \* each waker's memory between its read and its reservation (not durable; Wakers > 1 only): the rows
    \* it planned, each with the counter it observed and the slot kind it plans it in
    \* @type: Int -> Set($plan);
    waker

vars == <<claim, nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects, wakes, waker>>

Phases == {"none", "running", "recovering", "cancelling", "cancelled", "unknown"}
RunnerPcs == {"idle", "acquired", "renewed", "streaming", "started", "stepping", "failed", "ended", "done",
              "stopped", "tool_started", "tooling", "tool_failed", "publish_failed", "hung", "hosted"}
TerminalKinds == {"Failed", "Interrupted", "Ended"}
StepKinds == {"Started"} \cup TerminalKinds
\* an input event: an exact retry's (or nothing else's) durable request to execute a prompt; it names the
\* prompt's number in the event's id slot (`asst`) and is written under no claim (`node` "")
RequestKind == "PromptExecutionRequested"
InputStates == {"held", "pending", "ordinary", "recovery", "steered", "quarantined"}
\* The one flaw a forged or corrupt continuation-kind row has (ForgeContinuation; spec/README.md decision 28), one
\* per check of the reviewed promotion's validation the model did not have (spec/names.py CONTINUATION_FLAWS):
\* a non-canonical id, another Session's execution, steer delivery, other prompt content, an assistant not of
\* the recovered execution, not the Session's newest assistant, not synthetic.  "" for every row recovery made.
ContinuationFlaws == {"id", "session", "delivery", "prompt", "assistant", "newest", "synthetic"}
\* tool events: the fenced start records the call; its outcome is Tool.Success, or the failure recorded by
\* a reconciliation (recovery's or the finalizer's: the outcome is uncertain)
ToolOutcomes == {"ToolSucceeded", "ToolFailed"}
ToolKinds == {"ToolStarted"} \cup ToolOutcomes

NoClaim == [exec |-> 0, owner |-> "", ttl |-> 0, phase |-> "none", asst |-> 0, quar |-> FALSE, tries |-> 0, why |-> ""]
RunnerIdle == [pc |-> "idle", sess |-> "", exec |-> 0, mem |-> 0, active |-> FALSE, intr |-> FALSE, ordinal |-> 0,
               tool |-> 0]
FinIdle == [pc |-> "idle", sess |-> "", exec |-> 0, owner |-> ""]
RecIdle == [pc |-> "idle", sess |-> "", exec |-> 0, seen |-> "", why |-> ""]
WakeIdle == [work |-> FALSE, tries |-> 0, woken |-> "", turned |-> FALSE]
WakeRowIds == 1..WakeRows
\* the wakers whose read and reservation are two actions: none with one waker (its scan is one action)
WakerIds == IF Wakers > 1 THEN 1..Wakers ELSE {}
\* the one waker whose scan is one action (WakeScan), when there is one (a set, so TLC labels the step WakeScan)
OneWaker == IF Wakers <= 1 THEN {"waker"} ELSE {}

-----------------------------------------------------------------------------
(* Helpers *)

\* One assistant per Step: Step k of execution e writes assistant Asst(e, k), so ids stay globally unique
\* (with MaxSteps = 1 the assistant id is the execution id)
Asst(e, k) == (e - 1) * MaxSteps + k
ExecOf(a) == (a - 1) \div MaxSteps + 1
Assistants == 1..(MaxExec * MaxSteps)
\* the assistant of the runner's current Step (its loop counter, `ordinal`)
StepAsst(r) == Asst(r.exec, r.ordinal)
\* the Step an assistant belongs to, within its execution
StepOf(a) == a - (ExecOf(a) - 1) * MaxSteps

Started(a) == \E k \in DOMAIN log : log[k].kind = "Started" /\ log[k].asst = a
Completed(a) == \E k \in DOMAIN log : log[k].kind \in TerminalKinds /\ log[k].asst = a
HasRow(s, e) == [exec |-> e, sess |-> s] \in recovery
RowForExec(e) == \E r \in recovery : r.exec = e
\* A continuation's identity is (Session, execution, gen); the protocol's id is derived from Session and
\* execution alone (gen 0, ContinuationGen), so a retried conversion names the continuation it created.
\* A session_recovery row names execution e under another Session than s: forged or corrupt.  (A row of s
\* itself naming e is recovery's own conversion of e, healthy work recovered, never a reason to quarantine.)
ForeignRow(s, e) == \E x \in recovery : x.exec = e /\ x.sess # s
Continuation(s, e, g) == [sess |-> s, kind |-> "cont", src |-> e, state |-> "pending", gen |-> g, flaw |-> ""]
HasContinuation(k) == \E i \in inputs : i.sess = k.sess /\ i.kind = "cont" /\ i.src = k.src /\ i.gen = k.gen
\* An input's id as a PromptExecutionRequested names it (the event's `asst`): a prompt's number, a
\* continuation's recovered execution negated (only a defective identity check lets a request name one).
RequestId(j) == IF j.kind = "prompt" THEN j.src ELSE -j.src
\* the input j is the one id i names (an id carries no state)
SameInput(j, i) == j.sess = i.sess /\ j.kind = i.kind /\ j.src = i.src /\ j.gen = i.gen
\* the prompt's execution was requested by its exact retry: its one PromptExecutionRequested is in the log
Requested(s, p) == \E k \in DOMAIN log : log[k].kind = RequestKind /\ log[k].sess = s /\ log[k].asst = p
RequestsOf(s, p) == {k \in DOMAIN log : log[k].kind = RequestKind /\ log[k].sess = s /\ log[k].asst = p}
PromptsOf(s) == {i \in inputs : i.sess = s /\ i.kind = "prompt"}
\* the call indices a Step's tool calls may have (local calls 1..Tools, then the hosted call: at most 3)
CallIndices == 1..3
\* the hosted call's index: after the local calls'
HostedCall == Tools + 1
\* call i of assistant a's Step: its start is recorded (a local call's ToolStarted, or the Step.Started that
\* names its hosted call); it has an outcome (each matched by the call index)
CallStarted(a, i) == \E k \in DOMAIN log : log[k].kind \in {"ToolStarted", "Started"} /\ log[k].asst = a /\ log[k].call = i
CallSettled(a, i) == \E k \in DOMAIN log : log[k].kind \in ToolOutcomes /\ log[k].asst = a /\ log[k].call = i
\* call i of assistant a's Step has its start recorded and no outcome
OpenCall(a, i) == CallStarted(a, i) /\ ~CallSettled(a, i)
\* a tool event of call i (a start or an outcome) for assistant a's Step, written under owner nd
ToolEvent(s, kind, a, nd, i) == [sess |-> s, kind |-> kind, asst |-> a, node |-> nd, call |-> i]

\* The delivery its caller chose for input i (DeliveryKinds): steer for the prompts SteerPrompts names, queue
\* for the others and for every continuation (recovery creates it with queue delivery).
Delivery(i) == IF i.kind = "prompt" /\ i.src \in SteerPrompts THEN "steer" ELSE "queue"
\* j was admitted before i (age: a Session's prompts are numbered in admission order)
OlderPrompt(j, i) == j.kind = "prompt" /\ i.kind = "prompt" /\ j.src < i.src

\* exact Session, execution, owner and an unexpired lease
Fenced(s, e, o) == claim[s].exec = e /\ claim[s].owner = o /\ claim[s].ttl > 0
\* an ordinary (runner) update: fenced, and phases never move backwards from running
OrdinaryOK(s, e, o) == Fenced(s, e, o) /\ claim[s].phase = "running"

\* The node's supervision check: the claim its actor works under is still its exact, live claim.  (A
\* hook until issue 30: its defect, supervise-on-expiry-only, the lease's expiry alone, is equivalent to
\* it under Grace >= SupervisionLag, since a claim changes identity only by a takeover, after the grace.)
SupHolds(s, e, o) == Fenced(s, e, o)

ActiveOn(n, e) == \/ run[n].exec = e /\ run[n].pc \notin {"idle", "stopped"}
                  \/ fin[n].exec = e /\ fin[n].pc # "idle"
OwnerActive(s) == \/ \E n \in Nodes : ActiveOn(n, claim[s].exec)
                  \/ \E r \in Recoverers : rec[r].exec = claim[s].exec /\ rec[r].pc # "idle"

-----------------------------------------------------------------------------
(* Hooks: the protocol's decisions where a known defect differs (every         *)
(* operator defined in this section is a hook, and nothing else is: the        *)
(* registry, spec/names.py HOOKS, reads the list from here; the MC module's    *)
(* MC<Hook> overrides each).  Each states the correct protocol.                *)

\* The finalizer is supervised: its step begins with the supervision check, and its supervisor looks.
FinalizerSupervised(f) == SupHolds(f.sess, f.exec, f.owner)
\* Ordinary steer/queue selection takes prompts, and continuations only without a recovery row.
OrdinarySelects(i) == i.kind = "prompt" \/ ~HasRow(i.sess, i.src)
\* Acquisition finds the Session free: it has no claim, live or expired (insert-only).
ClaimFree(s, ordinary) == claim[s].phase = "none"
\* Recovery promotes its own continuation: one with its session_recovery row.
PromotionOwned(i) == HasRow(i.sess, i.src)
\* The promotion validates the continuation row as recovery made it (the reviewed input.ts 321-397): its id is
\* the one derived from Session and execution, its Session the recovered execution's, queue delivery, the exact
\* recovery prompt, its assistant the recovered execution's and the Session's newest, synthetic.  A row with
\* any flaw (forged or corrupt) is refused.
ContinuationValid(i) == i.flaw = ""
\* The renewal's fence: exact Session, execution, owner, and an unexpired lease.
RenewAccepts(c, r, n) == c.exec = r.exec /\ c.owner = n /\ c.ttl > 0
\* After a failed renewal (zero rows) the runner stops before any provider call.
FailedRenewalPc == "stopped"
\* Step events are published only under the exact, live, running claim.
PublishOK(n) == OrdinaryOK(run[n].sess, run[n].exec, n)
\* Publisher memory is set when the publish returns (after listeners), not in the commit's step.
MemoryAtCommit == FALSE
\* The assistant the finalizer settles: the one attached to the claim, read from the database (publisher
\* memory, `mem`, which may still name an earlier Step's assistant, is not consulted).
SettledAssistant(f, c, mem) == c.asst
\* Step.Interrupted is owed to a started assistant with no terminal event (from the log; publisher
\* memory, `mem` and `active` of the assistant `a`, is not consulted).
InterruptOwed(settle, a, mem, active) == settle # 0 /\ ~Completed(settle)
\* The finalizer starts no assistant again (it reads the durable one), so no restart commits ...
RestartCommits(a, mem) == FALSE
\* ... and none is rejected and retried.
RestartRejected(a, mem) == FALSE
\* The finalizer's flush of publisher memory's open stream fragment never raises: a fragment with no
\* assistant in memory (`active` and `mem` 0: the stream began, no Step.Started returned) is dropped
\* (nothing of it is durable), and the settlement goes on from the claim's assistant (R000-v18-flush).
FlushRaises(mem, active) == FALSE
\* Cancellation creates no recovery state (no session_recovery row, no continuation).
CancelRequeues == FALSE
\* A heartbeat renews only a live lease.
HeartbeatAccepts(c) == c.ttl > 0
\* A renewed lease lives Lease ticks from now.
RenewedTtl(c) == Lease
\* The takeover's compare-and-swap: what the scan saw (execution, former owner), still expired past the
\* grace, with a null recovery error.
TakeoverMatches(c, w) == c.exec = w.exec /\ c.owner = w.seen /\ c.ttl <= -Grace /\ ~c.quar
\* The takeover quarantines nothing in place (cancellation-owned work is finished by conversion).
TakeoverQuarantines(c) == FALSE
\* The takeover moves running to recovering and keeps any other phase.
TakeoverPhase(c) == IF c.phase = "running" THEN "recovering" ELSE c.phase
\* Conversion's validation: a session_recovery row of another Session already names this execution (forged
\* or corrupt).  Its own Session's row naming it is an earlier attempt's keyed writes (a retry that replayed
\* them after its lease expired): the conversion completes it, its own inserts meeting their keys.
ConversionConflict(w) == ForeignRow(w.sess, w.exec)
\* A conversion that lost its lease is released for a retry while attempts remain.
MayRetry(c) == c.tries < MaxTries
\* Recovery finishes cancellation-owned work.
FinishesCancellation(c) == c.phase \in {"cancelling", "cancelled"}
\* Conversion settles an open assistant with Step.Interrupted.
ConversionSettles == TRUE
\* The quarantine matches the exact claim the worker owns, with no lease predicate.
QuarantineMatches(c, w, r) == c.exec = w.exec /\ c.owner = r /\ ~c.quar
\* The continuation id a conversion's attempt (0 the first, 1 its retry) derives: from Session and
\* execution alone, whatever the attempt (recovery-id.ts), so a retry names the continuation it created.
ContinuationGen(attempt) == 0
\* A retry that does not find its own committed work (its first attempt did not commit) replays every write
\* of the conversion, the settling Step.Interrupted of an open assistant among them.
ReplaySettles == TRUE
\* The slots of a wake batch that fresh rows take first: the fresh share.
FreshSlots == FreshShare
\* A claim scan of several rows plans its window by kind (impl/wakes.py plan_batch): fresh claims, never
\* taken over, first up to the fresh share, then retried ones, so retried poison claims never fill it.
ScanPlansByKind == TRUE
\* Retried wake rows take their slots in rounds: a row woken in the current round waits until every waiting
\* retried row has been (issue 31 item 3), so a poison retried row cannot take every retry slot.
RetryRounds == TRUE
\* A waker's reservation of a planned row is a compare-and-set: the row is still unreserved and its counter
\* is the one the waker observed when it read the window (the reviewed code's predicates, recovery.ts
\* 311-324, 394-425); a row whose counter moved, or that another waker reserved, is lost to this waker.
ReserveMatches(p) == wakes[p.row].work /\ wakes[p.row].woken = "" /\ wakes[p.row].tries = p.tries
\* A woken ordinary wake (WakesTied) acquires what ordinary selection picks: never a continuation recovery
\* owns (nor, once quarantine is modelled per input, a quarantined one).
WakeSelects(i) == OrdinarySelects(i)
\* An exact retry appends its request only if the prompt has none: the event's id is deterministic (derived
\* from the prompt's), so a second retry of a requested prompt appends nothing.
RetryAppends(j) == ~Requested(j.sess, RequestId(j))
\* The request's projection: a held prompt now waits for execution (pending); one already waiting or
\* taken is unchanged (it is never armed again).
RequestArms(j) == j.state = "held"
\* The exact retry's identity check refuses a continuation by its kind, whatever its rows say: continuations
\* are internal, recovery's alone (R003-MUST-FIX-1's impact: the reviewed check asked for a recovery row).
RetryRefusesContinuation(j) == j.kind = "cont"
\* The identity includes the content: a retry whose digest is not the admitted input's is refused.
RetryContentMatches(d) == d = "admitted"
\* An explicit resume durably requests the Session's pending ordinary execution (one transaction) before
\* any drain; the drain is a step of its own (Acquire).
ResumeRequests == TRUE
\* Steer selection is ordinary selection: it excludes recovery-owned inputs exactly as the queue does.
SteerSelects(i) == OrdinarySelects(i)
\* Steer takes only inputs their caller admitted with steer delivery (with DeliveryKinds; without, any).
SteerTakesKind(i) == ~DeliveryKinds \/ Delivery(i) = "steer"
\* Ordinary selection takes a waiting steer input j before a queue input i (steer before queue) ...
KindAhead(j, i) == Delivery(j) = "steer" /\ Delivery(i) = "queue"
\* ... and, within a delivery kind, the oldest first.
AgeAhead(j, i) == Delivery(j) = Delivery(i) /\ OlderPrompt(j, i)
\* The runner's tool-settlement flag changes only after Tool.Success is published, so a failed publication
\* leaves the call unsettled.
SettlementFlagEarly == FALSE
\* Conversion never re-runs a tool call whose outcome is uncertain: it records the outcome (ToolFailed).
ConversionReruns == FALSE
\* After a failed Tool.Success the runner's error path marks the claim unknown; it never runs the tool again.
RetriesFailedTool == FALSE
\* A reconciliation (recovery's conversion, the finalizer's settlement, recovery's finishing of a
\* cancellation) settles call i of assistant a's Step when that call, matched by its index, is open.
ReconcilesCall(a, i) == OpenCall(a, i)
\* After Step.Started's return the runner reconciles the Step's hosted call (publishes its outcome) before
\* any local tool, Step.Ended or Step.Failed.
ReconcilesHosted == TRUE

-----------------------------------------------------------------------------
(* Helpers that read hooks *)

\* the calls of assistant a's Step a reconciliation settles (none without an assistant)
ReconciledCalls(a) == IF a = 0 THEN {} ELSE {i \in CallIndices : ReconcilesCall(a, i)}
\* lg with one tool event of `kind` appended per call in cs, in index order (every open call of the Step)
WithCalls(lg, s, kind, a, nd, cs) ==
    LET one == IF 1 \in cs THEN Append(lg, ToolEvent(s, kind, a, nd, 1)) ELSE lg
        two == IF 2 \in cs THEN Append(one, ToolEvent(s, kind, a, nd, 2)) ELSE one
    IN IF 3 \in cs THEN Append(two, ToolEvent(s, kind, a, nd, 3)) ELSE two

\* ordinary steer/queue selection excludes recovery-owned inputs (those with a recovery row)
Selectable(i) == /\ i.state = "pending"
                 /\ OrdinarySelects(i)

\* With DeliveryKinds, ordinary selection (the drain, a steer) takes i only if no selectable input of its
\* Session waits ahead of it: steer before queue, then age (a steer takes steer inputs only, so its oldest).
InOrder(i) == ~DeliveryKinds \/ ~\E j \in inputs : /\ j.sess = i.sess /\ Selectable(j) /\ ~SameInput(j, i)
                                                 /\ (KindAhead(j, i) \/ AgeAhead(j, i))

Eligible(s) == claim[s].phase # "none" /\ claim[s].ttl <= -Grace /\ ~claim[s].quar

\* the k oldest claims of the Sessions S (creation order = execution id)
OldestClaims(S, k) == {s \in S : Cardinality({t \in S : claim[t].exec < claim[s].exec}) < k}

\* the bounded scan: with a bound of one, the oldest eligible claim; with more, the batch planned as
\* impl/wakes.py plan_batch plans it (fresh claims, never taken over, first up to the fresh share; then
\* retried ones; unused slots to the other kind)
ScanWindow == LET E == {s \in Sessions : Eligible(s)}
                  F == {s \in E : claim[s].tries = 0}
                  R == OldestClaims(E \ F, ScanBound - Cardinality(OldestClaims(F, FreshSlots)))
              IN IF ScanBound = 1 \/ ~ScanPlansByKind THEN OldestClaims(E, ScanBound)
                 ELSE R \cup OldestClaims(F, ScanBound - Cardinality(R))

RunnerAt(n, pc) == run[n].pc = pc /\ ~run[n].intr

\* The exact retry's identity check, in the protocol's order, for a caller naming Session s, input id i and
\* content digest d: "" (it holds) or the reason it refuses.  An id names no input (unknown-input: never
\* admitted, or forged), another Session's (other-session), a continuation (continuation), an input
\* recovery has taken (recovery-owned), or the content differs from the admitted (content-mismatch).
RetryRefusal(s, i, d) ==
    IF ~\E j \in inputs : SameInput(j, i) THEN "unknown-input"
    ELSE LET j == CHOOSE x \in inputs : SameInput(x, i)
         IN IF j.sess # s THEN "other-session"
            ELSE IF RetryRefusesContinuation(j) THEN "continuation"
            ELSE IF j.state = "recovery" THEN "recovery-owned"
            ELSE IF ~RetryContentMatches(d) THEN "content-mismatch"
            ELSE ""

InputUniverse ==
    [sess : Sessions, kind : {"prompt"}, src : 1..Prompts, state : {"pending"}, gen : {0}, flaw : {""}]
    \cup [sess : Sessions, kind : {"cont"}, src : 1..MaxExec, state : {"pending"},
          gen : {ContinuationGen(k) : k \in 0..1},
          flaw : {""} \cup IF "forge" \in Faults THEN ContinuationFlaws ELSE {}]

\* The ids a caller can send in an exact retry: any input's of any Session (prompts and continuations,
\* admitted or not) and a forged id that names no input (prompt number 0 is never admitted).
ForgedIds == [sess : Sessions, kind : {"prompt"}, src : {0}, state : {"pending"}, gen : {0}, flaw : {""}]
RetryIds == InputUniverse \cup ForgedIds
\* The content digest a retry carries: the admitted input's own, or another's.
Digests == {"admitted", "other"}
\* What a request event records of the content beyond its input (its `node`: a request has no writer): the
\* admitted content is the input's own and is not repeated ("").
RequestContent(d) == IF d = "admitted" THEN "" ELSE d

-----------------------------------------------------------------------------
\* Claims left at Init (LeftClaims; spec/README.md, decision 16): a server restarting on a shared database
\* finds the rows earlier processes left.  Each is what a crashed recovery worker leaves: its execution
\* (1.., one each, before any fresh one) taken over once (tries 1, owner the recovery worker, phase
\* recovering, no Step opened) and expired past the grace, its Session's prompt 1 taken.  The left
\* executions are numbered in some fixed order of their Sessions (TLC's CHOOSE: the order the generated cfg
\* first names them, sorted, as the twin numbers them); they are alike at Init, so which is the older
\* changes no state count.
LeftExec == CHOOSE f \in [LeftClaims -> 1..Cardinality(LeftClaims)] :
                \A s, t \in LeftClaims : f[s] = f[t] => s = t
LeftOwner == CHOOSE r \in Recoverers : TRUE
LeftClaim(s) == [exec |-> LeftExec[s], owner |-> LeftOwner, ttl |-> -Grace, phase |-> "recovering",
                 asst |-> 0, quar |-> FALSE, tries |-> 1, why |-> ""]
\* a prompt admitted at Init: pending, or taken by its Session's left execution
InitialPrompt(s, k) == [sess |-> s, kind |-> "prompt", src |-> k, gen |-> 0, flaw |-> "",
                        state |-> IF k = 1 /\ s \in LeftClaims THEN "ordinary" ELSE "pending"]

Init ==
    /\ claim = [s \in Sessions |-> IF s \in LeftClaims THEN LeftClaim(s) ELSE NoClaim]
    /\ nextExec = Cardinality(LeftClaims) + 1
    /\ log = <<>>
    /\ recovery = {}
    /\ inputs = IF Admission THEN {} ELSE {InitialPrompt(s, k) : s \in Sessions, k \in 1..Prompts}
    /\ run = [n \in Nodes |-> RunnerIdle]
    /\ fin = [n \in Nodes |-> FinIdle]
    /\ rec = [r \in Recoverers |-> RecIdle]
    /\ cancelled = {}
    /\ faults = {}
    /\ effects = {}
    /\ wakes = [w \in WakeRowIds |-> WakeIdle]
    /\ waker = [k \in WakerIds |-> {}]

-----------------------------------------------------------------------------
(* The runner *)

\* The acquisition's transaction (AcquireBy leaves the wake rows as they are; a tied wake removes its row).
AcquireClaim(n, i, ordinary) ==
    LET s == i.sess
        e == nextExec
    IN /\ run[n].pc = "idle"
       /\ i \in inputs
       /\ nextExec <= MaxExec
       /\ ClaimFree(s, ordinary)
       /\ claim' = [claim EXCEPT ![s] = [exec |-> e, owner |-> n, ttl |-> Lease, phase |-> "running",
                                         asst |-> 0, quar |-> FALSE, tries |-> 0, why |-> ""]]
       /\ nextExec' = e + 1
       /\ inputs' = (inputs \ {i}) \cup {[i EXCEPT !.state = IF ordinary THEN "ordinary" ELSE "recovery"]}
       /\ run' = [run EXCEPT ![n] = [pc |-> "acquired", sess |-> s, exec |-> e, mem |-> 0,
                                     active |-> FALSE, intr |-> FALSE, ordinal |-> 1, tool |-> 0]]
       /\ UNCHANGED <<log, recovery, fin, rec, cancelled, faults, effects, waker>>
AcquireBy(n, i, ordinary) == AcquireClaim(n, i, ordinary) /\ UNCHANGED wakes

\* Ordinary acquisition: insert-only; never overwrites a claim, live or expired.
Acquire(n, i) == Selectable(i) /\ InOrder(i) /\ AcquireBy(n, i, TRUE)

\* The promotion's transaction validates the continuation row (ContinuationValid): a valid one is acquired;
\* a flawed one (forged or corrupt: ForgeContinuation) is refused and set aside, quarantined, in the same
\* transaction, under the same conditions (an idle runner, the Session free, an execution id left), nothing else
\* changing (spec/README.md decision 28).  The wake rows are the caller's.
PromoteChecked(n, i) ==
    IF ContinuationValid(i) THEN AcquireClaim(n, i, FALSE)
    ELSE /\ run[n].pc = "idle" /\ i \in inputs /\ nextExec <= MaxExec /\ ClaimFree(i.sess, FALSE)
         /\ inputs' = (inputs \ {i}) \cup {[i EXCEPT !.state = "quarantined"]}
         /\ UNCHANGED <<claim, nextExec, log, recovery, run, fin, rec, cancelled, faults, effects, waker>>

\* Recovery promotes its own continuation exactly, once its row is validated.
\* With WakesTied a continuation is promoted only through its recovery wake (WakePromote), as the code does.
PromoteContinuation(n, i) ==
    /\ ~WakesTied
    /\ i.state = "pending" /\ i.kind = "cont"
    /\ PromotionOwned(i)
    /\ PromoteChecked(n, i)
    /\ UNCHANGED wakes

\* The renewal that precedes each Step's provider dispatch: exact Session, execution, owner, unexpired lease.
Renew(n) ==
    LET r == run[n]
        c == claim[r.sess]
    IN /\ RunnerAt(n, "acquired")
       /\ IF RenewAccepts(c, r, n)
          THEN /\ claim' = [claim EXCEPT ![r.sess].ttl = Lease]
               /\ run' = [run EXCEPT ![n].pc = "renewed"]
          ELSE /\ run' = [run EXCEPT ![n].pc = FailedRenewalPc]
               /\ UNCHANGED claim
       /\ UNCHANGED <<nextExec, log, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* The provider call begins: an external effect, no transaction.
Dispatch(n) ==
    /\ RunnerAt(n, "renewed")
    /\ run' = [run EXCEPT ![n].pc = "streaming"]
    /\ effects' = effects \cup {[sess |-> run[n].sess, exec |-> run[n].exec, owner |-> n, by |-> n,
                                 kind |-> "dispatch", step |-> run[n].ordinal, call |-> 0]}
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, faults, wakes, waker>>

\* The provider's stream has begun: a partial fragment is open in the publisher, whose memory still names
\* no assistant (`active` with `mem` 0; in memory only, nothing durable).  Only with Fragments: every
\* other configuration's stream opens with its Step.Started.  Not fair: the provider's choice.
OpenFragment(n) ==
    /\ Fragments > 0
    /\ RunnerAt(n, "streaming") /\ ~run[n].active
    /\ run' = [run EXCEPT ![n].active = TRUE]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* One transaction: append Step.Started for the current Step's assistant, project it, store its id in the
\* claim (the claim names the latest Step's assistant).  Listeners run after commit; publisher memory is
\* set only when the publish returns.
PublishStepStarted(n) ==
    LET r == run[n]
        a == StepAsst(r)
        early == MemoryAtCommit
    IN /\ RunnerAt(n, "streaming")
       /\ IF PublishOK(n)
          THEN /\ claim' = IF claim[r.sess].exec = r.exec
                           THEN [claim EXCEPT ![r.sess].asst = a] ELSE claim
               /\ log' = Append(log, [sess |-> r.sess, kind |-> "Started", asst |-> a, node |-> n,
                                      call |-> IF Hosted = 1 THEN HostedCall ELSE 0])
               /\ run' = [run EXCEPT ![n] = IF early
                                           THEN [r EXCEPT !.pc = "started", !.mem = a, !.active = TRUE]
                                           ELSE [r EXCEPT !.pc = "started"]]
          ELSE /\ run' = [run EXCEPT ![n] = IF early
                                           THEN [r EXCEPT !.pc = "stopped", !.mem = a, !.active = TRUE]
                                           ELSE [r EXCEPT !.pc = "stopped"]]
               /\ UNCHANGED <<claim, log>>
       /\ UNCHANGED <<nextExec, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* Step.Started's publish returns (after listeners): publisher memory names the assistant.  With a hosted
\* tool the runner reconciles it next (ReconcilesHosted).
StepStartedReturn(n) ==
    /\ RunnerAt(n, "started")
    /\ run' = [run EXCEPT ![n].pc = IF Hosted = 1 /\ ReconcilesHosted THEN "hosted" ELSE "stepping",
                          ![n].mem = StepAsst(run[n]), ![n].active = TRUE]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* One transaction: the runner's reconciliation of the Step's hosted call publishes its outcome (Tool.Success
\* with the hosted call's index; fenced).  The provider ran the tool inside the dispatch: no effect here.
HostedReconcile(n) ==
    LET r == run[n]
    IN /\ RunnerAt(n, "hosted")
       /\ IF PublishOK(n)
          THEN /\ log' = Append(log, [sess |-> r.sess, kind |-> "ToolSucceeded", asst |-> StepAsst(r), node |-> n, call |-> HostedCall])
               /\ run' = [run EXCEPT ![n].pc = "stepping"]
          ELSE /\ run' = [run EXCEPT ![n].pc = "stopped"]
               /\ UNCHANGED log
       /\ UNCHANGED <<claim, nextExec, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* The hosted call's publication fails (a fault: nothing durable changes); the call stays open and the
\* runner's error path follows (MarkUnknown).
HostedReconcileFails(n) ==
    /\ "publication" \in Faults
    /\ RunnerAt(n, "hosted")
    /\ run' = [run EXCEPT ![n].pc = "publish_failed"]
    /\ faults' = faults \cup {"publication"}
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, effects, wakes, waker>>

\* The fenced tool start, one transaction: under the exact, live, running claim it renews the lease (the
\* renewal that precedes a local tool) and records the call (ToolStarted for the Step's assistant).
ToolStart(n) ==
    LET r == run[n]
    IN /\ RunnerAt(n, "stepping") /\ r.tool < Tools
       /\ IF PublishOK(n)
          THEN /\ claim' = IF OrdinaryOK(r.sess, r.exec, n) THEN [claim EXCEPT ![r.sess].ttl = Lease] ELSE claim
               /\ log' = Append(log, [sess |-> r.sess, kind |-> "ToolStarted", asst |-> StepAsst(r), node |-> n, call |-> r.tool + 1])
               /\ run' = [run EXCEPT ![n].pc = "tool_started"]
          ELSE /\ run' = [run EXCEPT ![n].pc = "stopped"]
               /\ UNCHANGED <<claim, log>>
       /\ UNCHANGED <<nextExec, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* The physical tool runs: an external effect, no transaction.
ToolRun(n) ==
    /\ RunnerAt(n, "tool_started")
    /\ run' = [run EXCEPT ![n].pc = "tooling"]
    /\ effects' = effects \cup {[sess |-> run[n].sess, exec |-> run[n].exec, owner |-> n, by |-> n,
                                 kind |-> "tool", step |-> run[n].ordinal, call |-> run[n].tool + 1]}
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, faults, wakes, waker>>

\* One transaction: publish Tool.Success (fenced).  The runner's settlement flag (`tool`) changes only in
\* this step, once the publication committed; a failed fence stops the runner with the call unsettled.
PublishToolSuccess(n) ==
    LET r == run[n]
    IN /\ RunnerAt(n, "tooling")
       /\ IF PublishOK(n)
          THEN /\ log' = Append(log, [sess |-> r.sess, kind |-> "ToolSucceeded", asst |-> StepAsst(r), node |-> n, call |-> r.tool + 1])
               /\ run' = [run EXCEPT ![n].pc = "stepping", ![n].tool = r.tool + 1]
          ELSE /\ run' = [run EXCEPT ![n].pc = "stopped",
                                      ![n].tool = IF SettlementFlagEarly THEN r.tool + 1 ELSE r.tool]
               /\ UNCHANGED log
       /\ UNCHANGED <<claim, nextExec, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* The Tool.Success publication fails (a fault of the environment: its transaction does not commit, nothing
\* durable changes).  The call stays unsettled: the runner's flag is unchanged and its error path follows.
ToolSuccessFails(n) ==
    LET r == run[n]
    IN /\ "publication" \in Faults
       /\ RunnerAt(n, "tooling")
       /\ run' = [run EXCEPT ![n] = IF SettlementFlagEarly THEN [r EXCEPT !.pc = "stepping", !.tool = r.tool + 1]
                                     ELSE [r EXCEPT !.pc = "tool_failed"]]
       /\ faults' = faults \cup {"publication"}
       /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, effects, wakes, waker>>

\* The Step.Started publication fails (a fault of the environment: its transaction does not commit, nothing
\* durable changes).  The provider call was made, so it must never be replayed: the runner's error path
\* follows (MarkUnknown).  Publisher memory is as the commit's step leaves it (MemoryAtCommit).
StepStartedFails(n) ==
    LET r == run[n]
    IN /\ "publication" \in Faults
       /\ RunnerAt(n, "streaming")
       /\ run' = [run EXCEPT ![n] = IF MemoryAtCommit
                                   THEN [r EXCEPT !.pc = "publish_failed", !.mem = StepAsst(r), !.active = TRUE]
                                   ELSE [r EXCEPT !.pc = "publish_failed"]]
       /\ faults' = faults \cup {"publication"}
       /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, effects, wakes, waker>>

\* The Step.Ended publication fails (a fault: nothing durable changes) once the Step's tools settled.  The
\* Step's outcome was produced but is not durable: the runner's error path follows (MarkUnknown), and
\* recovery settles the started assistant (Step.Interrupted), never replaying the provider call.
StepEndedFails(n) ==
    /\ "publication" \in Faults
    /\ RunnerAt(n, "stepping") /\ run[n].tool >= Tools
    /\ run' = [run EXCEPT ![n].pc = "publish_failed"]
    /\ faults' = faults \cup {"publication"}
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, effects, wakes, waker>>

\* The runner's error path after a failed publication (Tool.Success, Step.Started or Step.Ended): one fenced
\* update, running -> unknown (the outcome of the call is uncertain; no ordinary update moves it back), and
\* the runner stops.  Recovery takes the claim after its lease expires and reconciles it as unknown work.
MarkUnknown(n) ==
    LET r == run[n]
    IN /\ (RunnerAt(n, "tool_failed") \/ RunnerAt(n, "publish_failed"))
       /\ IF RetriesFailedTool /\ r.pc = "tool_failed"
          THEN /\ run' = [run EXCEPT ![n].pc = "tool_started"]   \* runs the tool again, then publishes again
               /\ UNCHANGED claim
          ELSE /\ claim' = IF OrdinaryOK(r.sess, r.exec, n) THEN [claim EXCEPT ![r.sess].phase = "unknown"]
                           ELSE claim
               /\ run' = [run EXCEPT ![n].pc = "stopped"]
       /\ UNCHANGED <<nextExec, log, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* (publisher memory is not touched in the commit's step: listeners run first)
PublishTerminal(n, kind, pc) ==
    LET r == run[n]
    IN IF PublishOK(n)
       THEN /\ log' = Append(log, [sess |-> r.sess, kind |-> kind, asst |-> StepAsst(r), node |-> n, call |-> 0])
            /\ run' = [run EXCEPT ![n].pc = pc]
       ELSE /\ run' = [run EXCEPT ![n].pc = "stopped"]
            /\ UNCHANGED log

\* One transaction: append Step.Failed and complete the assistant.  Listeners follow.
PublishStepFailed(n) ==
    /\ RunnerAt(n, "stepping")
    /\ PublishTerminal(n, "Failed", "failed")
    /\ UNCHANGED <<claim, nextExec, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* Step.Failed's publish returns: publisher memory marks the assistant inactive.
StepFailedReturn(n) ==
    /\ RunnerAt(n, "failed")
    /\ run' = [run EXCEPT ![n].pc = "done", ![n].active = FALSE]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* One transaction: append Step.Ended and complete the Step's assistant.  Listeners follow (the listener
\* gate): publisher memory still names the assistant, active.  After the last Step it settles the
\* execution, and the runner's return from the publish is its release (ClearClaim); before it, the
\* return is StepEndedReturn.
PublishStepEnded(n) ==
    /\ RunnerAt(n, "stepping") /\ run[n].tool >= Tools   \* the Step's local tools settled first
    /\ PublishTerminal(n, "Ended", IF run[n].ordinal < MaxSteps THEN "ended" ELSE "done")
    /\ UNCHANGED <<claim, nextExec, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* Step.Ended's publish returns (after listeners): publisher memory marks the assistant inactive (it still
\* names it: the last assistant published), and the runner goes on to its next Step, whose renewal is due.
StepEndedReturn(n) ==
    /\ RunnerAt(n, "ended")
    /\ run' = [run EXCEPT ![n].pc = "acquired", ![n].active = FALSE, ![n].ordinal = run[n].ordinal + 1,
                          ![n].tool = 0]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* Remove the exact, settled claim.  After the last Step's Step.Ended its publish returns here (listeners
\* first); publisher memory is not updated but released with the runner.
ClearClaim(n) ==
    LET r == run[n]
    IN /\ RunnerAt(n, "done")
       /\ IF OrdinaryOK(r.sess, r.exec, n)
          THEN /\ claim' = [claim EXCEPT ![r.sess] = NoClaim]
               /\ run' = [run EXCEPT ![n] = RunnerIdle]
          ELSE /\ run' = [run EXCEPT ![n].pc = "stopped"]
               /\ UNCHANGED claim
       /\ UNCHANGED <<nextExec, log, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* The runner observes the interrupt at its next step and stops (a hung runner takes no next step).
RunnerStop(n) ==
    /\ run[n].intr /\ run[n].pc \notin {"idle", "stopped", "hung"}
    /\ run' = [run EXCEPT ![n].pc = "stopped"]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

\* A stopped runner with no finalizer of its own releases its memory.
RunnerExit(n) ==
    /\ run[n].pc = "stopped"
    /\ ~(fin[n].pc # "idle" /\ fin[n].exec = run[n].exec)
    /\ run' = [run EXCEPT ![n] = RunnerIdle]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, faults, effects, wakes, waker>>

-----------------------------------------------------------------------------
(* Inputs (Admission) *)

\* A caller admits Session s's next prompt: one transaction inserting the prompt input, its execution not
\* yet requested (held).  Bounded by Prompts.
Admit(s) ==
    /\ Admission
    /\ Cardinality(PromptsOf(s)) < Prompts
    /\ inputs' = inputs \cup {[sess |-> s, kind |-> "prompt", src |-> Cardinality(PromptsOf(s)) + 1,
                               state |-> "held", gen |-> 0, flaw |-> ""]}
    /\ UNCHANGED <<claim, nextExec, log, recovery, run, fin, rec, cancelled, faults, effects, wakes, waker>>

\* A caller naming Session s retries the admission of input id i (any id it can send) with content digest
\* d exactly: the identity check (RetryRefusal: the same Session's admitted prompt, never a continuation,
\* never recovery-owned, the admitted content; else refused with its reason, a stutter), then one
\* transaction appending its one PromptExecutionRequested and projecting it onto the input.
ExactRetry(s, i, d) ==
    /\ Admission
    /\ RetryRefusal(s, i, d) = ""
    /\ \E j \in inputs :
        /\ SameInput(j, i)
        /\ RetryAppends(j)
        /\ log' = Append(log, [sess |-> j.sess, kind |-> RequestKind, asst |-> RequestId(j),
                               node |-> RequestContent(d), call |-> 0])
        /\ inputs' = IF RequestArms(j) THEN (inputs \ {j}) \cup {[j EXCEPT !.state = "pending"]} ELSE inputs
    /\ UNCHANGED <<claim, nextExec, recovery, run, fin, rec, cancelled, faults, effects, wakes, waker>>

\* An explicit resume of Session s, on node n: one transaction durably requesting the Session's pending
\* ordinary execution (every held prompt now waits), before the drain it forces, which is a step of its
\* own (any idle node's Acquire).  (ResumeRequests false: the drain is forced with no durable request, and
\* node n's drain takes the oldest held prompt at once; on a busy Session it would find nothing to take.)
Resume(n, s) ==
    /\ Admission
    /\ \E j \in PromptsOf(s) : j.state = "held"
    /\ IF ResumeRequests
       THEN /\ inputs' = {IF j.sess = s /\ j.kind = "prompt" /\ j.state = "held"
                          THEN [j EXCEPT !.state = "pending"] ELSE j : j \in inputs}
            /\ UNCHANGED <<claim, nextExec, run>>
       ELSE AcquireBy(n, CHOOSE j \in PromptsOf(s) : j.state = "held" /\
                                     \A k \in PromptsOf(s) : k.state = "held" => j.src <= k.src, TRUE)
    /\ UNCHANGED <<log, recovery, fin, rec, cancelled, faults, effects, wakes, waker>>

\* At the start of a Step (before its renewal) runner n steers a pending input of its Session into its
\* running execution: one fenced transaction marking the input steered.  Steer selection excludes
\* recovery-owned inputs exactly as queue selection does; with DeliveryKinds it takes steer inputs only,
\* the oldest first.
Steer(n, i) ==
    LET r == run[n]
    IN /\ Steering
       /\ RunnerAt(n, "acquired")
       /\ i \in inputs /\ i.sess = r.sess /\ i.state = "pending"
       /\ SteerSelects(i)
       /\ SteerTakesKind(i) /\ InOrder(i)
       /\ OrdinaryOK(r.sess, r.exec, n)
       /\ inputs' = (inputs \ {i}) \cup {[i EXCEPT !.state = "steered"]}
       /\ UNCHANGED <<claim, nextExec, log, recovery, run, fin, rec, cancelled, faults, effects, wakes, waker>>

-----------------------------------------------------------------------------
(* Cancellation *)

\* An authenticated interrupt, handled on node n: phase running -> cancelling (fenced under the
\* claim's identity), the runner is interrupted, the finalizer and its supervised heartbeat start.
CancelRequest(n, s) ==
    LET c == claim[s]
        r == run[n]
    IN /\ fin[n].pc = "idle" /\ c.phase = "running" /\ c.ttl > 0
       /\ ProcessLocalRouting => c.owner = n
       /\ claim' = [claim EXCEPT ![s].phase = "cancelling"]
       /\ fin' = [fin EXCEPT ![n] = [pc |-> "settle", sess |-> s, exec |-> c.exec, owner |-> c.owner]]
       /\ run' = IF c.owner = n /\ r.exec = c.exec /\ r.pc \notin {"idle", "stopped"}
                 THEN [run EXCEPT ![n].intr = TRUE] ELSE run
       /\ UNCHANGED <<nextExec, log, recovery, inputs, rec, cancelled, faults, effects, wakes, waker>>

\* After the runner stopped, the finalizer's span begins with its own supervision check (a stale
\* finalizer stops, with no effect); then it reconciles tools: an external effect, before any
\* transaction, and a span of its own that can stall (the finalizer is in flight until it settles, is
\* stopped by its supervisor, or its node dies).
FinalizerReconcile(n) ==
    LET f == fin[n]
        r == run[n]
    IN /\ f.pc = "settle"
       /\ ~(r.exec = f.exec /\ r.pc \notin {"idle", "stopped"})
       /\ IF ~FinalizerSupervised(f)
          THEN /\ fin' = [fin EXCEPT ![n] = FinIdle]
               /\ UNCHANGED effects
          ELSE /\ effects' = effects \cup {[sess |-> f.sess, exec |-> f.exec, owner |-> f.owner, by |-> n,
                                             kind |-> "reconcile", step |-> 0, call |-> 0]}
               /\ fin' = [fin EXCEPT ![n].pc = "reconciling"]
       /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, rec, cancelled, faults, wakes, waker>>

\* The finalizer's settlement, one fenced transaction after its reconciliation: it reads the assistant
\* attached to the claimed execution from the database (never from publisher memory), records the failure
\* of its Step's tool call if that has no outcome (the durable failure reconciliation: the call is never
\* re-run), publishes at most one Step.Interrupted, and moves cancelling -> cancelled.  A fence that fails
\* (the claim expired, was taken over or is gone) stops the finalizer with nothing written.
FinalizerSettle(n) ==
    LET f == fin[n]
        r == run[n]
        c == claim[f.sess]
        a == c.asst
        mem == IF r.exec = f.exec THEN r.mem ELSE 0
        active == IF r.exec = f.exec THEN r.active ELSE FALSE
        settle == SettledAssistant(f, c, mem)   \* the assistant it settles
        interrupt == InterruptOwed(settle, a, mem, active)
        reconciled == WithCalls(log, f.sess, "ToolFailed", a, f.owner, ReconciledCalls(a))
        restarted == IF RestartCommits(a, mem)
                     THEN Append(reconciled, [sess |-> f.sess, kind |-> "Started", asst |-> a, node |-> f.owner, call |-> 0])
                     ELSE reconciled
    IN /\ f.pc = "reconciling"
       /\ IF ~(Fenced(f.sess, f.exec, f.owner) /\ c.phase = "cancelling")
          THEN /\ fin' = [fin EXCEPT ![n] = FinIdle]
               /\ UNCHANGED <<claim, log>>
          ELSE IF RestartRejected(a, mem) \/ FlushRaises(mem, active)
          THEN /\ UNCHANGED <<claim, log, fin>>   \* the restart is rejected (the flush raises); it retries, live
          ELSE /\ claim' = [claim EXCEPT ![f.sess].phase = "cancelled"]
               /\ log' = IF interrupt
                         THEN Append(restarted, [sess |-> f.sess, kind |-> "Interrupted", asst |-> settle,
                                                 node |-> f.owner, call |-> 0])
                         ELSE restarted
               /\ fin' = [fin EXCEPT ![n].pc = "clear"]
       /\ UNCHANGED <<nextExec, recovery, inputs, run, rec, cancelled, faults, effects, wakes, waker>>

\* Remove the exact cancelled claim.  Cancellation creates no recovery state (CancelRequeues: were it to,
\* it would insert a session_recovery row, the insert's conflict ignored, and a continuation, as conversion does).
FinalizerClear(n) ==
    LET f == fin[n]
        requeue == CancelRequeues
    IN /\ f.pc = "clear"
       /\ IF Fenced(f.sess, f.exec, f.owner) /\ claim[f.sess].phase = "cancelled"
          THEN /\ claim' = [claim EXCEPT ![f.sess] = NoClaim]
               /\ cancelled' = cancelled \cup {[exec |-> f.exec, sess |-> f.sess]}
               /\ fin' = [fin EXCEPT ![n] = FinIdle]
               /\ run' = IF run[n].exec = f.exec THEN [run EXCEPT ![n] = RunnerIdle] ELSE run
               /\ recovery' = IF requeue /\ ~RowForExec(f.exec)
                              THEN recovery \cup {[exec |-> f.exec, sess |-> f.sess]} ELSE recovery
               /\ inputs' = IF requeue
                            THEN inputs \cup {Continuation(f.sess, f.exec, ContinuationGen(0))}
                            ELSE inputs
          ELSE /\ fin' = [fin EXCEPT ![n] = FinIdle]
               /\ UNCHANGED <<claim, cancelled, run, recovery, inputs>>
       /\ UNCHANGED <<nextExec, log, rec, faults, effects, wakes, waker>>

-----------------------------------------------------------------------------
(* Lease keeping and time *)

\* A node (or recovery worker) renews the lease of a claim one of its actors is working on.
Heartbeat(k, s) ==
    LET c == claim[s]
    IN /\ c.phase # "none" /\ c.owner = k /\ c.ttl < Lease
       /\ HeartbeatAccepts(c)
       /\ IF k \in Nodes THEN ActiveOn(k, c.exec)
                         ELSE /\ rec[k].pc \in {"converting", "reconciled"} /\ rec[k].sess = s
                              /\ rec[k].exec = c.exec /\ rec[k].seen = "" /\ rec[k].why = ""
       /\ claim' = [claim EXCEPT ![s].ttl = RenewedTtl(c)]
       /\ UNCHANGED <<nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects, wakes, waker>>

RunBusy(n) == run[n].pc \notin {"idle", "stopped"}
RunStale(n) == RunBusy(n) /\ ~SupHolds(run[n].sess, run[n].exec, n)
FinStale(n) == fin[n].pc # "idle" /\ ~FinalizerSupervised(fin[n])
\* Ticks since the actor's claim expired (-ttl: the lease runs on down to -Grace); a claim that changed
\* identity or vanished has waited as long as the bound allows.
LagOf(s, e, o) == IF claim[s].exec = e /\ claim[s].owner = o THEN -claim[s].ttl ELSE SupervisionLag
Overdue(n) == \/ RunStale(n) /\ LagOf(run[n].sess, run[n].exec, n) + 1 >= SupervisionLag
              \/ FinStale(n) /\ LagOf(fin[n].sess, fin[n].exec, fin[n].owner) + 1 >= SupervisionLag

\* The node notices that its runner's or finalizer's claim is no longer its exact, live claim (expired,
\* taken over, gone) and stops that actor: one in-memory step of the node's supervisor.
Supervise(n) ==
    /\ RunStale(n) \/ FinStale(n)
    /\ run' = IF RunStale(n) THEN [run EXCEPT ![n].pc = "stopped"] ELSE run
    /\ fin' = IF FinStale(n) THEN [fin EXCEPT ![n] = FinIdle] ELSE fin
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, rec, cancelled, faults, effects, wakes, waker>>

\* The clock may advance: some lease still runs down (to -Grace, the takeover's grace), no renewal is
\* about to dispatch on an expiring lease (TimelyDispatch), and no node's supervision is overdue (the
\* lag bound: the clock waits for it).
ClockMayAdvance ==
    /\ \E s \in Sessions : claim[s].phase # "none" /\ claim[s].ttl > -Grace
    /\ TimelyDispatch => ~\E n \in Nodes : /\ run[n].pc \in {"renewed", "tool_started"}
                                          /\ claim[run[n].sess].ttl = 1
                                          /\ claim[run[n].sess].exec = run[n].exec
    /\ ~\E n \in Nodes : Overdue(n)

\* a lease that expires while an actor still works on it: the tick is a pause (a fault)
Pausing == \E s \in Sessions : claim[s].ttl = 1 /\ OwnerActive(s)

\* The clock advances one tick.  A tick while an actor still works on an expiring lease is a pause (a
\* fault: the configuration must allow it); a tick that expires no working actor's lease is calm.
Tick ==
    /\ ClockMayAdvance
    /\ Pausing => "pause" \in Faults
    /\ claim' = [s \in Sessions |-> IF claim[s].phase # "none" /\ claim[s].ttl > -Grace
                                    THEN [claim[s] EXCEPT !.ttl = @ - 1] ELSE claim[s]]
    /\ faults' = IF Pausing THEN faults \cup {"pause"} ELSE faults
    /\ UNCHANGED <<nextExec, log, recovery, inputs, run, fin, rec, cancelled, effects, wakes, waker>>

\* time passes: the calm tick is weakly fair; a pause is a fault, never forced
CalmTick == Tick /\ ~Pausing

-----------------------------------------------------------------------------
(* Recovery *)

\* The scan: a read of the bounded oldest-first window of expired, unquarantined claims (no write).
\* The worker remembers the row it will try: Session, execution and the former owner it saw.
RecoveryScan(r, s) ==
    /\ rec[r].pc = "idle"
    /\ s \in ScanWindow
    /\ rec' = [rec EXCEPT ![r] = [pc |-> "scanned", sess |-> s, exec |-> claim[s].exec, seen |-> claim[s].owner,
                                   why |-> ""]]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, cancelled, faults, effects, wakes, waker>>

\* Compare-and-swap on what the scan saw: exact Session, execution, former owner, expired lease and null
\* recovery error.  A worker that lost the race (another worker took the row, or it changed) changes
\* nothing durable and goes back to scanning.
RecoveryTakeover(r) ==
    LET w == rec[r]
        c == claim[w.sess]
        same == TakeoverMatches(c, w)
    IN /\ w.pc = "scanned"
       /\ IF ~same
          THEN /\ rec' = [rec EXCEPT ![r] = RecIdle]
               /\ UNCHANGED claim
          ELSE IF TakeoverQuarantines(c)
          THEN /\ claim' = [claim EXCEPT ![w.sess].quar = TRUE, ![w.sess].why = "invalid"]   \* in place: the node owns it
               /\ rec' = [rec EXCEPT ![r] = RecIdle]
          ELSE /\ claim' = [claim EXCEPT ![w.sess] = [c EXCEPT !.owner = r, !.ttl = Lease,
                                           !.phase = TakeoverPhase(c),
                                           !.tries = IF c.tries < MaxTries THEN c.tries + 1 ELSE MaxTries]]
               /\ rec' = [rec EXCEPT ![r] = [pc |-> "converting", sess |-> w.sess, exec |-> w.exec, seen |-> "",
                                             why |-> ""]]
       /\ UNCHANGED <<nextExec, log, recovery, inputs, run, fin, cancelled, faults, effects, wakes, waker>>

\* Recovery's reconciliation, between its takeover and its conversion: under its own exact, live claim
\* (the check) the worker reconciles the execution's hosted tools, an external effect, before any
\* transaction; a span that can stall.  A worker whose lease is gone begins no effect and leaves the lost
\* lease to its conversion (released for a retry, or quarantined).  Recovery's effects (this one and the
\* takeover) are not kept in the `effects` history, which would only multiply the states: the step
\* property reads them from the worker's move (RecoveryEffectsBegun).
RecoveryReconcile(r) ==
    /\ rec[r].pc = "converting"
    /\ rec' = [rec EXCEPT ![r].pc = "reconciled"]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, cancelled, faults, effects, wakes, waker>>

\* The durable writes of one conversion of w's (Session, execution) with continuation gen g, each keyed or
\* fenced: an open tool call of the claim's Step reconciled (ToolFailed, never re-run), Step.Interrupted for
\* the claim's open assistant and the claim's removal under the fence (exact Session, execution, worker,
\* live lease), the session_recovery row inserted unless one names the
\* execution (the insert's conflict), the continuation inserted unless its id exists.  RecoveryConvert
\* runs them under the fence; a retry after a lost acknowledgement (RecoveryReconvert) without it, and
\* replays them (`replay`) when its first attempt did not commit (RecoveryConvertFails).
ConversionCommit(r, w, g, replay) ==
    LET c == claim[w.sess]
        fenced == Fenced(w.sess, w.exec, r)
        a == c.asst
        k == Continuation(w.sess, w.exec, g)
        calls == IF fenced THEN ReconciledCalls(a) ELSE {}
        rerun == calls # {} /\ ConversionReruns
        converted == WithCalls(log, w.sess, IF rerun THEN "ToolSucceeded" ELSE "ToolFailed", a, r, calls)
    IN /\ log' = IF fenced /\ a # 0 /\ ~Completed(a) /\ ConversionSettles /\ (replay => ReplaySettles)
                 THEN Append(converted, [sess |-> w.sess, kind |-> "Interrupted", asst |-> a, node |-> r, call |-> 0])
                 ELSE converted
       /\ effects' = IF rerun
                     THEN effects \cup {[sess |-> w.sess, exec |-> w.exec, owner |-> r, by |-> r,
                                         kind |-> "tool", step |-> StepOf(a), call |-> i] : i \in calls}
                     ELSE effects
       /\ recovery' = IF RowForExec(w.exec) THEN recovery   \* the insert's conflict
                      ELSE recovery \cup {[exec |-> w.exec, sess |-> w.sess]}
       /\ inputs' = IF HasContinuation(k) THEN inputs ELSE inputs \cup {k}
       /\ claim' = IF fenced THEN [claim EXCEPT ![w.sess] = NoClaim] ELSE claim

\* One fenced transaction.  Cancellation-owned work (cancelling, cancelled: its finalizer crashed or
\* paused) is finished: Step.Interrupted once for an open assistant, the execution recorded cancelled,
\* the claim cleared, no recovery row and no continuation.  Recovering work is validated (no recovery row
\* for this execution anywhere), an open assistant settled with Step.Interrupted, exactly one
\* session_recovery row inserted, the continuation created and the claim cleared.  Malformed work goes to
\* quarantine.  A conversion that lost its lease (a pause) leaves the claim for a later takeover to
\* retry, until the claim's attempts reach MaxTries; then it is quarantined.  Unknown work (a failed
\* Tool.Success) is converted as recovering work is.  A tool call of the claim's Step whose outcome is not
\* recorded is reconciled first, never re-run: ToolFailed (its outcome is uncertain) in the same
\* transaction.
RecoveryConvert(r) ==
    LET w == rec[r]
        c == claim[w.sess]
        a == c.asst
        open == a # 0 /\ ~Completed(a)
        reconciled == WithCalls(log, w.sess, "ToolFailed", a, r, ReconciledCalls(a))
        conflict == ConversionConflict(w)
        mine == c.exec = w.exec /\ c.owner = r /\ ~c.quar
        retry == MayRetry(c)
        finishCancel == FinishesCancellation(c)
    IN /\ w.pc = "reconciled"
       /\ IF ~Fenced(w.sess, w.exec, r)
          THEN /\ rec' = IF mine /\ retry THEN [rec EXCEPT ![r] = RecIdle]   \* released: retried later
                         ELSE [rec EXCEPT ![r].pc = "quarantining", ![r].why = "exhausted"]
               /\ UNCHANGED <<claim, log, recovery, inputs, cancelled, effects>>
          ELSE IF finishCancel
          THEN /\ log' = IF open THEN Append(reconciled, [sess |-> w.sess, kind |-> "Interrupted", asst |-> a, node |-> r, call |-> 0])
                         ELSE reconciled
               /\ claim' = [claim EXCEPT ![w.sess] = NoClaim]
               /\ cancelled' = cancelled \cup {[exec |-> w.exec, sess |-> w.sess]}
               /\ rec' = [rec EXCEPT ![r] = RecIdle]
               /\ UNCHANGED <<recovery, inputs, effects>>
          ELSE IF c.phase \notin {"recovering", "unknown"} \/ conflict
          THEN /\ rec' = [rec EXCEPT ![r].pc = "quarantining", ![r].why = IF conflict THEN "malformed" ELSE "invalid"]
               /\ UNCHANGED <<claim, log, recovery, inputs, cancelled, effects>>
          ELSE /\ ConversionCommit(r, w, ContinuationGen(0), FALSE)
               /\ rec' = [rec EXCEPT ![r] = RecIdle]
               /\ UNCHANGED cancelled
       /\ UNCHANGED <<nextExec, run, fin, faults, wakes, waker>>

\* The conversion commits but its acknowledgement is lost (the database committed, the worker sees a
\* connection error): RecoveryConvert's conversion of validated recovering (or unknown) work, the same
\* durable effects, and a worker that, not knowing whether it committed, keeps only the ids it retries
\* with (Session, execution).
RecoveryConvertAckLost(r) ==
    LET w == rec[r]
        c == claim[w.sess]
    IN /\ "ack" \in Faults
       /\ w.pc = "reconciled"
       /\ Fenced(w.sess, w.exec, r)
       /\ ~FinishesCancellation(c) /\ c.phase \in {"recovering", "unknown"} /\ ~ConversionConflict(w)
       /\ ConversionCommit(r, w, ContinuationGen(0), FALSE)
       /\ rec' = [rec EXCEPT ![r] = [RecIdle EXCEPT !.pc = "reconverting", !.sess = w.sess, !.exec = w.exec]]
       /\ faults' = faults \cup {"ack"}
       /\ UNCHANGED <<nextExec, run, fin, cancelled, wakes, waker>>

\* The conversion does not commit (the connection is lost before its COMMIT reached the database):
\* nothing durable changes, and the worker, seeing the same connection error as after a lost
\* acknowledgement, cannot tell the two apart and keeps only (Session, execution): where the
\* acknowledgement can be lost, the commit can fail.  Its retry finds no committed work and replays.
RecoveryConvertFails(r) ==
    LET w == rec[r]
        c == claim[w.sess]
    IN /\ "ack" \in Faults
       /\ w.pc = "reconciled"
       /\ Fenced(w.sess, w.exec, r)
       /\ ~FinishesCancellation(c) /\ c.phase \in {"recovering", "unknown"} /\ ~ConversionConflict(w)
       /\ rec' = [rec EXCEPT ![r] = [RecIdle EXCEPT !.pc = "reconverting", !.sess = w.sess, !.exec = w.exec]]
       /\ faults' = faults \cup {"ack"}
       /\ UNCHANGED <<nextExec, run, fin, claim, log, recovery, inputs, cancelled, effects, wakes, waker>>

\* The retry: the same conversion with the same ids, one transaction.  It first looks for its own
\* committed work: the session_recovery row of its Session and execution, naming the continuation id it
\* derives (the model: that continuation exists; row and continuation commit together).  Found, it changes
\* nothing.  Otherwise it replays the conversion's writes, each keyed (the row by execution, the
\* continuation by its id, an insert whose conflict is ignored) or fenced by the claim (settle, clear),
\* so a claim no longer its own, gone or a newer execution's, is never touched.  It does not re-validate:
\* its own row would read as a conflict.
RecoveryReconvert(r) ==
    LET w == rec[r]
        own == HasRow(w.sess, w.exec) /\ HasContinuation(Continuation(w.sess, w.exec, ContinuationGen(1)))
    IN /\ w.pc = "reconverting"
       /\ IF own THEN UNCHANGED <<claim, log, recovery, inputs, effects>>
          ELSE ConversionCommit(r, w, ContinuationGen(1), TRUE)
       /\ rec' = [rec EXCEPT ![r] = RecIdle]
       /\ UNCHANGED <<nextExec, run, fin, cancelled, faults, wakes, waker>>

\* Mark the exact claim this worker owns as quarantined; it must change exactly one row.  Zero rows
\* means a confirmed successor (another worker) owns it now.
RecoveryQuarantine(r) ==
    LET w == rec[r]
        c == claim[w.sess]
    IN /\ w.pc = "quarantining"
       /\ claim' = IF QuarantineMatches(c, w, r)
                   THEN [claim EXCEPT ![w.sess].quar = TRUE, ![w.sess].why = w.why] ELSE claim
       /\ rec' = [rec EXCEPT ![r] = RecIdle]
       /\ UNCHANGED <<nextExec, log, recovery, inputs, run, fin, cancelled, faults, effects, wakes, waker>>

-----------------------------------------------------------------------------
(* Wake scans: the recovery-wake and ordinary-wake redrive (spec/README.md, decision 16) *)

\* a row with pending work and no reservation: fresh (never woken) or retried (woken before, not served)
FreshRow(w) == wakes[w].work /\ wakes[w].woken = "" /\ wakes[w].tries = 0
RetriedRow(w) == wakes[w].work /\ wakes[w].woken = "" /\ wakes[w].tries > 0
FreshRows == {w \in WakeRowIds : FreshRow(w)}
RetriedRows == {w \in WakeRowIds : RetriedRow(w)}
\* the k oldest rows of S (row number = creation order)
Oldest(S, k) == {w \in S : Cardinality({v \in S : v < w}) < k}
\* the wake counter's compare-and-set moves it to its successor, from its maximum back to 1
Rotate(t) == IF t >= MaxWakeTries THEN 1 ELSE t + 1
\* A new round of retries begins when every waiting retried row was woken in the current one.
NewRound == \A w \in RetriedRows : wakes[w].turned
\* the retried rows whose turn has not come in this round (all of them in a new round, or without rounds)
Unturned == IF ~RetryRounds \/ NewRound THEN RetriedRows ELSE {w \in RetriedRows : ~wakes[w].turned}
\* impl/wakes.py plan_batch: fresh rows first, up to the fresh share; then retried rows, those whose turn
\* has not come first (each kind oldest first); slots one kind leaves unused go to the other
RetrySlots == WakeBatch - Cardinality(Oldest(FreshRows, FreshSlots))
PlanRetried == Oldest(Unturned, RetrySlots)
               \cup Oldest(RetriedRows \ Unturned, RetrySlots - Cardinality(Oldest(Unturned, RetrySlots)))
PlanFresh == Oldest(FreshRows, WakeBatch - Cardinality(PlanRetried))

\* Fresh work arrives: a row for a Session with new pending work (a prompt, a continuation), counter 0.
WakeArrive(w) ==
    /\ ~WakesTied
    /\ ~wakes[w].work
    /\ wakes' = [wakes EXCEPT ![w] = [work |-> TRUE, tries |-> 0, woken |-> "", turned |-> FALSE]]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects, waker>>

\* One transaction: read the bounded window of unreserved rows, plan the batch, and reserve each planned
\* row by compare-and-set on the counter it read (the counter rotates) before waking it.  A reserved row
\* is turned (woken in this round); a new round first clears the waiting retried rows' turns.
WakeScan ==
    /\ ~WakesTied
    /\ PlanFresh \cup PlanRetried # {}
    /\ wakes' = [w \in WakeRowIds |->
                    IF w \in PlanFresh
                    THEN [wakes[w] EXCEPT !.tries = Rotate(@), !.woken = "fresh", !.turned = TRUE]
                    ELSE IF w \in PlanRetried
                    THEN [wakes[w] EXCEPT !.tries = Rotate(@), !.woken = "retry", !.turned = TRUE]
                    ELSE IF RetryRounds /\ NewRound /\ w \in RetriedRows THEN [wakes[w] EXCEPT !.turned = FALSE]
                    ELSE wakes[w]]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects, waker>>

\* With several wakers (Wakers > 1) the scan is the reviewed code's two atomic units.  WakeRead(k): one
\* transaction reads the bounded window and plans the batch as WakeScan does (a new round clears the
\* waiting turns, as the read does in the code); the plan, each row with the counter observed and its slot
\* kind, stays in waker k's memory.
Planned == {[row |-> w, tries |-> wakes[w].tries, slot |-> "fresh"] : w \in PlanFresh}
           \cup {[row |-> w, tries |-> wakes[w].tries, slot |-> "retry"] : w \in PlanRetried}
WakeRead(k) ==
    /\ waker[k] = {}
    /\ PlanFresh \cup PlanRetried # {}
    /\ waker' = [waker EXCEPT ![k] = Planned]
    /\ wakes' = [w \in WakeRowIds |->
                    IF RetryRounds /\ NewRound /\ w \in RetriedRows THEN [wakes[w] EXCEPT !.turned = FALSE]
                    ELSE wakes[w]]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects>>

\* WakeReserve(k): one transaction, each planned row's compare-and-set on the counter waker k observed
\* (ReserveMatches); the rows that match are reserved (counter rotated, turned), the others are lost to
\* this waker and wait for a later scan.  Its memory is emptied.
Won(k) == {p \in waker[k] : ReserveMatches(p)}
WakeReserve(k) ==
    /\ waker[k] # {}
    /\ wakes' = [w \in WakeRowIds |->
                    IF \E p \in Won(k) : p.row = w
                    THEN [wakes[w] EXCEPT !.tries = Rotate(@), !.turned = TRUE,
                                          !.woken = (CHOOSE p \in Won(k) : p.row = w).slot]
                    ELSE wakes[w]]
    /\ waker' = [waker EXCEPT ![k] = {}]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects>>

\* The woken redrive takes the work (an ordinary wake's acquisition, a recovery wake's promotion): the
\* row is removed in that transaction.
WakeServe(w) ==
    /\ ~WakesTied
    /\ wakes[w].woken # ""
    /\ wakes' = [wakes EXCEPT ![w] = WakeIdle]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects, waker>>

\* Tied wake rows (WakesTied, spec/README.md decision 16): row 1 is the Session's ordinary wake, row 2 its
\* recovery wake (the code's two WakeQueue kinds, each keyed by Session).  The wake syncer inserts a row
\* while its kind has work waiting and the row is absent (WakeSync, weakly fair: a continuation waits for
\* its recovery wake); the woken redrive takes the work and removes the row in the same transaction
\* (WakeAcquire, WakePromote); a woken row lapses only when its redrive finds nothing to take.
TiedSession == CHOOSE s \in Sessions : TRUE
WakeTakes(n, w, i) ==
    /\ run[n].pc = "idle" /\ i \in inputs /\ nextExec <= MaxExec /\ i.sess = TiedSession /\ i.state = "pending"
    /\ IF w = 1 THEN WakeSelects(i) /\ InOrder(i) /\ ClaimFree(i.sess, TRUE)
       ELSE i.kind = "cont" /\ PromotionOwned(i) /\ ClaimFree(i.sess, FALSE)
\* the syncer's read (InputStore.sessions_to_wake): the Session is unclaimed and work of the row's kind waits
WakeWork(w) == /\ claim[TiedSession].phase = "none"
               /\ \E i \in inputs : /\ i.sess = TiedSession /\ i.state = "pending"
                                   /\ IF w = 1 THEN OrdinarySelects(i) ELSE i.kind = "cont" /\ PromotionOwned(i)
WakeSync(w) ==
    /\ WakesTied
    /\ ~wakes[w].work
    /\ WakeWork(w)
    /\ wakes' = [wakes EXCEPT ![w] = [work |-> TRUE, tries |-> 0, woken |-> "", turned |-> FALSE]]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects, waker>>

\* Each kind's queue is scanned in a transaction of its own (WakeQueue.scan of one kind, as the reviewed code scans its
\* recovery wakes and its ordinary wakes apart): tied, row w is its kind's queue, so the scan of queue w
\* plans that row alone and reserves it by compare-and-set as WakeScan reserves (a batch of WakeBatch >= 2
\* with either fresh share takes a queue's one row, fresh or retried; a round of one row is always new).
WakeScanQueue(w) ==
    /\ WakesTied
    /\ wakes[w].work /\ wakes[w].woken = ""    \* the row waits unreserved: fresh or retried
    /\ wakes' = [wakes EXCEPT ![w].tries = Rotate(@), ![w].woken = IF FreshRow(w) THEN "fresh" ELSE "retry",
                              ![w].turned = TRUE]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects, waker>>

\* The woken ordinary wake acquires the input ordinary selection picks (WakeSelects), removing its row.
WakeAcquire(n, w, i) ==
    /\ WakesTied /\ w = 1 /\ wakes[w].woken # ""
    /\ i.sess = TiedSession /\ i.state = "pending" /\ WakeSelects(i) /\ InOrder(i)
    /\ AcquireClaim(n, i, TRUE)
    /\ wakes' = [wakes EXCEPT ![w] = WakeIdle]

\* The woken recovery wake promotes the Session's continuation exactly, once its row is validated (a flawed
\* one is refused and quarantined: PromoteChecked), removing its row.
WakePromote(n, w, i) ==
    /\ WakesTied /\ w = 2 /\ wakes[w].woken # ""
    /\ i.sess = TiedSession /\ i.state = "pending" /\ i.kind = "cont"
    /\ PromotionOwned(i)
    /\ PromoteChecked(n, i)
    /\ wakes' = [wakes EXCEPT ![w] = WakeIdle]

\* The woken redrive takes nothing (it lost the race, its node died): the reservation lapses and the row,
\* its counter advanced, waits as a retry.  Not fair: it may happen forever (retry saturation).
WakeLost(w) ==
    /\ wakes[w].woken # ""
    /\ WakesTied => ~\E n \in Nodes, i \in inputs : WakeTakes(n, w, i)
    /\ wakes' = [wakes EXCEPT ![w].woken = ""]
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, run, fin, rec, cancelled, faults, effects, waker>>

-----------------------------------------------------------------------------
(* Faults *)

\* A process dies; its in-memory actors are gone.
Crash(k) ==
    /\ "crash" \in Faults
    /\ IF k \in Nodes
       THEN /\ ~(run[k].pc = "idle" /\ fin[k].pc = "idle")
            /\ run' = [run EXCEPT ![k] = RunnerIdle]
            /\ fin' = [fin EXCEPT ![k] = FinIdle]
            /\ UNCHANGED rec
       ELSE /\ rec[k].pc # "idle"
            /\ rec' = [rec EXCEPT ![k] = RecIdle]
            /\ UNCHANGED <<run, fin>>
    /\ faults' = faults \cup {"crash"}
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, cancelled, effects, wakes, waker>>

\* A listener of a committed Step event never returns (Residual R2): the runner is at a listener gate
\* (Step.Started, Step.Failed or Step.Ended committed, its return not taken: after the last Step's
\* Step.Ended the return is ClearClaim, memory still active) and stays there for good ("hung"): its return
\* is disabled, and it observes no interrupt.  Its node still works on the claim (ActiveOn), so the
\* heartbeat keeps the lease live; only a crash, or its supervisor once the claim is no longer its exact,
\* live claim (a pause past the lease), ends it.
ListenerGate(n) == \/ RunnerAt(n, "started") \/ RunnerAt(n, "failed") \/ RunnerAt(n, "ended")
                   \/ RunnerAt(n, "done") /\ run[n].active
ListenerHangs(n) ==
    /\ "hang" \in Faults
    /\ ListenerGate(n)
    /\ run' = [run EXCEPT ![n].pc = "hung"]
    /\ faults' = faults \cup {"hang"}
    /\ UNCHANGED <<claim, nextExec, log, recovery, inputs, fin, rec, cancelled, effects, wakes, waker>>

\* An adversary writes a malformed session_recovery row: Session s, another Session's execution e.
CorruptRecoveryRow(s, e) ==
    /\ "corrupt" \in Faults /\ "corrupt" \notin faults
    /\ \E t \in Sessions : t # s /\ claim[t].exec = e
    /\ ~RowForExec(e)
    /\ recovery' = recovery \cup {[exec |-> e, sess |-> s]}
    /\ faults' = faults \cup {"corrupt"}
    /\ UNCHANGED <<claim, nextExec, log, inputs, run, fin, rec, cancelled, effects, wakes, waker>>

\* An adversary (or a corrupt write) replaces recovery's pending continuation of Session s's execution e with a
\* continuation-kind row of exactly one flaw f (its id, Session, delivery, prompt, assistant, newest assistant or
\* synthetic identity not as recovery made it): one-shot, as CorruptRecoveryRow (spec/README.md decision 28).
ForgeContinuation(s, e, f) ==
    /\ "forge" \in Faults /\ "forge" \notin faults
    /\ Continuation(s, e, 0) \in inputs
    /\ inputs' = (inputs \ {Continuation(s, e, 0)}) \cup {[Continuation(s, e, 0) EXCEPT !.flaw = f]}
    /\ faults' = faults \cup {"forge"}
    /\ UNCHANGED <<claim, nextExec, log, recovery, run, fin, rec, cancelled, effects, wakes, waker>>

-----------------------------------------------------------------------------
Next ==
    \/ \E n \in Nodes, i \in InputUniverse : Acquire(n, i)
    \/ \E n \in Nodes, i \in InputUniverse : PromoteContinuation(n, i)
    \/ \E n \in Nodes : Renew(n)
    \/ \E n \in Nodes : Dispatch(n)
    \/ \E n \in Nodes : OpenFragment(n)
    \/ \E n \in Nodes : PublishStepStarted(n)
    \/ \E n \in Nodes : StepStartedReturn(n)
    \/ \E n \in Nodes : HostedReconcile(n)
    \/ \E n \in Nodes : HostedReconcileFails(n)
    \/ \E n \in Nodes : ToolStart(n)
    \/ \E n \in Nodes : ToolRun(n)
    \/ \E n \in Nodes : PublishToolSuccess(n)
    \/ \E n \in Nodes : ToolSuccessFails(n)
    \/ \E n \in Nodes : StepStartedFails(n)
    \/ \E n \in Nodes : StepEndedFails(n)
    \/ \E n \in Nodes : MarkUnknown(n)
    \/ \E n \in Nodes : PublishStepFailed(n)
    \/ \E n \in Nodes : StepFailedReturn(n)
    \/ \E n \in Nodes : PublishStepEnded(n)
    \/ \E n \in Nodes : StepEndedReturn(n)
    \/ \E n \in Nodes : ListenerHangs(n)
    \/ \E n \in Nodes : ClearClaim(n)
    \/ \E n \in Nodes : RunnerStop(n)
    \/ \E n \in Nodes : RunnerExit(n)
    \/ \E n \in Nodes, s \in Sessions : CancelRequest(n, s)
    \/ \E n \in Nodes : FinalizerReconcile(n)
    \/ \E n \in Nodes : FinalizerSettle(n)
    \/ \E n \in Nodes : FinalizerClear(n)
    \/ \E k \in Nodes \cup Recoverers, s \in Sessions : Heartbeat(k, s)
    \/ \E n \in Nodes : Supervise(n)
    \/ Tick
    \/ \E r \in Recoverers, s \in Sessions : RecoveryScan(r, s)
    \/ \E r \in Recoverers : RecoveryTakeover(r)
    \/ \E r \in Recoverers : RecoveryReconcile(r)
    \/ \E r \in Recoverers : RecoveryConvert(r)
    \/ \E r \in Recoverers : RecoveryQuarantine(r)
    \/ \E r \in Recoverers : RecoveryConvertAckLost(r)
    \/ \E r \in Recoverers : RecoveryConvertFails(r)
    \/ \E r \in Recoverers : RecoveryReconvert(r)
    \/ \E k \in Nodes \cup Recoverers : Crash(k)
    \/ \E s \in Sessions, e \in 1..MaxExec : CorruptRecoveryRow(s, e)
    \/ \E s \in Sessions, e \in 1..MaxExec, f \in ContinuationFlaws : ForgeContinuation(s, e, f)
    \/ \E w \in WakeRowIds : WakeArrive(w)
    \/ \E one \in OneWaker : WakeScan
    \/ \E k \in WakerIds : WakeRead(k) \/ WakeReserve(k)
    \/ \E w \in WakeRowIds : WakeServe(w)
    \/ \E w \in WakeRowIds : WakeSync(w)
    \/ \E w \in WakeRowIds : WakeScanQueue(w)
    \/ \E n \in Nodes, w \in WakeRowIds, i \in InputUniverse : WakeAcquire(n, w, i) \/ WakePromote(n, w, i)
    \/ \E w \in WakeRowIds : WakeLost(w)
    \/ \E s \in Sessions : Admit(s)
    \/ \E s \in Sessions, i \in RetryIds, d \in Digests : ExactRetry(s, i, d)
    \/ \E n \in Nodes, s \in Sessions : Resume(n, s)
    \/ \E n \in Nodes, i \in InputUniverse : Steer(n, i)

\* Weak fairness of every protocol step and of the clock while no working actor's lease expires
\* (CalmTick); cancel requests, admissions, retries and resumes (a caller's choice), steers (the runner's
\* option), an open stream fragment (the provider's choice) and faults (Crash, a pausing Tick,
\* CorruptRecoveryRow, ForgeContinuation, RecoveryConvertAckLost, RecoveryConvertFails, ToolSuccessFails, HostedReconcileFails,
\* ListenerHangs, WakeArrive,
\* WakeLost) are
\* not fair.  A listener's return is weakly fair: it returns unless it hung (ListenerHangs disables it).
Fairness ==
    /\ \A n \in Nodes :
        /\ \A i \in InputUniverse : WF_vars(Acquire(n, i)) /\ WF_vars(PromoteContinuation(n, i))
        /\ WF_vars(Renew(n)) /\ WF_vars(Dispatch(n)) /\ WF_vars(PublishStepStarted(n))
        /\ WF_vars(StepStartedReturn(n)) /\ WF_vars(PublishStepFailed(n)) /\ WF_vars(StepFailedReturn(n))
        /\ WF_vars(PublishStepEnded(n)) /\ WF_vars(StepEndedReturn(n)) /\ WF_vars(ClearClaim(n))
        /\ WF_vars(RunnerStop(n))
        /\ WF_vars(RunnerExit(n)) /\ WF_vars(FinalizerReconcile(n)) /\ WF_vars(FinalizerSettle(n))
        /\ WF_vars(FinalizerClear(n))
        /\ WF_vars(Supervise(n))
        /\ WF_vars(ToolStart(n)) /\ WF_vars(ToolRun(n)) /\ WF_vars(PublishToolSuccess(n)) /\ WF_vars(MarkUnknown(n))
        /\ WF_vars(HostedReconcile(n))
    /\ WF_vars(CalmTick)
    /\ \A k \in Nodes \cup Recoverers, s \in Sessions : WF_vars(Heartbeat(k, s))
    /\ \A r \in Recoverers :
        /\ \A s \in Sessions : WF_vars(RecoveryScan(r, s))
        /\ WF_vars(RecoveryTakeover(r)) /\ WF_vars(RecoveryReconcile(r)) /\ WF_vars(RecoveryConvert(r))
        /\ WF_vars(RecoveryQuarantine(r))
        /\ WF_vars(RecoveryReconvert(r))
    \* (the waker's fairness only where wake rows exist: no fairness conjunct for TLC to carry elsewhere)
    /\ \A one \in IF WakeRows > 0 THEN OneWaker ELSE {} : WF_vars(WakeScan)
    /\ \A k \in WakerIds : WF_vars(WakeRead(k)) /\ WF_vars(WakeReserve(k))
    /\ \A w \in WakeRowIds : WF_vars(WakeServe(w)) /\ WF_vars(WakeSync(w)) /\ WF_vars(WakeScanQueue(w))
    /\ \A n \in Nodes, w \in WakeRowIds, i \in InputUniverse : WF_vars(WakeAcquire(n, w, i)) /\ WF_vars(WakePromote(n, w, i))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Invariants (names as in spec/names.py) *)

TypeOK ==
    /\ \A s \in Sessions :
        \/ claim[s] = NoClaim
        \/ /\ claim[s].exec \in 1..MaxExec /\ claim[s].owner \in Nodes \cup Recoverers
           /\ claim[s].ttl \in -Grace..Lease /\ claim[s].phase \in Phases \ {"none"}
           /\ claim[s].asst \in {0} \cup {Asst(claim[s].exec, k) : k \in 1..MaxSteps} /\ claim[s].quar \in BOOLEAN
           /\ claim[s].tries \in 0..MaxTries
           /\ claim[s].why \in {"", "malformed", "exhausted", "invalid"} /\ (claim[s].why = "") = ~claim[s].quar
    /\ \A n \in Nodes : run[n].pc \in RunnerPcs /\ run[n].sess \in Sessions \cup {""} /\ run[n].ordinal \in 0..MaxSteps
                        /\ run[n].tool \in 0..Tools
    /\ \A n \in Nodes : fin[n].pc \in {"idle", "settle", "reconciling", "clear"}
    /\ \A r \in Recoverers : rec[r].pc \in {"idle", "scanned", "converting", "reconciled", "quarantining",
                                            "reconverting"}
    /\ \A k \in DOMAIN log : log[k].kind \in StepKinds \cup {RequestKind} \cup ToolKinds /\ log[k].sess \in Sessions
                          /\ log[k].call \in IF log[k].kind \in ToolKinds THEN 1..(Tools + Hosted)
                                              ELSE IF log[k].kind = "Started" /\ Hosted = 1 THEN {0, HostedCall} ELSE {0}
    /\ \A i \in inputs : i.kind \in {"prompt", "cont"} /\ i.state \in InputStates /\ i.gen \in 0..1
                        /\ i.flaw \in {""} \cup ContinuationFlaws
    /\ nextExec \in 1..(MaxExec + 1)
    /\ faults \subseteq {"crash", "pause", "corrupt", "ack", "publication", "hang", "forge"}
    /\ \A x \in effects : x.kind \in {"dispatch", "reconcile", "tool"} /\ x.by \in Nodes \cup Recoverers
                        /\ x.step \in 0..MaxSteps /\ x.call \in IF x.kind = "tool" THEN 1..Tools ELSE {0}
    /\ \A w \in WakeRowIds : wakes[w].work \in BOOLEAN /\ wakes[w].tries \in 0..MaxWakeTries
                             /\ wakes[w].woken \in {"", "fresh", "retry"} /\ wakes[w].turned \in BOOLEAN
    /\ \A k \in WakerIds : \A p \in waker[k] : p.row \in WakeRowIds /\ p.tries \in 0..MaxWakeTries
                                             /\ p.slot \in {"fresh", "retry"}

AtMostOneStart ==
    \A a \in Assistants : Cardinality({k \in DOMAIN log : log[k].kind = "Started" /\ log[k].asst = a}) <= 1

AtMostOneTerminal ==
    \A a \in Assistants : Cardinality({k \in DOMAIN log : log[k].kind \in TerminalKinds /\ log[k].asst = a}) <= 1

InterruptOnlyAfterStart ==
    \A k \in DOMAIN log : log[k].kind = "Interrupted" =>
        \E j \in 1..(k - 1) : log[j].kind = "Started" /\ log[j].asst = log[k].asst

MemoryFollowsDurable == \A n \in Nodes : run[n].mem # 0 => Started(run[n].mem)

CancelLeavesNoRecovery ==
    \A x \in cancelled : /\ x \notin recovery
                         /\ ~\E i \in inputs : i.kind = "cont" /\ i.src = x.exec /\ i.sess = x.sess

RecoveryRowsIsolated ==
    \A i \in inputs : i.kind = "cont" => [exec |-> i.src, sess |-> i.sess] \in recovery

ContinuationsRecoveryOwned == \A i \in inputs : ~(i.kind = "cont" /\ i.state = "ordinary")

\* Only a continuation recovery made is promoted: none with a flaw (forged or corrupt) is ever taken.
PromotedContinuationsValid == \A i \in inputs : i.state = "recovery" => i.flaw = ""

\* At most one continuation per recovered (Session, execution): its id is the one derived from them.
OneContinuationPerRecovery ==
    \A i, j \in inputs : (i.kind = "cont" /\ j.kind = "cont" /\ i.sess = j.sess /\ i.src = j.src) => i.gen = j.gen
\* An exact retry adds exactly one PromptExecutionRequested: no prompt has two.
OneExecutionRequestPerPrompt == \A s \in Sessions, p \in 1..Prompts : Cardinality(RequestsOf(s, p)) <= 1
\* Every PromptExecutionRequested is a public request's of an admitted prompt of its Session, with the
\* admitted content: never a continuation (internal, recovery's alone), never another content.
RequestsNameAdmittedPrompts ==
    \A k \in DOMAIN log : log[k].kind = RequestKind =>
        /\ log[k].asst > 0 /\ log[k].node = ""
        /\ \E i \in inputs : i.sess = log[k].sess /\ i.kind = "prompt" /\ i.src = log[k].asst

\* Steer selection never takes a recovery-owned input: no continuation is steered.
SteerExcludesRecoveryOwned == \A i \in inputs : ~(i.kind = "cont" /\ i.state = "steered")

\* With delivery kinds, a steer takes only an input its caller admitted with steer delivery.
SteerTakesSteerInputs == DeliveryKinds => \A i \in inputs : i.state = "steered" => Delivery(i) = "steer"

\* The claim scan's window (R003-MUST-FIX-3, R003-PASS-scanner-bounds): it holds the oldest eligible claims
\* of each kind, as many as the bound allows; with a bound of two or more, fresh claims (never taken over)
\* keep the fresh share whenever they wait, and retried ones the rest, so N poison claims retried again and
\* again never fill a window of N ahead of claim N+1.  Stated from the constants, not from the hooks.
ScanWindowShared ==
    LET E == {s \in Sessions : Eligible(s)}
        F == {s \in E : claim[s].tries = 0}
        W == ScanWindow
        AtMost(a, b) == IF a < b THEN a ELSE b
    IN /\ W \subseteq E
       /\ Cardinality(W) = AtMost(ScanBound, Cardinality(E))
       /\ \A s \in W, t \in E : ((t \in F) = (s \in F) /\ claim[t].exec < claim[s].exec) => t \in W
       /\ ScanBound >= 2 => /\ Cardinality(W \cap F) >= AtMost(FreshShare, Cardinality(F))
                           /\ Cardinality(W \ F) >= AtMost(ScanBound - FreshShare, Cardinality(E \ F))

\* A quarantine is justified by the reason recorded with it: the work is malformed (a session_recovery row
\* of another Session already names its execution: forged or corrupt), or its attempts are exhausted (the
\* last conversion the bound allowed lost its lease).
Justified(s) == \/ claim[s].why = "malformed" /\ ForeignRow(s, claim[s].exec)
                \/ claim[s].why = "exhausted" /\ claim[s].tries >= MaxTries

\* Quarantine only of corrupt or forged work, or of work whose bounded retries are used up; never of
\* healthy work that a crash or pause interrupted (cancellation-owned work is finished, not quarantined).
QuarantineOnlyMalformed == \A s \in Sessions : claim[s].quar => Justified(s)

(* Action invariants: checked on every step as [][P]_vars. *)

AcquireNeverOverwritesStep ==
    \A s \in Sessions : (claim[s].phase # "none" /\ claim'[s].phase # "none") => claim'[s].exec = claim[s].exec

\* the phase moves a claim of one execution may make: forward only, never back
PhaseSteps == {<<p, p>> : p \in Phases}
              \cup {<<"none", "running">>, <<"running", "cancelling">>, <<"cancelling", "cancelled">>,
                    <<"running", "recovering">>, <<"running", "unknown">>}

AllowedClaimChange(c, d) ==
    \/ c.phase = "none" \/ d = c
    \/ c.ttl > 0 /\ d = NoClaim /\ (c.phase # "cancelling" \/ c.owner \in Recoverers) \* the owner's removal
    \/ /\ c.ttl > 0 /\ d.exec = c.exec /\ d.owner = c.owner /\ d.quar = c.quar     \* the owner, fenced
       /\ <<c.phase, d.phase>> \in PhaseSteps
       /\ (d.asst = c.asst \/ c.asst = 0 \/ (d.asst = c.asst + 1 /\ ExecOf(d.asst) = c.exec))  \* kept, or the next Step's
    \/ d = [c EXCEPT !.ttl = c.ttl - 1]                                           \* the clock
    \/ /\ c.ttl <= -Grace /\ ~c.quar /\ d.exec = c.exec /\ d.owner \in Recoverers \* recovery takeover
       /\ d.ttl = Lease /\ d.asst = c.asst /\ ~d.quar
       /\ d.phase = IF c.phase = "running" THEN "recovering" ELSE c.phase
    \/ d = [c EXCEPT !.quar = TRUE, !.why = d.why] /\ c.owner \in Recoverers /\ c.phase # "running"  \* quarantine

FencedMutationStep ==
    /\ \A s \in Sessions : AllowedClaimChange(claim[s], claim'[s])
    /\ \A k \in (Len(log) + 1)..Len(log') :
        LET ev == log'[k]
        IN ev.kind \in StepKinds =>
              claim[ev.sess].exec = ExecOf(ev.asst) /\ claim[ev.sess].owner = ev.node /\ claim[ev.sess].ttl > 0

\* node m's provider call on Session s is in flight: dispatched (recorded) and not yet returned or stopped
\* (a hung listener's Step counts as in flight: its runner never returned from it)
CallInFlight(m, s) == /\ run[m].sess = s
                      /\ run[m].pc \in {"streaming", "started", "stepping", "tool_started", "tooling", "tool_failed",
                                       "publish_failed", "hung", "hosted"}
                      /\ [sess |-> s, exec |-> run[m].exec, owner |-> m, by |-> m, kind |-> "dispatch",
                          step |-> run[m].ordinal, call |-> 0] \in effects

\* node m's finalizer on Session s works under a claim identity other than (e, o) and is in flight: from
\* the interrupt until it has settled and cleared, been stopped by its supervisor, or died with its node
OlderFinalizer(m, s, e, o) == fin[m].pc # "idle" /\ fin[m].sess = s /\ ~(fin[m].exec = e /\ fin[m].owner = o)

\* Every effect that begins (a new element of the history: a provider dispatch, a tool start, a
\* reconciliation, a recovery takeover) is caused under the claim identity the Session still carries (no
\* successor has taken it; a takeover is the successor's taking), while no other node's provider call on
\* it is in flight and no older owner's finalizer on it is (R003-MUST-FIX-2).
\* the effects recovery workers begin in this step: a takeover (scanned -> converting) and a
\* reconciliation (converting -> reconciled under the worker's own exact, live claim)
RecoveryEffectsBegun ==
    {[sess |-> rec[r].sess, exec |-> rec[r].exec, owner |-> r, by |-> r, step |-> 0, call |-> 0,
      kind |-> IF rec[r].pc = "scanned" THEN "takeover" ELSE "reconcile"] :
        r \in {q \in Recoverers : \/ rec[q].pc = "scanned" /\ rec'[q].pc = "converting"
                                  \/ rec[q].pc = "converting" /\ rec'[q].pc = "reconciled"
                                     /\ Fenced(rec[q].sess, rec[q].exec, q)}}

NoOverlappingEffectsStep ==
    \A x \in (effects' \ effects) \cup RecoveryEffectsBegun :
        /\ \/ x.kind = "takeover"
           \/ claim[x.sess].exec = x.exec /\ claim[x.sess].owner = x.owner
        /\ ~\E m \in Nodes \ {x.by} : CallInFlight(m, x.sess)
        /\ ~\E m \in Nodes : OlderFinalizer(m, x.sess, x.exec, x.owner)

\* A worker leaving its retry (the retry itself, or a crash) changes no durable variable when its first
\* attempt committed (its Session's session_recovery row for the execution exists: after a lost
\* acknowledgement), since the retry finds it; after a failed commit (RecoveryConvertFails) it replays.
ConversionRetryChangesNothingStep ==
    \A r \in Recoverers : (rec[r].pc = "reconverting" /\ rec'[r] # rec[r] /\ HasRow(rec[r].sess, rec[r].exec)) =>
        UNCHANGED <<claim, log, recovery, inputs, cancelled>>

NoPhysicalReplayStep ==
    \A n \in Nodes : (\/ run[n].pc = "renewed" /\ run'[n].pc = "streaming"
                      \/ run[n].pc = "tool_started" /\ run'[n].pc = "tooling") =>
        LET c == claim[run[n].sess] IN c.exec = run[n].exec /\ c.owner = n /\ c.ttl > 0

\* No physical tool call starts twice: a tool effect that begins is the first of its call (Session,
\* execution, Step, call index), and a runner starts its physical tool only for a call none has run yet (its own
\* second run would add no new element to the history).
ToolRan(s, e, k, i) == \E y \in effects : y.kind = "tool" /\ y.sess = s /\ y.exec = e /\ y.step = k /\ y.call = i
ToolStartsOnceStep ==
    /\ \A x \in effects' \ effects : x.kind = "tool" => ~ToolRan(x.sess, x.exec, x.step, x.call)
    /\ \A n \in Nodes : (run[n].pc = "tool_started" /\ run'[n].pc = "tooling") =>
          ~ToolRan(run[n].sess, run[n].exec, run[n].ordinal, run[n].tool + 1)

\* Unknown work is reconciled, never re-executed: a tool begins only for running work (never for unknown,
\* recovering or cancellation-owned work), and a claim is removed only with every tool call of its execution
\* given a durable outcome by the end of the step.
UnknownNeverReexecutedStep ==
    /\ \A x \in effects' \ effects : x.kind = "tool" => claim[x.sess].phase = "running"
    /\ \A s \in Sessions : (claim[s].phase # "none" /\ claim'[s].phase = "none") =>
          \A a \in Assistants, i \in CallIndices : ExecOf(a) = claim[s].exec => ~(OpenCall(a, i))'

PhaseMonotonicStep ==
    \A s \in Sessions : LET c == claim[s]
                            d == claim'[s]
                        IN (d.phase # "none" /\ (c.phase = "none" \/ d.exec = c.exec))
                              => <<c.phase, d.phase>> \in PhaseSteps

\* settled: the claim's assistant has its terminal event once the step is done (or none was started)
SettledAfter(a) == \E k \in DOMAIN log' : log'[k].kind \in TerminalKinds /\ log'[k].asst = a

\* (and a cancellation settles, cancelling -> cancelled, only with the latest Step's assistant settled)
ClearOnlySettledStep ==
    \A s \in Sessions : LET c == claim[s]
                        IN /\ (c.phase = "cancelling" /\ claim'[s].phase = "cancelled") =>
                                 (claim'[s].asst = 0 \/ SettledAfter(claim'[s].asst))
                           /\ (c.phase # "none" /\ claim'[s].phase = "none") =>
                              \/ c.phase = "cancelled"
                              \/ c.phase = "cancelling" /\ c.owner \in Recoverers
                                 /\ (c.asst = 0 \/ SettledAfter(c.asst))
                              \/ c.phase = "running" /\ c.asst # 0 /\ SettledAfter(c.asst)
                              \/ c.phase \in {"recovering", "unknown"} /\ (c.asst = 0 \/ SettledAfter(c.asst))

QuarantineOnlyByRecoveryStep ==
    \A s \in Sessions : LET c == claim[s]
                        IN (~c.quar /\ claim'[s].quar) =>
                              /\ c.owner \in Recoverers /\ c.phase # "running"
                              /\ rec[c.owner].pc = "quarantining"
                              /\ rec[c.owner].sess = s /\ rec[c.owner].exec = c.exec
                              /\ claim'[s] = [c EXCEPT !.quar = TRUE, !.why = claim'[s].why]

\* A wake scan that had fresh and retried rows waiting reserves at least one of each: fresh work keeps
\* capacity while retries saturate, and one retry advances while fresh work floods.
\* With several wakers it is the plan a read keeps (a reservation may lose rows to another waker).
WakePlanSharedStep ==
    /\ Wakers <= 1 =>
        LET woke == {w \in WakeRowIds : wakes[w].woken = "" /\ wakes'[w].woken # ""}
            \* the rows the scan read: every row, or, tied, its kind's queue (the woken row alone)
            read == IF WakesTied THEN woke ELSE WakeRowIds
        IN woke # {} =>
            /\ FreshRows \cap read # {} => \E w \in woke : wakes'[w].woken = "fresh"
            /\ RetriedRows \cap read # {} => \E w \in woke : wakes'[w].woken = "retry"
    /\ \A k \in WakerIds : (waker[k] = {} /\ waker'[k] # {}) =>
            /\ FreshRows # {} => \E p \in waker'[k] : p.slot = "fresh"
            /\ RetriedRows # {} => \E p \in waker'[k] : p.slot = "retry"
\* A waker's reservation takes only rows no waker holds, each at the counter this waker observed when it
\* read: a row another waker reserved, or whose counter moved since the read, is never taken (issue 31
\* item 3).  Stated from the state, not from the hook ReserveMatches.  And whoever scans: only a row with
\* work is reserved, and a reserved row keeps its reservation until it lapses or is served (no scan
\* reserves it again).
ReservationsExclusiveStep ==
    /\ \A w \in WakeRowIds : /\ wakes'[w].woken # "" => wakes'[w].work
                             /\ (wakes[w].woken # "" /\ wakes'[w].woken # "") => wakes'[w] = wakes[w]
    /\ \A k \in WakerIds :
        /\ (waker[k] # {} /\ waker'[k] = {}) =>
            \A w \in WakeRowIds : (wakes'[w] # wakes[w] /\ wakes'[w].woken # "") =>
                /\ wakes[w].woken = ""
                /\ \E p \in waker[k] : p.row = w /\ p.tries = wakes[w].tries
        \* the plan a reservation uses is the one its read kept: a memory goes from none to a plan, or back
        /\ waker'[k] # waker[k] => waker[k] = {} \/ waker'[k] = {}
\* With delivery kinds, a prompt ordinary selection takes in the step (the drain's Acquire, a steer) had no
\* prompt of its Session waiting (pending) ahead of it: no queue input is taken while a steer input waits,
\* and none while an older input of its kind waits.  Stated from the constants, not from the hooks.
DeliveryOrderStep ==
    DeliveryKinds =>
        \A i \in inputs' : (i.kind = "prompt" /\ i.state \in {"ordinary", "steered"} /\ i \notin inputs)
            => ~\E j \in inputs : /\ j.sess = i.sess /\ j.kind = "prompt" /\ j.state = "pending" /\ j.src # i.src
                                /\ \/ Delivery(j) = "steer" /\ Delivery(i) = "queue"
                                   \/ Delivery(j) = Delivery(i) /\ j.src < i.src
\* Ordinary selection (the drain's Acquire, a steer) takes a prompt only once its execution was durably
\* requested (pending): an explicit resume requests before it drains, and a held prompt is never taken.
ResumeRequestedBeforeDrainStep ==
    \A j \in inputs' : (j.kind = "prompt" /\ j.state \in {"ordinary", "steered"} /\ j \notin inputs)
                        => [j EXCEPT !.state = "pending"] \in inputs

AcquireNeverOverwrites == [][AcquireNeverOverwritesStep]_vars
PhaseMonotonic == [][PhaseMonotonicStep]_vars
ClearOnlySettled == [][ClearOnlySettledStep]_vars
QuarantineOnlyByRecovery == [][QuarantineOnlyByRecoveryStep]_vars
FencedMutation == [][FencedMutationStep]_vars
NoOverlappingEffects == [][NoOverlappingEffectsStep]_vars
NoPhysicalReplay == [][NoPhysicalReplayStep]_vars
ConversionRetryChangesNothing == [][ConversionRetryChangesNothingStep]_vars
WakePlanShared == [][WakePlanSharedStep]_vars
ReservationsExclusive == [][ReservationsExclusiveStep]_vars
ResumeRequestedBeforeDrain == [][ResumeRequestedBeforeDrainStep]_vars
DeliveryOrder == [][DeliveryOrderStep]_vars
ToolStartsOnce == [][ToolStartsOnceStep]_vars
UnknownNeverReexecuted == [][UnknownNeverReexecutedStep]_vars

(* Liveness: under finitely many faults ("eventually no more faults", not "no fault ever") *)

FaultStep == \/ \E k \in Nodes \cup Recoverers : Crash(k)
             \/ Tick /\ Pausing
             \/ \E s \in Sessions, e \in 1..MaxExec : CorruptRecoveryRow(s, e)
             \/ \E s \in Sessions, e \in 1..MaxExec, f \in ContinuationFlaws : ForgeContinuation(s, e, f)
             \/ \E r \in Recoverers : RecoveryConvertAckLost(r)
             \/ \E r \in Recoverers : RecoveryConvertFails(r)
             \/ \E n \in Nodes : ToolSuccessFails(n)
             \/ \E n \in Nodes : StepStartedFails(n)
             \/ \E n \in Nodes : StepEndedFails(n)
             \/ \E n \in Nodes : HostedReconcileFails(n)
             \/ \E n \in Nodes : ListenerHangs(n)
FaultsCease == <>[][~FaultStep]_vars
CrashesCease == <>[][~(\E k \in Nodes \cup Recoverers : Crash(k))]_vars

\* deliberately rejected, the rejection recorded: the Session's claim is quarantined as malformed (a
\* session_recovery row of another Session already names its execution: forged or corrupt work), the one quarantine the protocol
\* promises as an outcome.  Not a goal: `exhausted` (Residual R1, a premise below) and `invalid` (healthy
\* work a defect quarantines; never Justified).
Rejected(s) == claim[s].quar /\ claim[s].why = "malformed" /\ ForeignRow(s, claim[s].exec)
\* Residual R1, lost-lease exhaustion (docs/protocol.md section 5): a claim taken over MaxTries times, whose
\* last conversion lost its lease, is quarantined `exhausted` for good (the bound that keeps a poison claim
\* from starving the scan, R003-MUST-FIX-3).  Its cost is the Session's availability, so the liveness
\* properties take its absence as a premise, per Session, and check everything else.
ExhaustedByPauses(s) == claim[s].quar /\ claim[s].why = "exhausted" /\ claim[s].tries >= MaxTries
NotExhaustedByPauses(s) == [](~ExhaustedByPauses(s))
\* Residual R2, a hung listener (docs/protocol.md section 5): a runner whose listener never returns keeps
\* its Session's claim live through its node's heartbeat, so a cancellation cannot finish while the process
\* lives.  Unlike R1's quarantine a hang ends (a crash, or a pause past the lease and the supervisor), so it
\* is not a premise `[](~X) => (P ~> Q)` (one transient hang would excuse the whole behaviour) but widens
\* the goal, P ~> (Q \/ ListenerHung(s)), the twin's form: only a behaviour that stays hung is excused
\* (spec/README.md, decision 24).
ListenerHung(s) == \E n \in Nodes : run[n].pc = "hung" /\ run[n].sess = s
\* the model mints no more executions: an input still pending can never be taken (the bound, not the protocol)
Exhausted == nextExec > MaxExec

SessionsEventuallyAvailable ==
    FaultsCease => \A s \in Sessions :
        NotExhaustedByPauses(s) =>
            ((claim[s].phase # "none") ~> (claim[s].phase = "none" \/ Rejected(s) \/ ListenerHung(s)))

\* pauses may go on forever here: a claim whose conversion keeps losing its lease must not starve the scan
ExpiredClaimsEventuallyHandled ==
    CrashesCease => \A s \in Sessions : Eligible(s) ~> ~Eligible(s)

Waiting(s, kind) == \E i \in inputs : i.sess = s /\ i.kind = kind /\ i.state = "pending"

\* While prompts of a Session wait (requested: with Admission, a held prompt does not wait until an exact
\* retry or a resume requests it), eventually every requested prompt has been taken (by the drain or a
\* steer) and the Session is at rest (its claim cleared: after a terminal Step event, a cancellation, or a conversion into a
\* continuation, which the next property follows), or the Session is rejected (malformed), unless Residual
\* R1 quarantined it (or, R2, its listener hangs).  Prompts still waiting when the model's execution ids run out are the bound's, not the
\* protocol's: Exhausted is a goal (a configuration with MaxExec 3 checks a second generation: `generations`).
PendingInputsEventuallyServed ==
    FaultsCease => \A s \in Sessions : NotExhaustedByPauses(s) =>
        (Waiting(s, "prompt") ~> ((~Waiting(s, "prompt") /\ claim[s].phase = "none") \/ Exhausted \/ Rejected(s)
                                  \/ ListenerHung(s)))

\* While continuations of a Session wait, eventually none does: each one recovery created is promoted
\* (or the ids run out, or the Session is rejected as malformed), unless Residual R1 quarantined it
\* (or, R2, its listener hangs).
ContinuationsEventuallyPromoted ==
    FaultsCease => \A s \in Sessions :
        NotExhaustedByPauses(s) =>
            (Waiting(s, "cont") ~> (~Waiting(s, "cont") \/ Exhausted \/ Rejected(s) \/ ListenerHung(s)))

\* Every fresh row is eventually woken, however often woken rows are lost (retry saturation), once fresh
\* arrivals cease (were they to go on, a younger fresh row could wait behind older ones forever: that is
\* an ordering among fresh rows, not this property).
ArrivalsCease == <>[][~(\E w \in WakeRowIds : WakeArrive(w))]_vars
FreshWorkKeepsCapacity == ArrivalsCease => \A w \in WakeRowIds : FreshRow(w) ~> ~FreshRow(w)

\* Every retried row is eventually woken, however much fresh work keeps arriving and however often woken
\* rows (a poison row's every time) are lost: per row, so one poison row woken for ever while a younger
\* retried row never is fails it (issue 31 item 3).
RetryAdvances == \A w \in WakeRowIds : RetriedRow(w) ~> (wakes[w].woken = "retry")

=============================================================================

-------------------------- MODULE SessionLifecycle --------------------------
(***************************************************************************)
(* The session protocol as a reviewer should read it first: what may       *)
(* happen to a Session, with no leases' ticks, no runner program counters, *)
(* no publisher memory and no recovery scan.                               *)
(*                                                                         *)
(* Per Session: its current execution, whose owner is the one actor that   *)
(* may cause effects while its lease is live (the effect-holder); each     *)
(* assistant's status, none -> open -> exactly one terminal (an execution  *)
(* has one assistant per Step, Step k + 1's opened only after Step k's     *)
(* Step.Ended); each execution's outcome; the inputs.  Every action is     *)
(* atomic.                                                                 *)
(*                                                                         *)
(*   Start      an input is taken: a fresh execution, owned by a node      *)
(*   Steer      the holder's running execution takes a pending input       *)
(*   Effect     the holder begins an external effect, or opens its         *)
(*              assistant (Step.Started)                                   *)
(*   Terminate  the holder closes its assistant (Step.Failed/Ended), or    *)
(*              ends its settled execution                                 *)
(*   Cancel     cancellation is requested, settles (Step.Interrupted for   *)
(*              an open assistant), and ends the execution                 *)
(*   Uncertain  the holder's running execution's outcome becomes unknown   *)
(*              (a local tool's Tool.Success could not be published)       *)
(*   Lapse      leases lapse: their owners lose the right to act           *)
(*   Recover    a recovery worker takes over a lapsed execution, or        *)
(*              converts it (Step.Interrupted, a continuation input)       *)
(*   Quarantine the worker owning it sets a bad execution aside            *)
(*   EffectEnds an effect in flight ends (its call returns, its actor      *)
(*              stops or dies); any step may also end effects              *)
(*   Stutter    nothing abstract changes                                   *)
(*                                                                         *)
(* SessionExecution (the code's atomic units) refines this module: the     *)
(* refinement mapping is in SessionExecutionRefinesLifecycle.tla and TLC   *)
(* checks it on the gate's configurations (spec/README.md, Refinement).    *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    \* @type: Set(Str);
    Sessions,
    \* @type: Set(Str);
    Nodes,          \* the actors that run executions
    \* @type: Set(Str);
    Recoverers,     \* the recovery workers
    \* @type: Set(Int);
    Execs,          \* execution ids 1..N
    \* @type: Int;
    Steps,          \* Steps per execution: Step k of execution e has assistant (e - 1) * Steps + k
    \* @type: Set({sess: Str, kind: Str, src: Int, state: Str});
    InitialInputs,  \* the inputs admitted before anything runs
    \* @type: Set({sess: Str, exec: Int, owner: Str});
    InitialClaims   \* executions earlier processes left recovering, their owners' leases lapsed (a restart)

(*
  @typeAlias: effect = {sess: Str, exec: Int, by: Str};
  @typeAlias: linput = {sess: Str, kind: Str, src: Int, state: Str};
*)
SessionLifecycle_typedefs == TRUE

VARIABLES
    \* the Session's current execution (0: none)
    \* @type: Str -> Int;
    exec,
    \* the current execution's owner ("" : none)
    \* @type: Str -> Str;
    owner,
    \* whether the owner's lease is live: only then may it act (the effect-holder)
    \* @type: Str -> Bool;
    live,
    \* each execution's outcome
    \* @type: Int -> Str;
    outcome,
    \* each assistant's status (by assistant id)
    \* @type: Int -> Str;
    status,
    \* the actor that wrote each assistant's status ("" while none)
    \* @type: Int -> Str;
    by,
    \* effects in flight
    \* @type: Set($effect);
    effects,
    \* the inputs: pending, or taken by an execution
    \* @type: Set($linput);
    inputs

lvars == <<exec, owner, live, outcome, status, by, effects, inputs>>

Outcomes == {"none", "running", "cancelling", "cancelled", "recovering", "recovered", "quarantined", "settled",
             "unknown"}
Statuses == {"none", "open", "Failed", "Interrupted", "Ended"}
Terminal == {"Failed", "Interrupted", "Ended"}
Ended == {"cancelled", "recovered", "settled"}   \* outcomes of executions that are over

\* who may cause effects on Session s: the current execution's owner while its lease is live
Holder(s) == IF live[s] THEN owner[s] ELSE ""

\* an execution's assistants, one per Step, and the execution an assistant belongs to
AsstsOf(e) == {(e - 1) * Steps + k : k \in 1..Steps}
Assts == UNION {AsstsOf(e) : e \in Execs}
ExecOfAsst(a) == (a - 1) \div Steps + 1
OpenOf(e) == {a \in AsstsOf(e) : status[a] = "open"}

-----------------------------------------------------------------------------
\* A restart on a shared database finds the executions earlier processes left (InitialClaims): each the
\* current execution of its Session, recovering, owned by a recovery worker whose lease lapsed, as Start,
\* Lapse, Recover's takeover and Lapse again leave it (its input taken, in InitialInputs).
LeftOf(s) == {c \in InitialClaims : c.sess = s}
Init ==
    /\ exec = [s \in Sessions |-> IF LeftOf(s) = {} THEN 0 ELSE (CHOOSE c \in LeftOf(s) : TRUE).exec]
    /\ owner = [s \in Sessions |-> IF LeftOf(s) = {} THEN "" ELSE (CHOOSE c \in LeftOf(s) : TRUE).owner]
    /\ live = [s \in Sessions |-> FALSE]
    /\ outcome = [e \in Execs |-> IF \E c \in InitialClaims : c.exec = e THEN "recovering" ELSE "none"]
    /\ status = [a \in Assts |-> "none"]
    /\ by = [a \in Assts |-> ""]
    /\ effects = {}
    /\ inputs = InitialInputs

\* effects in flight may end in any step
EffectsMayEnd == effects' \in SUBSET effects

\* the holder's current execution ends: nobody may act for the Session until the next Start
Release(s) == /\ exec' = [exec EXCEPT ![s] = 0]
              /\ owner' = [owner EXCEPT ![s] = ""]
              /\ live' = [live EXCEPT ![s] = FALSE]

\* the open assistant of execution e (if any) is closed with Step.Interrupted, written by actor k
InterruptOpen(e, k) ==
    /\ status' = [a \in Assts |-> IF a \in OpenOf(e) THEN "Interrupted" ELSE status[a]]
    /\ by' = [a \in Assts |-> IF a \in OpenOf(e) THEN k ELSE by[a]]

-----------------------------------------------------------------------------
\* An input of Session s is taken by node k: a fresh execution e, which k holds.
Start(s, i, e, k) ==
    /\ exec[s] = 0 /\ i \in inputs /\ i.sess = s /\ i.state = "pending"
    /\ outcome[e] = "none" /\ k \in Nodes
    /\ exec' = [exec EXCEPT ![s] = e]
    /\ owner' = [owner EXCEPT ![s] = k]
    /\ live' = [live EXCEPT ![s] = TRUE]
    /\ outcome' = [outcome EXCEPT ![e] = "running"]
    /\ inputs' = (inputs \ {i}) \cup {[i EXCEPT !.state = "taken"]}
    /\ EffectsMayEnd
    /\ UNCHANGED <<status, by>>

\* The holder begins an external effect (a provider call), or opens a Step's assistant (Step.Started):
\* the first Step's, or the next one after the previous Step's Step.Ended.
Effect(s) ==
    LET e == exec[s]
    IN /\ Holder(s) # ""
       /\ \/ /\ effects' = effects \cup {[sess |-> s, exec |-> e, by |-> Holder(s)]}
             /\ effects' # effects
             /\ UNCHANGED <<status, by>>
          \/ /\ outcome[e] = "running"
             /\ \E a \in AsstsOf(e) :
                  /\ status[a] = "none"
                  /\ IF (a - 1) % Steps = 0 THEN TRUE ELSE status[a - 1] = "Ended"   \* the first, or after Ended
                  /\ status' = [status EXCEPT ![a] = "open"]
                  /\ by' = [by EXCEPT ![a] = Holder(s)]
             /\ EffectsMayEnd
       /\ UNCHANGED <<exec, owner, live, outcome, inputs>>

\* The holder closes its open assistant with Step.Failed or Step.Ended, or (once its assistants are
\* closed) ends its execution: the claim is removed and the execution is settled.
Terminate(s) ==
    LET e == exec[s]
    IN /\ Holder(s) # "" /\ outcome[e] = "running"
       /\ \/ /\ \E a \in OpenOf(e) :
                  /\ \E kind \in {"Failed", "Ended"} : status' = [status EXCEPT ![a] = kind]
                  /\ by' = [by EXCEPT ![a] = Holder(s)]
             /\ UNCHANGED <<exec, owner, live, outcome>>
          \/ /\ OpenOf(e) = {} /\ \E a \in AsstsOf(e) : status[a] \in {"Failed", "Ended"}
             /\ Release(s)
             /\ outcome' = [outcome EXCEPT ![e] = "settled"]
             /\ UNCHANGED <<status, by>>
       /\ EffectsMayEnd
       /\ UNCHANGED inputs

\* The holder's running execution takes a pending input of its Session (a steer, at a Step's start).
Steer(s) ==
    /\ Holder(s) # "" /\ outcome[exec[s]] = "running"
    /\ \E i \in inputs : /\ i.sess = s /\ i.state = "pending"
                         /\ inputs' = (inputs \ {i}) \cup {[i EXCEPT !.state = "taken"]}
    /\ EffectsMayEnd
    /\ UNCHANGED <<exec, owner, live, outcome, status, by>>

\* Cancellation of a live execution: requested (running -> cancelling); settled by the holder
\* (cancelling -> cancelled, Step.Interrupted for an open assistant); then the execution ends.
\* A cancelled execution has no continuation.
Cancel(s) ==
    LET e == exec[s]
    IN /\ e # 0 /\ live[s]
       /\ \/ /\ outcome[e] = "running"
             /\ outcome' = [outcome EXCEPT ![e] = "cancelling"]
             /\ UNCHANGED <<exec, owner, live, status, by>>
          \/ /\ outcome[e] = "cancelling"
             /\ outcome' = [outcome EXCEPT ![e] = "cancelled"]
             /\ InterruptOpen(e, owner[s])
             /\ UNCHANGED <<exec, owner, live>>
          \/ /\ outcome[e] = "cancelled"
             /\ Release(s)
             /\ UNCHANGED <<outcome, status, by>>
       /\ EffectsMayEnd
       /\ UNCHANGED inputs

\* The holder's running execution becomes unknown: a tool's outcome is uncertain (its Tool.Success was
\* not published).  Nothing is replayed; recovery converts it after the lease lapses.
Uncertain(s) ==
    LET e == exec[s]
    IN /\ Holder(s) # "" /\ outcome[e] = "running"
       /\ outcome' = [outcome EXCEPT ![e] = "unknown"]
       /\ EffectsMayEnd
       /\ UNCHANGED <<exec, owner, live, status, by, inputs>>

\* Time passes: the leases of some Sessions lapse.  Their owners may no longer act.
Lapse ==
    /\ \E X \in SUBSET {s \in Sessions : live[s]} :
        /\ X # {}
        /\ live' = [s \in Sessions |-> IF s \in X THEN FALSE ELSE live[s]]
    /\ EffectsMayEnd
    /\ UNCHANGED <<exec, owner, outcome, status, by, inputs>>

\* Recovery worker r takes over Session s's lapsed, unquarantined execution (running -> recovering;
\* cancellation's and unknown outcomes are kept), or converts the (recovering or unknown) execution it
\* holds: Step.Interrupted for an
\* open assistant, a continuation input for the Session, and the execution ends as recovered; or
\* finishes the cancellation it holds: Step.Interrupted for an open assistant, and the execution
\* ends cancelled, with no continuation.
Recover(s, r) ==
    LET e == exec[s]
    IN /\ e # 0 /\ r \in Recoverers
       /\ \/ /\ ~live[s] /\ outcome[e] # "quarantined"
             /\ owner' = [owner EXCEPT ![s] = r]
             /\ live' = [live EXCEPT ![s] = TRUE]
             /\ outcome' = [outcome EXCEPT ![e] = IF @ = "running" THEN "recovering" ELSE @]
             /\ UNCHANGED <<exec, status, by, inputs>>
          \/ /\ Holder(s) = r /\ outcome[e] \in {"recovering", "unknown"}
             /\ outcome' = [outcome EXCEPT ![e] = "recovered"]
             /\ InterruptOpen(e, r)
             /\ inputs' = inputs \cup {[sess |-> s, kind |-> "cont", src |-> e, state |-> "pending"]}
             /\ Release(s)
          \/ /\ Holder(s) = r /\ outcome[e] \in {"cancelling", "cancelled"}
             /\ outcome' = [outcome EXCEPT ![e] = "cancelled"]
             /\ InterruptOpen(e, r)
             /\ Release(s)
             /\ UNCHANGED inputs
       /\ EffectsMayEnd

\* The recovery worker owning Session s's execution sets it aside (it is never taken over again).
Quarantine(s) ==
    LET e == exec[s]
    IN /\ e # 0 /\ owner[s] \in Recoverers
       /\ outcome[e] \in {"recovering", "cancelling", "cancelled", "unknown"}
       /\ outcome' = [outcome EXCEPT ![e] = "quarantined"]
       /\ EffectsMayEnd
       /\ UNCHANGED <<exec, owner, live, status, by, inputs>>

\* An effect in flight ends: its call returns, or its actor stops or dies.
EffectEnds ==
    /\ effects' \in SUBSET effects /\ effects' # effects
    /\ UNCHANGED <<exec, owner, live, outcome, status, by, inputs>>

\* Nothing abstract changes (most of the code's steps, seen through the refinement mapping).
Stutter == UNCHANGED lvars

\* (Stutter first, and the quantifiers nested under the guards they need, so that TLC, checking a
\* refinement of this module, accepts a stutter at once and rejects a disjunct early: [Next]_lvars
\* allows stuttering anyway, so neither changes a behaviour.)
Next ==
    \/ Stutter
    \/ \E s \in Sessions :
        /\ exec[s] = 0
        /\ \E i \in inputs : i.sess = s /\ i.state = "pending" /\
                \E e \in Execs : outcome[e] = "none" /\ \E k \in Nodes : Start(s, i, e, k)
    \/ \E s \in Sessions : Effect(s) \/ Terminate(s) \/ Cancel(s) \/ Quarantine(s) \/ Steer(s) \/ Uncertain(s)
    \/ \E s \in Sessions : exec[s] # 0 /\ \E r \in Recoverers : Recover(s, r)
    \/ Lapse
    \/ EffectEnds

Spec == Init /\ [][Next]_lvars

-----------------------------------------------------------------------------
(* The abstract protocol's own safety properties (checked on this module by TLC: spec/README.md) *)

LifecycleTypeOK ==
    /\ exec \in [Sessions -> Execs \cup {0}]
    /\ owner \in [Sessions -> Nodes \cup Recoverers \cup {""}]
    /\ live \in [Sessions -> BOOLEAN]
    /\ outcome \in [Execs -> Outcomes]
    /\ status \in [Assts -> Statuses]
    /\ by \in [Assts -> Nodes \cup Recoverers \cup {""}]
    /\ effects \subseteq [sess : Sessions, exec : Execs, by : Nodes \cup Recoverers]

\* At most one effect-holder per Session, and it is the current execution's owner.
OneHolder ==
    \A s \in Sessions : Holder(s) # "" => exec[s] # 0 /\ Holder(s) = owner[s]

\* An execution is the current one of at most one Session; a settled or recovered one is nobody's
\* (a cancelled one stays current until its claim is removed).
OneCurrentExecution ==
    /\ \A s, t \in Sessions : s # t /\ exec[s] # 0 => exec[s] # exec[t]
    /\ \A s \in Sessions : exec[s] # 0 => outcome[exec[s]] \notin {"none", "recovered", "settled"}

\* No open assistant outlives its execution (a quarantined execution keeps its assistant open).
NoOpenAfterEnd == \A a \in Assts : outcome[ExecOfAsst(a)] \in Ended => status[a] # "open"

\* A continuation exists only for an execution that recovery converted.
ContinuationsOnlyRecovered ==
    \A i \in inputs : i.kind = "cont" => outcome[i.src] = "recovered"

\* Each assistant goes none -> open -> exactly one terminal, written by its execution's holder;
\* a terminal status never changes.
AtMostOneTerminalStep ==
    \A a \in Assts :
        /\ status[a] \in Terminal => status'[a] = status[a] /\ by'[a] = by[a]
        /\ status[a] = "open" => status'[a] \in {"open"} \cup Terminal
        /\ status'[a] # status[a] =>
            \E s \in Sessions : exec[s] = ExecOfAsst(a) /\ Holder(s) # "" /\ by'[a] = Holder(s)

\* Effects begin only by the holder, on its current execution.
EffectsOnlyByHolderStep ==
    \A x \in effects' \ effects : x.by = Holder(x.sess) /\ x.by # "" /\ x.exec = exec[x.sess]

\* The holder changes only by Start (from no execution) or by Recover (from a lapsed lease).
HolderChangesOnlyAfterLapseStep ==
    \A s \in Sessions : Holder(s)' # Holder(s) /\ Holder(s)' # "" =>
        \/ exec[s] = 0
        \/ ~live[s] /\ owner'[s] \in Recoverers

AtMostOneTerminal == [][AtMostOneTerminalStep]_lvars
EffectsOnlyByHolder == [][EffectsOnlyByHolderStep]_lvars
HolderChangesOnlyAfterLapse == [][HolderChangesOnlyAfterLapseStep]_lvars

THEOREM Spec => []( LifecycleTypeOK /\ OneHolder /\ OneCurrentExecution /\ NoOpenAfterEnd
                    /\ ContinuationsOnlyRecovered )
THEOREM Spec => AtMostOneTerminal /\ EffectsOnlyByHolder /\ HolderChangesOnlyAfterLapse
=============================================================================

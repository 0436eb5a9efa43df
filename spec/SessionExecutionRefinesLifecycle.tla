------------------- MODULE SessionExecutionRefinesLifecycle -------------------
(***************************************************************************)
(* SessionExecution refines SessionLifecycle: every behaviour of the code's *)
(* atomic units, seen through the mapping below, is a behaviour of the     *)
(* abstract protocol (each step one abstract step, or a stutter).  TLC     *)
(* checks `Refinement` as a PROPERTY on the gate's configurations, as      *)
(* tlaplus/Examples' TwoPhase checks TPSpec => TC!TCSpec.                  *)
(*                                                                         *)
(* The abstract effects in flight are read from the runners: a runner     *)
(* between its provider dispatch and its terminal Step event has an effect *)
(* in flight (spec/README.md, Refinement).  SessionExecution's `effects`   *)
(* history only grows, so it is not the abstract set of effects in flight; *)
(* a lease that runs on down to -Grace is not live (ttl > 0 below).        *)
(***************************************************************************)
EXTENDS SessionExecution

\* ======================= THE REFINEMENT MAPPING (the one place) =======================
\* Each SessionLifecycle variable as an expression of SessionExecution's variables.

\* runner program counters between Dispatch and the terminal Step event: a provider call in flight (a
\* Step's local tool runs inside it).  Not "hung" (Residual R2): a listener that never returns is no
\* abstract effect (a hang from Step.Ended's gate would begin one no Effect step takes); NoOverlappingEffects'
\* CallInFlight does count it, the stricter reading for the safety property.
InFlightPcs == {"streaming", "started", "stepping", "tool_started", "tooling", "tool_failed", "publish_failed",
                "hosted"}

StartsOf(a) == {k \in DOMAIN log : log[k].kind = "Started" /\ log[k].asst = a}
TerminalsOf(a) == {k \in DOMAIN log : log[k].kind \in TerminalKinds /\ log[k].asst = a}
\* the assistant's Step events (its tool events write no status; nor does a request, an input event)
EventsOf(a) == {k \in DOMAIN log : log[k].kind \in StepKinds /\ log[k].asst = a}
ClaimsOf(e) == {s \in Sessions : claim[s].phase # "none" /\ claim[s].exec = e}

\* the current execution, its owner, and whether the owner may act (its lease is live)
LExec == [s \in Sessions |-> claim[s].exec]
LOwner == [s \in Sessions |-> claim[s].owner]
LLive == [s \in Sessions |-> claim[s].phase # "none" /\ claim[s].ttl > 0]

\* an execution with a claim has its claim's phase (or quarantined); one without had an outcome:
\* cancelled (the history), recovered (it has a continuation), settled (its claim was cleared)
LOutcome ==
    [e \in 1..MaxExec |->
        IF ClaimsOf(e) # {}
        THEN LET c == claim[CHOOSE s \in ClaimsOf(e) : TRUE]
             IN IF c.quar THEN "quarantined" ELSE c.phase
        ELSE IF e >= nextExec THEN "none"
        ELSE IF \E x \in cancelled : x.exec = e THEN "cancelled"
        ELSE IF \E i \in inputs : i.kind = "cont" /\ i.src = e THEN "recovered"
        ELSE "settled"]

\* from the durable log: none, open (one Step.Started), or its one terminal; any other log of the
\* assistant ("invalid") is no abstract status at all
LStatus ==
    [a \in Assistants |->
        LET n == Cardinality(StartsOf(a))
            t == TerminalsOf(a)
        IN IF t = {} THEN (IF n = 0 THEN "none" ELSE IF n = 1 THEN "open" ELSE "invalid")
           ELSE IF n = 1 /\ Cardinality(t) = 1 THEN log[CHOOSE k \in t : TRUE].kind
           ELSE "invalid"]

\* the writer of the assistant's latest event
LBy == [a \in Assistants |-> IF EventsOf(a) = {} THEN ""
                             ELSE log[CHOOSE k \in EventsOf(a) : \A j \in EventsOf(a) : j <= k].node]

\* effects in flight: each runner from its provider dispatch to its terminal Step event
LEffects == {[sess |-> run[n].sess, exec |-> run[n].exec, by |-> n] : n \in {m \in Nodes : run[m].pc \in InFlightPcs}}

\* inputs: pending, or taken (by ordinary selection, a steer or recovery's promotion alike); with Admission
\* a held prompt (its execution not yet requested) and a prompt not yet admitted are abstractly pending
\* (admitting or requesting it is a stutter): the abstract protocol's inputs are all there from Init; a
\* continuation's gen (its id) is no abstract notion, nor its flaw (ForgeContinuation: a stutter); a flawed
\* continuation the promotion refused (quarantined) stays abstractly pending (the abstract protocol, safety only,
\* has no quarantine of an input).  A continuation whose execution is still claimed is not yet an abstract
\* input: a conversion retry's keyed writes made it beside the claim, and the conversion that clears the
\* claim (the abstract Recover) completes it (spec/README.md, decision 15)
LInputs == {[sess |-> i.sess, kind |-> i.kind, src |-> i.src,
             state |-> IF i.state \in {"pending", "held", "quarantined"} THEN "pending" ELSE "taken"] :
            i \in {j \in inputs : j.kind = "prompt" \/ ClaimsOf(j.src) = {}}}
           \cup IF ~Admission THEN {}
                 ELSE {x \in [sess : Sessions, kind : {"prompt"}, src : 1..Prompts, state : {"pending"}] :
                         ~\E i \in inputs : i.sess = x.sess /\ i.kind = "prompt" /\ i.src = x.src}

Lifecycle == INSTANCE SessionLifecycle
    WITH Execs <- 1..MaxExec, Steps <- MaxSteps,
         InitialInputs <- {[sess |-> s, kind |-> "prompt", src |-> k,
                             state |-> IF k = 1 /\ s \in LeftClaims THEN "taken" ELSE "pending"] :
                            s \in Sessions, k \in 1..Prompts},
         InitialClaims <- {[sess |-> s, exec |-> LeftExec[s], owner |-> LeftOwner] : s \in LeftClaims},
         exec <- LExec, owner <- LOwner, live <- LLive, outcome <- LOutcome, status <- LStatus,
         by <- LBy, effects <- LEffects, inputs <- LInputs

\* ===================================== end of the mapping =====================================

Refinement == Lifecycle!Spec

THEOREM Spec => Refinement
=============================================================================

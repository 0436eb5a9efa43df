-------------------------- MODULE MCSessionExecution --------------------------
(***************************************************************************)
(* What TLC model-checks: the protocol (SessionExecution), its refinement  *)
(* of the abstract protocol (SessionExecutionRefinesLifecycle), and what   *)
(* is model checking, not protocol, as CCF keeps ccfraft.tla and           *)
(* MCccfraft.tla apart.  The generated spec/MC_*.cfg files configure this  *)
(* module (spec/configs.py writes them).                                   *)
(***************************************************************************)
EXTENDS SessionExecutionRefinesLifecycle
=============================================================================

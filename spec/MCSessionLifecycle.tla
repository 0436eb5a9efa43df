-------------------------- MODULE MCSessionLifecycle --------------------------
(***************************************************************************)
(* The abstract protocol alone, model-checked against its own safety       *)
(* properties (spec/MCSessionLifecycle.cfg; tests/engines/test_refinement.py). *)
(***************************************************************************)
EXTENDS SessionLifecycle

\* one prompt per Session admitted at Init (a TLC .cfg cannot write records)
MCInitialInputs == [sess : Sessions, kind : {"prompt"}, src : {1}, state : {"pending"}]
=============================================================================

"""The committed race traces (*.json) and their schema (schema/), a package only so that an installed
claimcheck carries them: harness.conformance.replay.TRACES is this folder, the gate's traces and kill
matrix stages replay what it holds."""

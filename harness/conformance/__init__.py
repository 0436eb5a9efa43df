"""Driving a system under test from the model, through the port (harness.port): replay, lockstep, the
exhaustive walk, the kill matrix, and the comparison of states (diff)."""

"""Driving the implementation from the model: scheduler, mapping, replay, lockstep, kill matrix."""

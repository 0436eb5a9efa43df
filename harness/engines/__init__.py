"""The model checkers: the Python explorer (safety and liveness), TLC, Apalache, twin = TLC."""

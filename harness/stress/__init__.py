"""Real node processes, crashes by SIGKILL, and the recorded commit history checked against the twin."""

"""Deterministic identifiers: the same (Session, execution, ordinal) always gives the same id, so a
retried transaction writes the same rows and a conflict is a real conflict, never a retry."""

from __future__ import annotations

import hashlib


def assistant_id(execution_id: int, ordinal: int = 1) -> str:
    """The ordinal-th assistant an execution starts (the twin has one per execution: ordinal 1)."""
    return f"asst-{execution_id}-{ordinal}"


def assistant_execution(aid: str) -> int:
    """The execution an assistant id belongs to (the twin's encoding: asst = its execution id)."""
    prefix, execution, _ordinal = aid.split("-")
    if prefix != "asst":
        raise ValueError(f"not an assistant id: {aid!r}")
    return int(execution)


def prompt_id(session_id: str, number: int) -> str:
    """The number-th prompt admitted to a Session."""
    return f"prompt-{_digest(session_id, number)}"


def continuation_id(session_id: str, execution_id: int) -> str:
    """Recovery's continuation for (Session, execution): derived, so conversion retries are idempotent
    and a different Session can never produce the same id."""
    return f"cont-{_digest(session_id, execution_id)}"


def _digest(session_id: str, n: int) -> str:
    # length-prefixed so ("a1", 2) and ("a", 12) cannot collide
    raw = f"{len(session_id)}:{session_id}:{n}".encode()
    return hashlib.sha256(raw).hexdigest()[:24]

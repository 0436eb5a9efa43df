"""Deterministic identifiers: the same (Session, execution, ordinal) always gives the same id, so a
retried transaction writes the same rows and a conflict is a real conflict, never a retry."""

from __future__ import annotations

import hashlib


AGAIN = "again"  # the suffix of an assistant started a second time for the same Step


def assistant_id(execution_id: int, ordinal: int = 1) -> str:
    """The assistant of Step `ordinal` of an execution (one per Step, as the twin's Asst(e, k))."""
    return f"asst-{execution_id}-{ordinal}"


def restarted_id(execution_id: int, ordinal: int) -> str:
    """The assistant a cancellation that asks publisher memory starts again for Step `ordinal` (the
    defects step-started-window and cancel-restarts-assistant): a second row for the same Step, which the
    twin sees as a second Step.Started of that Step's assistant."""
    return f"{assistant_id(execution_id, ordinal)}-{AGAIN}"


def assistant_step(aid: str) -> tuple[int, int]:
    """(execution, Step ordinal) of an assistant id, a restarted one included."""
    parts = aid.split("-")
    if parts[0] != "asst" or len(parts) not in (3, 4) or parts[3:] not in ([], [AGAIN]):
        raise ValueError(f"not an assistant id: {aid!r}")
    return int(parts[1]), int(parts[2])


def numbered(aid: str, steps: int = 1) -> int:
    """The assistant's number in the twin's vocabulary (Step k of execution e: (e - 1) * steps + k, the
    twin's Asst), for records written in that vocabulary (the stress history)."""
    execution, ordinal = assistant_step(aid)
    return (execution - 1) * steps + ordinal


def assistant_execution(aid: str) -> int:
    """The execution an assistant id belongs to."""
    return assistant_step(aid)[0]


def prompt_id(session_id: str, number: int) -> str:
    """The number-th prompt admitted to a Session."""
    return f"prompt-{_digest(session_id, number)}"


def continuation_id(session_id: str, execution_id: int) -> str:
    """Recovery's continuation for (Session, execution): derived, so conversion retries are idempotent
    and a different Session can never produce the same id."""
    return f"cont-{_digest(session_id, execution_id)}"


def recovery_prompt_digest(session_id: str, execution_id: int) -> str:
    """The digest of the exact recovery prompt of (Session, execution): the content recovery's continuation
    carries, checked at promotion (decision 28)."""
    return f"recovery-{hashlib.sha256(f'{session_id}/{execution_id}'.encode()).hexdigest()[:16]}"


def forged_continuation_id(session_id: str, execution_id: int) -> str:
    """A continuation id not derived from (Session, execution): a forged row's (ForgeContinuation, flaw id)."""
    return f"{continuation_id(session_id, execution_id)}-forged"


MINTED = "attempt"  # the suffix of a continuation id minted by a later attempt (conversion-retry-mints-new-ids)


def minted_continuation_id(session_id: str, execution_id: int, attempt: int) -> str:
    """The defect's continuation id: minted per conversion attempt (the first attempt's happens to be the
    derived one), so a retry names a continuation the first attempt did not create."""
    base = continuation_id(session_id, execution_id)
    return base if attempt == 0 else f"{base}-{MINTED}{attempt}"


def continuation_gen(input_id: str) -> int:
    """The twin's `gen` of a continuation id: 0 for the derived id, the attempt for a minted one."""
    head, sep, tail = input_id.rpartition(f"-{MINTED}")
    return int(tail) if sep and tail.isdigit() else 0
def request_id(prompt: str) -> str:
    """The one PromptExecutionRequested of a prompt: derived from the prompt's id, so a second exact retry
    writes the same id and conflicts instead of appending."""
    return f"requested-{prompt}"


def content_digest(input_id: str) -> str:
    """The digest of the content admitted with an input: in this world an input's content is determined
    by its id, so its digest is too (a caller retrying with another content sends another digest)."""
    return f"content-{hashlib.sha256(input_id.encode()).hexdigest()[:16]}"


def _digest(session_id: str, n: int) -> str:
    # length-prefixed so ("a1", 2) and ("a", 12) cannot collide
    raw = f"{len(session_id)}:{session_id}:{n}".encode()
    return hashlib.sha256(raw).hexdigest()[:24]

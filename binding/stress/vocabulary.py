"""How the bundled server's commit history names what the twin numbers (the port's Vocabulary,
harness.port.history): its assistant, prompt and continuation ids (impl/ids.py), its stored event kinds
(impl/registry.py), its quarantine reasons, its wake queue and its recorder's actors and marks
(impl/history.py). harness/stress/records.py reads a history with it."""

from __future__ import annotations

from impl import ids
from impl.history import ENVIRONMENT, PER_SESSION, UNATTRIBUTED, ZERO_MARKS
from impl.recovery import DEFAULT_MAX_TRIES
from impl.registry import SHORT_KIND
from impl.wakes import ORDINARY
from spec import model as M

from binding.actions import input_id
from binding.mapping import why_of


class BundledVocabulary:
    environment = ENVIRONMENT
    unattributed = UNATTRIBUTED
    per_session = PER_SESSION
    zero_marks = ZERO_MARKS
    max_tries = DEFAULT_MAX_TRIES
    ordinary = ORDINARY

    def assistant(self, aid: str, steps: int) -> int:
        return ids.numbered(aid, steps)

    def event_kind(self, kind: str) -> str:
        return SHORT_KIND.get(kind, kind.split(".", 1)[-1])

    def continuation_gen(self, input_id: str) -> int:
        return ids.continuation_gen(input_id)

    def continuation_id(self, session: str, execution: int) -> str:
        return ids.continuation_id(session, execution)

    def input_id(self, i: M.Input) -> str:
        return input_id(i)

    def quarantine_reason(self, error: str | None) -> str:
        return why_of(error)


VOCABULARY = BundledVocabulary()

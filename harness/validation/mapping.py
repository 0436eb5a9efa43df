"""`claimcheck validate --mapping FILE`: a server's log in its own vocabulary, renamed to the protocol's
before it is read (docs/history.md, "Your server's log"), so a log validates without a converter program.

The mapping file is one JSON object:

    {"fields":  {"ts": "now", "node": "actor", "op": "action", "rows": "writes", "events": "log"},
     "actions": {"lease.acquire": "Acquire", "step.start": "PublishStepStarted"},
     "kinds":   {"step_started": "Started"}}

`fields` renames object keys at any depth of a line (the line's fields, `writes`' keys, `params`' keys, a
row's fields); `actions` renames the value of `action`; `kinds` the value of an event's `kind`. A name the
mapping does not give is kept. Every target must be a name of the history format (a field of a line, of
its `writes` or its rows, a registry action, an event kind): anything else is bad input (exit 2, one line).
"""

from __future__ import annotations

import json
from pathlib import Path

from spec import names as N

from harness.validation.history import HistoryError


def _format_fields() -> set[str]:
    from harness.validation import history as H
    out = set()
    for model in (H.Commit, H.Writes, H.ClaimRow, H.EventRow, H.RecoveryRow, H.InputRow, H.WakeRow, H.Memory,
                  H.RunnerMemory, H.FinMemory, H.RecMemory, H.PlanRow, H.Header):
        out |= set(model.model_fields)
    return out | {"n", "r", "s", "i", "e", "w", "k", "d", "f", "sess", "kind", "src", "state", "gen", "flaw"}


class Mapping:
    def __init__(self, fields: dict, actions: dict, kinds: dict):
        self.fields, self.actions, self.kinds = fields, actions, kinds

    def apply(self, raw):
        """The line (a parsed JSON value) in the protocol's names."""
        if isinstance(raw, list):
            return [self.apply(x) for x in raw]
        if not isinstance(raw, dict):
            return raw
        out = {}
        for k, v in raw.items():
            name = self.fields.get(k, k)
            v = self.apply(v)
            if name == "action" and isinstance(v, str):
                v = self.actions.get(v, v)
            elif name == "kind" and isinstance(v, str):
                v = self.kinds.get(v, v)
            out[name] = v
        return out


def load(path: str) -> Mapping:
    """The mapping in FILE; HistoryError (one line naming the file and the entry) when it is not one."""
    where = f"--mapping {path}"
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise HistoryError(f"{where}: cannot read ({exc.strerror or exc})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{where}: not JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict) or set(raw) - {"fields", "actions", "kinds"}:
        raise HistoryError(f"{where}: expected an object with 'fields', 'actions' and 'kinds' only")
    tables = {}
    for key, targets in (("fields", _format_fields()), ("actions", set(N.ACTIONS)), ("kinds", set(N.LOG_KINDS))):
        table = raw.get(key, {})
        if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
            raise HistoryError(f"{where}: {key}: expected an object of names to names")
        for k, v in table.items():
            if v not in targets:
                raise HistoryError(f"{where}: {key}.{k}: {v!r} is not {'an' if key == 'actions' else 'a'} {key[:-1]} of the history format")
        tables[key] = table
    return Mapping(tables["fields"], tables["actions"], tables["kinds"])

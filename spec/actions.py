"""The twin's action table: each registry action, its function in `spec.model`, and how a registry
parameter tuple (names, as traces and histories write them) becomes that function's arguments.

`spec.model.successors` enumerates what is enabled; this table applies one named instance directly,
which is what a checker of recorded histories needs (it knows the action and must not enumerate Next).
"""

from __future__ import annotations

from typing import Callable

from spec import model as M
from spec import names as N


def _argument(cfg: M.Config, action: N.Action, letter: str, value):
    """A registry parameter as the twin's function takes it: actors by index, the rest as they are."""
    if letter == "r":
        return cfg.recoverers.index(value)
    if letter == "n" and action.actor in ("node", "fault"):  # nodes and recovery workers alike
        return (cfg.nodes + cfg.recoverers).index(value)
    if letter == "n":
        return M.ni(cfg, value)
    return value


TWIN: dict[str, Callable] = {name: getattr(M, name) for name in N.ACTIONS}


def apply_direct(cfg: M.Config, st: M.State, name: str, params: tuple) -> M.State | None:
    """The twin's function for `name` on registry parameters: its successor, `st` itself when nothing
    changes, or None when its guard is false (no enumeration of Next, no fault filter)."""
    action = N.ACTIONS[name]
    args = [_argument(cfg, action, letter, v) for letter, v in zip(action.params, params, strict=True)]
    return TWIN[name](cfg, st, *args)

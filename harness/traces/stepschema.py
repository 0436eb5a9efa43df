"""The part of the trace JSON Schema that comes from the registry: a step's `action` is one of
`spec.names.ACTIONS`, and its `params` are exactly that action's parameters, each typed by its letter.

`harness.traces.trace.schema` puts these into `TraceStep` (the pydantic model keeps `action` a string and
`params` an object, and checks them itself with messages that name the field; the schema says the same
thing to an editor or a CI tool that reads JSON Schema).
"""

from __future__ import annotations

from spec import names as N

NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


def _name(what: str) -> dict:
    return {"type": "string", "pattern": NAME_PATTERN, "description": what}


def _input() -> dict:
    return {
        "type": "object", "additionalProperties": False, "required": ["sess", "kind", "src", "state"],
        "description": "an input (prompt or continuation) as the twin's state holds it",
        "properties": {
            "sess": _name("its Session"),
            "kind": {"enum": list(N.INPUT_KINDS), "type": "string"},
            "src": {"type": "integer", "description": "the prompt number, or the execution a continuation recovers"},
            "state": {"enum": list(N.INPUT_STATES), "type": "string"},
            "gen": {"type": "integer", "minimum": 0,
                    "description": "a continuation's id beyond Session and execution (0, derived from them; may be "
                                   "left out)"},
            "flaw": {"enum": list(N.CONTINUATION_FLAWS), "type": "string",
                     "description": "a forged or corrupt continuation row's one flaw (left out: none)"},
        },
    }


# the registry's parameter letters: what each names, and its JSON type
LETTERS = {
    "n": lambda action: _name("a node" + (" or a recovery worker (an owner id)" if action.actor in ("node", "fault")
                                          else "")),
    "r": lambda action: _name("a recovery worker"),
    "s": lambda action: _name("a Session"),
    "i": lambda action: {"$ref": "#/$defs/Input"},
    "e": lambda action: {"type": "integer", "description": "an execution id (1..MaxExec)"},
    "w": lambda action: {"type": "integer", "description": "a wake row (1..WakeRows, oldest first)"},
    "k": lambda action: {"type": "integer", "description": "a waker (1..Wakers)"},
    "d": lambda action: {"enum": list(N.DIGESTS), "type": "string",
                         "description": "the content digest an exact retry carries: the admitted input's own, or "
                                        "another's"},
    "f": lambda action: {"enum": list(N.CONTINUATION_FLAWS), "type": "string",
                         "description": "the one flaw of a forged continuation row (the check of the promotion's "
                                        "validation that refuses it)"},
}
assert {p for a in N.ACTIONS.values() for p in a.params} <= set(LETTERS), "a parameter letter without a type"


def params_def(action: N.Action) -> dict:
    return {"type": "object", "additionalProperties": False, "required": list(action.params),
            "properties": {p: LETTERS[p](action) for p in action.params},
            "title": f"{action.name} parameters", "description": action.doc}


def defs() -> dict:
    """The definitions the step schema refers to: `Input`, and `<Action>Params` per registry action."""
    out = {"Input": _input()}
    out.update({f"{a.name}Params": params_def(a) for a in N.ACTIONS.values()})
    return out


def refine_step(step: dict) -> dict:
    """TraceStep's generated schema with `action` an enum of the registry's names and `params` the
    matching action's parameter object (one `oneOf` branch per action, told apart by `action`)."""
    props = dict(step["properties"])
    props["action"] = {"enum": list(N.ACTIONS), "type": "string", "title": "Action",
                       "description": "a registry action (spec/names.py)"}
    props["params"] = {"type": "object", "title": "Params",
                       "description": "the action's parameters by the registry's letters; see the oneOf branch of "
                                      "the action"}
    branches = []
    for a in N.ACTIONS.values():
        branch = {"properties": {"action": {"const": a.name}, "params": {"$ref": f"#/$defs/{a.name}Params"}}}
        if a.params:  # an action without parameters may leave `params` out
            branch["required"] = ["params"]
        branches.append(branch)
    return {**step, "properties": props, "oneOf": branches}

"""The driver protocol (docs/driver.md): how claimcheck drives a server it did not write.

claimcheck runs a command the user names (`--sut CMD`) and talks to it in JSON lines on its stdin and
stdout: one request object per line, one reply object per line, in order. These pydantic models are the
protocol's single definition: the client validates every reply with them, the bundled driver
(binding/driver.py) every request, and `docs/driver.schema.json` (`SCHEMA_FILE`) is generated from them so a
driver in any language can check itself against the same text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import models_json_schema

from spec import names as N

from harness.traces import stepschema
from harness.traces.trace import ActionName, BoundaryName, DefectName, Name, TraceConfig

PROTOCOL = "claimcheck-driver"
VERSION = 1

AttemptName = Literal[tuple(N.ATTEMPTS)]
ActorKind = Literal[tuple(N.STEPPING_ACTORS)]
RequestId = Annotated[int, Field(ge=0, description="the caller's number for this request; its reply repeats it")]
Params = Annotated[dict[str, Any], Field(description="the action's parameters as a trace step writes them "
                                                     "(docs/driver.md; traces/schema/trace.schema.json, "
                                                     "<Action>Params)")]
ObserveToo = Annotated[bool, Field(description="optional (hello's `observes`): the reply carries the observation "
                                               "after the request (`state`, `boundaries`, as observe's reply), so "
                                               "no observe request follows")]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# ---------------------------------------------------------------- requests

class Hello(_Message):
    """The first request: which protocol and versions the caller speaks."""
    id: RequestId
    op: Literal["hello"]
    protocol: Literal["claimcheck-driver"]
    versions: list[int] = Field(min_length=1, description="protocol versions the caller speaks")


class Start(_Message):
    """A fresh world for this configuration (any world before it is dropped): the twin's Init."""
    id: RequestId
    op: Literal["start"]
    config: TraceConfig = Field(description="the twin's constants, as a trace's `config` object")
    defects: list[DefectName] = Field(default_factory=list,
                                      description="defects the server runs with (a mutation-testing run); "
                                                  "usually config.defects")


class Step(_Message):
    """Take this twin action instance, which the twin enables here (the caller chose it)."""
    id: RequestId
    op: Literal["step"]
    action: ActionName
    params: Params
    observe: ObserveToo = False


class Attempt(_Message):
    """Make the call of an action whose parameters the caller chooses (an attempt); the twin may not enable
    it, and the server must then refuse it."""
    id: RequestId
    op: Literal["attempt"]
    action: AttemptName
    params: Params
    observe: ObserveToo = False


class Probe(_Message):
    """One attempt of an `attempts` request."""
    action: AttemptName
    params: Params


class Attempts(_Message):
    """Optional (hello's `attempts`): carry out each attempt in order, as `attempt` requests with `observe:
    true` would be (the refusal probes of a state: one round trip where one per probe was)."""
    id: RequestId
    op: Literal["attempts"]
    attempts: list[Probe] = Field(min_length=1)


class Move(_Message):
    """Let the actor of this kind named `who` run its own next atomic unit, up to its next named boundary,
    without saying which action that is."""
    id: RequestId
    op: Literal["move"]
    actor: ActorKind
    who: Name
    observe: ObserveToo = False


class Observe(_Message):
    """The server's state in the twin's vocabulary, and the boundaries fired since the previous observe."""
    id: RequestId
    op: Literal["observe"]


class Save(_Message):
    """Optional (hello's `save`): remember the whole world under `point`."""
    id: RequestId
    op: Literal["save"]
    point: Name


class Restore(_Message):
    """Optional (hello's `save`): put the whole world back as it was when `point` was saved."""
    id: RequestId
    op: Literal["restore"]
    point: Name


class Stop(_Message):
    """The last request: reply, then exit."""
    id: RequestId
    op: Literal["stop"]


REQUESTS = (Hello, Start, Step, Attempt, Attempts, Move, Observe, Save, Restore, Stop)
Request = Annotated[Union[REQUESTS], Field(discriminator="op")]


# ---------------------------------------------------------------- replies

class Failed(_Message):
    """Any request the driver could not carry out: bad JSON, an unknown op, no world yet, the server raised."""
    id: int | None = Field(description="the request's id, null when the line had none")
    ok: Literal[False]
    error: str = Field(description="one line: what went wrong")

ObservedState = Annotated[dict[str, Any] | None, Field(description="asked (`observe: true`): the state after the "
                                                                  "request, as observe's reply")]
ObservedBoundaries = Annotated[list[BoundaryName] | None, Field(description="asked (`observe: true`): the boundaries "
                                                                           "fired since the previous observation, "
                                                                           "as observe's reply")]


class _Done(_Message):
    id: RequestId
    ok: Literal[True]


class HelloReply(_Done):
    protocol: Literal["claimcheck-driver"]
    version: int = Field(description="the version of this conversation, one of the request's `versions`")
    driver: str = Field(description="what server this driver drives (a name for reports)")
    save: bool = Field(False, description="whether the driver carries out save and restore")
    defects: list[DefectName] = Field(default_factory=list,
                                      description="the registry defects the server can switch on (`start`'s "
                                                  "`defects`): the kill matrix's switches. None (the default): "
                                                  "a server that ships no defect switches, whose gate skips the "
                                                  "kill matrix as not applicable (docs/driver.md)")
    history: bool = Field(False, description="whether the driver can record each world's commit history "
                                             "(docs/history.md) when its command asks it to")
    observes: bool = Field(False, description="whether step, attempt and move replies carry the observation after "
                                              "the request when it asks (`observe: true`): one round trip where "
                                              "two were (docs/driver.md)")
    attempts: bool = Field(False, description="whether the driver carries out `attempts` (several attempts, each "
                                              "observed, in one request)")


class Ack(_Done):
    """The reply to start, save, restore and stop."""


class StepReply(_Done):
    took: ActionName | None = Field(description="the action the server took: the requested one, another one "
                                                "(its actor went elsewhere) or null (it took none)")
    detail: str | None = Field(None, description="why it did not take the requested one, for the report")
    state: ObservedState = None
    boundaries: ObservedBoundaries = None


class AttemptReply(_Done):
    answer: Literal["taken", "refused"]
    detail: str | None = Field(None, description="the server's own answer, for the report")
    state: ObservedState = None
    boundaries: ObservedBoundaries = None


class Probed(_Message):
    """What one attempt of an `attempts` request did: its answer and the observation after it, or the error
    that stopped the request there (then it is the last)."""
    answer: Literal["taken", "refused"] | None = Field(None, description="as attempt's reply; absent with `error`")
    detail: str | None = Field(None, description="the server's own answer, for the report")
    state: ObservedState = None
    boundaries: ObservedBoundaries = None
    error: str | None = Field(None, description="one line: why this attempt could not be carried out (the "
                                                "requests after it were not)")


class AttemptsReply(_Done):
    results: list[Probed] = Field(description="one per attempt carried out, in order: all of them, unless one "
                                              "has `error`, which ends the list")


class MoveReply(_Done):
    took: ActionName | None = Field(description="the action the actor took, null when it took none")
    state: ObservedState = None
    boundaries: ObservedBoundaries = None


class ObserveReply(_Done):
    state: dict[str, Any] = Field(description="the state as a trace step's `state` (harness.traces.trace."
                                              "state_to_json); `faults` is the caller's and may be left empty")
    boundaries: list[BoundaryName] = Field(description="named boundaries fired since the previous observe (or "
                                                       "start, or restore), in order")


REPLIES = {"hello": HelloReply, "start": Ack, "step": StepReply, "attempt": AttemptReply, "attempts": AttemptsReply,
           "move": MoveReply,
           "observe": ObserveReply, "save": Ack, "restore": Ack, "stop": Ack}
assert set(REPLIES) == {m.model_fields["op"].annotation.__args__[0] for m in REQUESTS}


# ---------------------------------------------------------------- the schema

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "driver.schema.json"


def schema() -> dict:
    """The protocol's JSON Schema: a message is a Request or a Reply (which reply model answers which op
    is in Reply's description: a reply does not repeat its op); a step's or attempt's `params` typed per
    action as the trace schema types them (harness.traces.stepschema)."""
    models = list(REQUESTS) + [Failed, HelloReply, Ack, StepReply, AttemptReply, AttemptsReply, MoveReply,
                               ObserveReply]
    _, top = models_json_schema([(m, "validation") for m in models], ref_template="#/$defs/{model}")
    defs = top["$defs"]
    defs.update(stepschema.defs())  # Input and <Action>Params, as the trace schema types a step's params
    for model, actions in ((Step, N.ACTIONS), (Attempt, N.ATTEMPTS), (Probe, N.ATTEMPTS)):
        defs[model.__name__]["oneOf"] = [{"properties": {"action": {"const": a},
                                                         "params": {"$ref": f"#/$defs/{a}Params"}}}
                                         for a in actions]
    ref = lambda m: {"$ref": f"#/$defs/{m.__name__}"}  # noqa: E731
    defs["Request"] = {"description": "one line from claimcheck to the driver",
                       "oneOf": [ref(m) for m in REQUESTS],
                       "discriminator": {"propertyName": "op",
                                         "mapping": {m.model_fields["op"].annotation.__args__[0]: f"#/$defs/{m.__name__}"
                                                     for m in REQUESTS}}}
    defs["Reply"] = {"description": "one line from the driver to claimcheck, answering the request with the same "
                                    "id: Failed, or the reply of that request's op: "
                                    + ", ".join(f"{op}: {m.__name__}" for op, m in REPLIES.items()),
                     "anyOf": [ref(Failed)] + [ref(m) for m in dict.fromkeys(REPLIES.values())]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"https://claimcheck.invalid/schema/driver-v{VERSION}.json",
            "title": f"{PROTOCOL} protocol, version {VERSION}",
            "description": "JSON lines between claimcheck and a driver of a server under test (docs/driver.md)",
            "anyOf": [{"$ref": "#/$defs/Request"}, {"$ref": "#/$defs/Reply"}],
            "$defs": defs}


def schema_text() -> str:
    """The text of the committed SCHEMA_FILE (tests/driver/test_driver_schema.py checks it is current)."""
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


def dumps(message: BaseModel | dict) -> str:
    """One protocol line (no newline): compact JSON, nothing left out but absent optional fields."""
    d = message.model_dump(mode="json", exclude_none=True) if isinstance(message, BaseModel) else message
    return json.dumps(d, separators=(",", ":"))

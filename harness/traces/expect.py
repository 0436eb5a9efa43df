"""A trace's `expect` block: what the final state must show, as models (the schema), the names it uses
checked against the trace's configuration, and the check of one state against it.

Replay checks every expectation on the implementation's mapped final state and on the twin's
(`harness.conformance.replay`); `non_vacuous` needs the whole replay and is judged there. Each failed
expectation is one line naming its field, the expected value beside the found one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from spec import invariants as I
from spec import model as M
from spec import names as N

from harness.traces.inputfile import short

EventKind = Literal[N.LOG_KINDS]
InvariantName = Literal[tuple(N.INVARIANTS)]
LivenessName = Literal[N.LIVENESS]


class EventCount(BaseModel):
    """How many events of one kind the final log holds for one assistant (= its execution id), and
    (optionally) who wrote them."""

    model_config = ConfigDict(extra="forbid", strict=True)
    assistant: int
    kind: EventKind
    count: int = Field(ge=0)
    writer: str | None = Field(None, description="the node or recovery worker every such event was written "
                                                 "under (the log's `node` field, the claim identity's owner)")
    call: int | None = Field(None, ge=1, description="a tool event's call index in its Step: count only that "
                                                    "call's events (tool kinds only; absent: every call's)")


class ClaimExpect(BaseModel):
    """The final claim of one Session: absent, or present with (optionally) its phase and quarantine."""

    model_config = ConfigDict(extra="forbid", strict=True)
    session: str
    present: bool
    phase: Literal[N.PHASES[1:]] | None = None
    quarantined: bool | None = None
    reason: str | None = Field(None, description="why it is quarantined (needs quarantined: true), compared "
                                                 "with spec.invariants.quarantine_reason: malformed | exhausted | invalid")


class InputExpect(BaseModel):
    """One input by its identity (Session, kind, source: the prompt number, or the execution a
    continuation continues): present in a state, or absent."""

    model_config = ConfigDict(extra="forbid", strict=True)
    session: str
    kind: Literal[N.INPUT_KINDS]
    src: int = Field(ge=1)
    present: bool = True
    state: Literal[N.INPUT_STATES] | None = Field(None, description="its state (only when present)")


class ContinuationId(BaseModel):
    """A continuation, named by its Session and the execution it continues (its id is derived from these)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    session: str
    src: int = Field(ge=1, description="the recovered execution it continues")


class AssistantExpect(BaseModel):
    """An assistant's outcome as the durable log shows it (spec.invariants.assistant_outcome)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    assistant: int = Field(ge=1)
    outcome: Literal[N.ASSISTANT_OUTCOMES]


class Expect(BaseModel):
    """Expectations on the final outcome, checked on the implementation's mapped state and on the twin's
    after the last step."""

    model_config = ConfigDict(extra="forbid", strict=True)
    events: list[EventCount] = Field(default_factory=list)
    claims: list[ClaimExpect] = Field(default_factory=list)
    inputs: list[InputExpect] = Field(default_factory=list, description="inputs by id: their state, or absence")
    continuation_ids: list[ContinuationId] | None = Field(
        None, description="exactly these continuations exist (Session, the execution each continues)")
    assistants: list[AssistantExpect] = Field(default_factory=list, description="assistants' outcomes")
    recovery_rows: int | None = Field(None, ge=0, description="session_recovery rows in total")
    continuations: int | None = Field(None, ge=0, description="continuation inputs in total")
    memory: dict[str, int] | None = Field(None, description="publisher memory per node (assistant id, 0 = none)")
    invariants: list[InvariantName] = Field(default_factory=list, description="properties this trace is about: "
                                            "safety on every state, liveness as its goal reached at the end")
    non_vacuous: list[LivenessName] = Field(
        default_factory=list, description="liveness properties whose premise must hold on some state of the replay "
                                          "(else replay fails: the property would hold only vacuously)")


def name_problems(cfg: M.Config, ex: Expect) -> list[str]:
    """The names and combinations `ex` uses that the configuration cannot judge, as `expect.<field>: reason`
    (trace.check_steps raises the first as bad input)."""
    bad = []
    sessions = lambda where, s: [] if s in cfg.sessions else [f"{where}.session: {short(s)} is not a configured Session"]
    for k, c in enumerate(ex.claims):
        bad += sessions(f"expect.claims[{k}]", c.session)
        if c.reason is not None and c.quarantined is not True:
            bad.append(f"expect.claims[{k}].reason: a quarantine reason needs quarantined: true")
    for node in ex.memory or {}:
        if node not in cfg.nodes:
            bad.append(f"expect.memory: {short(node)} is not a configured node")
    for k, e in enumerate(ex.events):
        if e.writer is not None and e.writer not in cfg.nodes + cfg.recoverers:
            bad.append(f"expect.events[{k}].writer: {short(e.writer)} is not a configured node or recovery worker")
        elif e.writer is not None and e.count == 0:
            bad.append(f"expect.events[{k}].writer: count 0 leaves no event to have a writer")
        if e.call is not None and e.kind not in N.TOOL_KINDS:
            bad.append(f"expect.events[{k}].call: only a tool event has a call index")
        elif e.call is not None and e.call > cfg.tools + cfg.hosted:
            bad.append(f"expect.events[{k}].call: {e.call} is beyond the configuration's calls per Step "
                       f"(Tools {cfg.tools}, Hosted {cfg.hosted})")
    for k, i in enumerate(ex.inputs):
        bad += sessions(f"expect.inputs[{k}]", i.session)
        if i.state is not None and not i.present:
            bad.append(f"expect.inputs[{k}].state: an absent input has no state")
    for k, c in enumerate(ex.continuation_ids or []):
        bad += sessions(f"expect.continuation_ids[{k}]", c.session)
    for k, a in enumerate(ex.assistants):
        if a.assistant > cfg.max_exec:
            bad.append(f"expect.assistants[{k}].assistant: {a.assistant} is beyond the configuration's "
                       f"execution ids (1..{cfg.max_exec})")
    return bad


def _conts(pairs) -> str:
    return ", ".join(f"{s}#{e}" for s, e in sorted(pairs)) or "none"


def _claim(cfg: M.Config, st: M.State, k: int, c: ClaimExpect) -> list[str]:
    got = st.claim[M.si(cfg, c.session)]
    present = got.phase != "none"
    if present != c.present:
        return [f"expect.claims[{k}]: claim of {c.session} {'present' if c.present else 'absent'}, "
                f"found {'present (' + got.phase + ')' if present else 'absent'}"]
    if present and c.phase is not None and got.phase != c.phase:
        return [f"expect.claims[{k}].phase: {c.phase}, found {got.phase}"]
    if present and c.quarantined is not None and got.quar != c.quarantined:
        return [f"expect.claims[{k}].quarantined: {c.quarantined}, found {got.quar}"]
    reason = I.quarantine_reason(cfg, st, M.si(cfg, c.session))
    if present and c.reason is not None and reason != c.reason:
        return [f"expect.claims[{k}].reason: quarantined as {c.reason}, found {reason or 'not quarantined'}"]
    return []


def _input(st: M.State, k: int, e: InputExpect) -> list[str]:
    got = next((i for i in st.inputs if (i.sess, i.kind, i.src) == (e.session, e.kind, e.src)), None)
    name = f"input {e.session}/{e.kind}#{e.src}"
    if (got is not None) != e.present:
        return [f"expect.inputs[{k}]: {name} {'present' if e.present else 'absent'}, "
                f"found {'present (' + got.state + ')' if got is not None else 'absent'}"]
    if got is not None and e.state is not None and got.state != e.state:
        return [f"expect.inputs[{k}].state: {name} {e.state}, found {got.state}"]
    return []


def check(cfg: M.Config, st: M.State, ex: Expect) -> list[str]:
    """Each failed expectation on state `st` as one line naming its field, expected beside found."""
    bad = []
    for k, e in enumerate(ex.events):
        evs = [ev for ev in st.log if ev.asst == e.assistant and ev.kind == e.kind and e.call in (None, ev.call)]
        of = f" call {e.call}" if e.call is not None else ""
        if len(evs) != e.count:
            bad.append(f"expect.events[{k}]: {e.count} Step.{e.kind}{of} for assistant {e.assistant}, found {len(evs)}")
        elif e.writer is not None and any(ev.node != e.writer for ev in evs):
            bad.append(f"expect.events[{k}].writer: Step.{e.kind} of assistant {e.assistant} written by {e.writer}, "
                       f"found {', '.join(ev.node for ev in evs)}")
    for k, c in enumerate(ex.claims):
        bad += _claim(cfg, st, k, c)
    for k, i in enumerate(ex.inputs):
        bad += _input(st, k, i)
    conts = {(i.sess, i.src) for i in st.inputs if i.kind == "cont"}
    if ex.continuation_ids is not None and conts != {(c.session, c.src) for c in ex.continuation_ids}:
        bad.append(f"expect.continuation_ids: {_conts((c.session, c.src) for c in ex.continuation_ids)}, "
                   f"found {_conts(conts)}")
    for k, a in enumerate(ex.assistants):
        got = I.assistant_outcome(st, a.assistant)
        if got != a.outcome:
            bad.append(f"expect.assistants[{k}].outcome: assistant {a.assistant} {a.outcome}, found {got}")
    if ex.recovery_rows is not None and len(st.recovery) != ex.recovery_rows:
        bad.append(f"expect.recovery_rows: {ex.recovery_rows}, found {len(st.recovery)}")
    n_conts = sum(1 for i in st.inputs if i.kind == "cont")
    if ex.continuations is not None and n_conts != ex.continuations:
        bad.append(f"expect.continuations: {ex.continuations}, found {n_conts}")
    for node, mem in (ex.memory or {}).items():
        if st.run[M.ni(cfg, node)].mem != mem:
            bad.append(f"expect.memory.{node}: publisher memory {mem}, found {st.run[M.ni(cfg, node)].mem}")
    return bad


def premise_held(cfg: M.Config, states, prop: str) -> bool:
    """Some state of `states` satisfies the premise of liveness property `prop` for some Session (the
    `p` of spec.invariants.leads_to's (label, p, q) triples): else the property holds only vacuously."""
    premises = [p for _, p, _ in I.leads_to(prop, cfg)]
    return any(p(st) for st in states for p in premises)

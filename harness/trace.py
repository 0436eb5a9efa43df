"""Trace format v1: a counterexample or a reported race as a JSON file anyone can replay.

A trace names its model configuration, then lists steps as registry action names with their parameters
(by the registry's parameter names), optionally each with the twin state expected after it. Engines
(the explorer, TLC, Apalache, Hypothesis) all write this format; `traces/schema.json` is generated from
these models.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from spec import configs
from spec import model as M
from spec import names as N

from .tlavalue import ParseError, canon_to_twin, to_json, twin_to_canon

FORMAT = "claimcheck-trace"
VERSION = 1


class TraceError(ValueError):
    """A trace file that cannot be used: the message names the file and the field."""


class Meta(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    reported: str | None = Field(None, description="where the race was reported (review note, issue)")
    defect: str | None = Field(None, description="the registry defect this trace reproduces")
    invariants: list[str] = Field(default_factory=list, description="invariants the trace breaks")
    source: str = Field("hand", description="explore | tlc | apalache | fuzz | hand")


class TraceConfig(BaseModel):
    """The twin's constants; `defects` and `assumptions_off` are the switches of the recorded run."""

    model_config = ConfigDict(extra="forbid")
    base: str | None = Field(None, description="the named configuration this was derived from")
    sessions: list[str]
    nodes: list[str]
    recoverers: list[str]
    prompts: int
    max_exec: int
    lease: int
    scan_bound: int
    faults: list[str]
    defects: list[str] = Field(default_factory=list)
    assumptions_off: list[str] = Field(default_factory=list)


BoundaryName = Literal[tuple(N.BOUNDARIES)]
InvariantName = Literal[tuple(N.INVARIANTS)]
EventKind = Literal[N.EVENT_KINDS]


class TraceStep(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: str
    params: dict[str, Any] = Field(default_factory=dict)
    state: dict[str, Any] | None = Field(None, description="the twin state expected after this step")
    boundary: BoundaryName | None = Field(None, description="a named boundary that must fire during this step "
                                                            "(the listener gate the schedule holds)")
    note: str | None = Field(None, description="what this step stands for in the reported race")


class EventCount(BaseModel):
    """How many events of one kind the final log holds for one assistant (= its execution id)."""

    model_config = ConfigDict(extra="forbid")
    assistant: int
    kind: EventKind
    count: int = Field(ge=0)


class ClaimExpect(BaseModel):
    """The final claim of one Session: absent, or present with (optionally) its phase and quarantine."""

    model_config = ConfigDict(extra="forbid")
    session: str
    present: bool
    phase: Literal[N.PHASES[1:]] | None = None
    quarantined: bool | None = None


class Expect(BaseModel):
    """Expectations on the final outcome, checked on the implementation's mapped state after the last step."""

    model_config = ConfigDict(extra="forbid")
    events: list[EventCount] = Field(default_factory=list)
    claims: list[ClaimExpect] = Field(default_factory=list)
    recovery_rows: int | None = Field(None, ge=0, description="session_recovery rows in total")
    continuations: int | None = Field(None, ge=0, description="continuation inputs in total")
    memory: dict[str, int] | None = Field(None, description="publisher memory per node (assistant id, 0 = none)")
    invariants: list[InvariantName] = Field(default_factory=list, description="properties this trace is about: "
                                            "safety on every state, liveness as its goal reached at the end")


class Trace(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal["claimcheck-trace"] = FORMAT
    version: Literal[1] = VERSION
    meta: Meta
    config: TraceConfig
    steps: list[TraceStep]
    expect: Expect | None = None
    loop: int | None = Field(None, description="lasso: the step index the behaviour returns to forever "
                                               "(0 = the initial state)")


# ---------------------------------------------------------------- configuration <-> trace

def config_to_trace(cfg: M.Config, base: str | None = None) -> TraceConfig:
    off = [a for a, f in configs.ASSUMPTION_FIELDS.items() if not getattr(cfg, f)]
    return TraceConfig(base=base, sessions=list(cfg.sessions), nodes=list(cfg.nodes),
                       recoverers=list(cfg.recoverers), prompts=cfg.prompts, max_exec=cfg.max_exec,
                       lease=cfg.lease, scan_bound=cfg.scan_bound, faults=sorted(cfg.faults),
                       defects=sorted(cfg.defects), assumptions_off=off)


def trace_to_config(tc: TraceConfig, defects=None) -> M.Config:
    """The twin configuration of a trace; `defects` (when given) overrides the recorded switches."""
    unknown = set(tc.faults) - set(N.FAULT_KINDS)
    if unknown:
        raise TraceError(f"config.faults: unknown fault {sorted(unknown)[0]!r}")
    try:
        chosen = N.check_defects(tc.defects if defects is None else defects)
    except ValueError as exc:
        raise TraceError(f"config.defects: {exc}") from exc
    off = {}
    for a in tc.assumptions_off:
        if a not in configs.ASSUMPTION_FIELDS:
            raise TraceError(f"config.assumptions_off: unknown assumption {a!r}")
        off[configs.ASSUMPTION_FIELDS[a]] = False
    if set(tc.nodes) & set(tc.recoverers):
        raise TraceError("config: node and recoverer ids must differ")
    return M.Config(sessions=tuple(tc.sessions), nodes=tuple(tc.nodes), recoverers=tuple(tc.recoverers),
                    prompts=tc.prompts, max_exec=tc.max_exec, lease=tc.lease, scan_bound=tc.scan_bound,
                    faults=frozenset(tc.faults), defects=frozenset(chosen), **off)


# ---------------------------------------------------------------- steps <-> twin

def params_to_json(action: str, params: tuple) -> dict[str, Any]:
    names = N.ACTIONS[action].params
    return {k: (v._asdict() if isinstance(v, M.Input) else v) for k, v in zip(names, params)}


def params_from_json(action: str, params: dict[str, Any], where: str) -> tuple:
    if action not in N.ACTIONS:
        raise TraceError(f"{where}.action: unknown action {action!r}")
    names = N.ACTIONS[action].params
    if set(params) != set(names):
        raise TraceError(f"{where}.params: {action} takes {list(names)}, got {sorted(params)}")
    out = []
    for k in names:
        v = params[k]
        if k == "i":
            try:
                v = M.Input(**v)
            except TypeError as exc:
                raise TraceError(f"{where}.params.i: not an input record ({exc})") from exc
        elif k == "e":
            if not isinstance(v, int) or isinstance(v, bool):
                raise TraceError(f"{where}.params.e: expected an execution id (integer)")
        elif not isinstance(v, str):
            raise TraceError(f"{where}.params.{k}: expected a name (string)")
        out.append(v)
    return tuple(out)


def state_to_json(cfg: M.Config, st: M.State) -> dict[str, Any]:
    return to_json(twin_to_canon(cfg, st))


def state_from_json(cfg: M.Config, d: dict[str, Any], where: str) -> M.State:
    try:
        return canon_to_twin(cfg, d)
    except (ParseError, TypeError, ValueError) as exc:
        raise TraceError(f"{where}.state: {exc}") from exc


def from_steps(cfg: M.Config, steps, *, title: str, source: str, base: str | None = None,
               invariants=(), defect: str | None = None, loop: int | None = None,
               reported: str | None = None) -> Trace:
    """A trace from engine steps: each has .action, .params (tuple) and .state; the first is Init."""
    body = [TraceStep(action=s.action, params=params_to_json(s.action, s.params), state=state_to_json(cfg, s.state))
            for s in steps[1:]]
    return Trace(meta=Meta(title=title, reported=reported, defect=defect, invariants=list(invariants),
                           source=source),
                 config=config_to_trace(cfg, base), steps=body, loop=loop)


# ---------------------------------------------------------------- files

def load(path: str | Path) -> Trace:
    p = Path(path)
    try:
        raw = json.loads(p.read_text())
    except FileNotFoundError as exc:
        raise TraceError(f"{p}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"{p}: cannot read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise TraceError(f"{p}: not JSON (line {exc.lineno}: {exc.msg})") from exc
    if isinstance(raw, dict) and raw.get("format") != FORMAT:
        raise TraceError(f"{p}: format: expected {FORMAT!r} (is this an ITF file? use the .itf.json loader)")
    try:
        return Trace.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "(top)"
        raise TraceError(f"{p}: {field}: {err['msg']}") from exc


def save(trace: Trace, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(trace.model_dump_json(indent=2, exclude_none=True) + "\n")
    return p


def found_path(root: str | Path, label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{label}-{stamp}.json"
    k = 1
    while base.exists():
        base = Path(root) / f"{label}-{stamp}-{k}.json"
        k += 1
    return base


def schema() -> dict:
    return Trace.model_json_schema()


# ---------------------------------------------------------------- replay on the twin

def replay_twin(trace: Trace, defects=None, name: str = "trace"):
    """Apply every step to the twin; returns (cfg, states). Raises TraceError at the first step that is
    not enabled, or whose resulting state differs from the recorded one."""
    cfg = trace_to_config(trace.config, defects)
    st = M.init(cfg)
    states = [st]
    for k, step in enumerate(trace.steps, start=1):
        where = f"{name}: steps[{k - 1}]"
        params = params_from_json(step.action, step.params, where)
        nxt = M.apply(cfg, st, step.action, params)
        if nxt is None:
            raise TraceError(f"{where}: {step.action}{params} is not enabled in the twin")
        if step.state is not None and state_from_json(cfg, step.state, where) != nxt:
            raise TraceError(f"{where}: the twin's state after {step.action} differs from the recorded state")
        st = nxt
        states.append(st)
    return cfg, states


def schema_text() -> str:
    """The committed `traces/schema.json` (tests/test_replay.py checks the file is current)."""
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"

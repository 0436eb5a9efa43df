"""Trace format v1: a counterexample or a reported race as a JSON file anyone can replay.

A trace names its model configuration, then lists steps as registry action names with their parameters
(by the registry's parameter names), optionally each with the twin state expected after it. Engines
(the explorer, TLC, Apalache, Hypothesis) all write this format; `traces/schema/trace.schema.json` (`SCHEMA_FILE`)
is generated from these models; it sits in a folder of its own so that `traces/*.json` are the traces.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from spec import configs
from spec import guards
from spec import model as M
from spec import names as N

from harness import registry as R
from harness.traces import stepschema
from harness.traces.expect import Expect, name_problems
from harness.traces.inputfile import InputError, TraceError, json_type, read_json, short, validation_error  # noqa: F401
from harness.traces.params import check_param_names, params_from_json, params_to_json  # noqa: F401 - a step's params
from harness.traces.tlavalue import ParseError, ShapeError, canon_to_twin, to_json, twin_to_canon

FORMAT = "claimcheck-trace"
VERSION = 1


BoundaryName = Literal[tuple(N.BOUNDARIES)]
InvariantName = Literal[tuple(N.INVARIANTS)]
ActionName = Literal[tuple(N.ACTIONS)]
DefectName = Literal[tuple(N.DEFECTS)]
FaultKind = Literal[tuple(N.FAULT_KINDS)]
AssumptionName = Literal[tuple(configs.ASSUMPTION_FIELDS)]

# sanity limits on a configuration's constants (against a file that would exhaust memory or time before
# any check runs), far beyond what a model checker finishes: raise them here if you really need more
MAX_NAMES, MAX_PROMPTS, MAX_EXEC, MAX_LEASE, MAX_SCAN = 64, 1_000, 100_000, 10_000, 10_000
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _name(v: str) -> str:
    if not _NAME.fullmatch(v):
        raise ValueError(f"{short(v)} is not a name (1 to 64 letters, digits, '_', '.' or '-', "
                         "starting with a letter or digit)")
    return v


def _unique(v: list) -> list:
    seen = set()
    for x in v:
        if x in seen:
            raise ValueError(f"{short(x)} is listed twice")
        seen.add(x)
    return v


Name = Annotated[str, AfterValidator(_name)]
Names = Annotated[list[Name], AfterValidator(_unique)]


class Meta(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    title: str
    reported: str | None = Field(None, description="where the race was reported (review note, issue)")
    defect: DefectName | None = Field(None, description="the registry defect this trace reproduces")
    invariants: list[InvariantName] = Field(default_factory=list, description="invariants the trace breaks")
    source: str = Field("hand", description="explore | tlc | apalache | fuzz | conform | hand")


class TraceConfig(BaseModel):
    """The twin's constants; `defects` and `assumptions_off` are the switches of the recorded run. A
    configuration file (`claimcheck check --config FILE.json`) is this object on its own."""

    model_config = ConfigDict(extra="forbid", strict=True)
    base: Name | None = Field(None, description="a label: the named configuration (or file) this was derived from")
    sessions: Names = Field(min_length=1, max_length=MAX_NAMES)
    nodes: Names = Field(min_length=1, max_length=MAX_NAMES)
    recoverers: Names = Field(max_length=MAX_NAMES, description="recovery workers (owner ids of their own)")
    prompts: int = Field(ge=0, le=MAX_PROMPTS, description="prompts admitted per Session at Init")
    max_exec: int = Field(ge=1, le=MAX_EXEC, description="execution ids are 1..max_exec")
    max_steps: int | None = Field(None, ge=1, le=MAX_LEASE,
                                  description="Steps per execution, one assistant each (MaxSteps); absent: 1")
    tools: int | None = Field(None, ge=0, le=2,
                              description="local tool calls per Step (Tools: 0, 1 or 2); absent: 0")
    hosted: int | None = Field(None, ge=0, le=1, description="each Step's provider call also runs one hosted "
                               "tool, call index tools + 1 (Hosted: 0 or 1); absent: 0")
    fragments: int | None = Field(None, ge=0, le=1, description="a provider stream may open a partial fragment "
                                  "before its Step's Step.Started (Fragments: 0 or 1); absent: 0")
    lease: int = Field(ge=1, le=MAX_LEASE, description="ticks a fresh lease lives")
    scan_bound: int = Field(ge=1, le=MAX_SCAN, description="rows a recovery scan looks at")
    grace: int = Field(1, ge=0, le=MAX_LEASE,
                       description="ticks an expired claim waits before recovery may take it over (Grace)")
    supervision_lag: int = Field(1, ge=1, le=MAX_LEASE,
                                 description="a node supervises its actors before this many ticks pass after "
                                             "their claim expired or changed (SupervisionLag)")
    max_tries: int = Field(2, ge=1, le=MAX_LEASE,
                           description="recovery takeovers of one claim before a conversion that lost its lease "
                                       "quarantines it, exhausted (MaxTries)")
    faults: Annotated[list[FaultKind], AfterValidator(_unique)]
    admission: bool | None = Field(None, description="prompts are admitted by Admit, held until an exact retry or "
                                                     "a resume requests them (Admission); absent: false")
    steering: bool | None = Field(None, description="a running execution steers pending inputs into itself "
                                                    "(Steering); absent: false")
    delivery_kinds: bool | None = Field(None, description="inputs carry their delivery kind (DeliveryKinds)")
    steer_prompts: list[Annotated[int, Field(ge=1, le=MAX_PROMPTS)]] | None = Field(
        None, description="prompts admitted with steer delivery (SteerPrompts); absent: none")
    left_claims: Names | None = Field(None, max_length=MAX_NAMES, description="Sessions whose claim earlier processes left at Init, a poison row each (LeftClaims); absent: none")
    defects: Annotated[list[DefectName], AfterValidator(_unique)] = Field(default_factory=list)
    assumptions_off: Annotated[list[AssumptionName], AfterValidator(_unique)] = Field(default_factory=list)
    wake_rows: int | None = Field(None, ge=0, le=MAX_PROMPTS,
                                  description="wake rows the wake scans plan over (WakeRows); absent: 0, wake "
                                              "scans not modelled")
    wake_batch: int | None = Field(None, ge=0, le=MAX_SCAN,
                                   description="rows one wake scan reserves at most (WakeBatch, at least 2); "
                                               "absent: 2")
    fresh_share: int | None = Field(None, ge=0, le=MAX_SCAN,
                                    description="slots of a wake batch fresh rows take first (FreshShare, "
                                                "1..wake_batch-1); absent: 1")
    max_wake_tries: int | None = Field(None, ge=1, le=MAX_LEASE,
                                       description="a wake row's counter rotates from this back to 1 "
                                                   "(MaxWakeTries); absent: 2")
    wakers: int | None = Field(None, ge=1, le=MAX_SCAN,
                               description="wakers racing their reads and reservations of the wake rows (Wakers; "
                                           "more than 1 needs wake rows); absent: 1, one scan transaction")
    wakes_tied: bool | None = Field(None, description="wake rows tied to the work they wake (WakesTied; one Session, "
                                                      "wake_rows 2: its ordinary and its recovery wake); absent: false")

    @field_validator("recoverers")
    @classmethod
    def _own_ids(cls, v: list[str], info: ValidationInfo) -> list[str]:
        both = [r for r in v if r in (info.data.get("nodes") or ())]
        if both:
            raise ValueError(f"{short(both[0])} is also a node; recovery workers need owner ids of their own")
        return v


class TraceStep(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: str
    params: dict[str, Any] = Field(default_factory=dict)
    state: dict[str, Any] | None = Field(None, description="the twin state expected after this step")
    boundary: BoundaryName | None = Field(None, description="a named boundary that must fire during this step "
                                                            "(the listener gate the schedule holds)")
    note: str | None = Field(None, description="what this step stands for in the reported race")
    refused: bool = Field(False, description="a step the twin does not enable. An attempt (a lockstep refusal "
                                             "probe): the implementation must refuse it, its state staying the "
                                             "twin's. An actor's own step: the actor, asked to move, does not "
                                             "take it; it takes none, or the one the twin enables for it. An "
                                             "environment or fault action: the twin alone is checked")
    instead: ActionName | None = Field(None, description="with refused, on an actor's own step: the action the "
                                                         "actor must take in its place (one the twin enables for "
                                                         "it); absent, it may take none or that one, and tools "
                                                         "that run the twin alone take it to take none")


class Trace(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    format: Literal["claimcheck-trace"] = FORMAT
    version: Literal[1] = VERSION
    meta: Meta
    config: TraceConfig
    steps: list[TraceStep]
    mutant: Annotated[list[DefectName], AfterValidator(_unique)] = Field(
        default_factory=list, description="defects switched on in the implementation only (the twin keeps "
                                          "config.defects): a mutation-testing run")
    expect: Expect | None = None
    loop: int | None = Field(None, ge=0, description="lasso: the step index the behaviour returns to forever "
                                               "(0 = the initial state)")


# ---------------------------------------------------------------- configuration <-> trace

def config_to_trace(cfg: M.Config, base: str | None = None) -> TraceConfig:
    off = [a for a, f in configs.ASSUMPTION_FIELDS.items() if not getattr(cfg, f)]
    return TraceConfig(base=base, sessions=list(cfg.sessions), nodes=list(cfg.nodes),
                       recoverers=list(cfg.recoverers), prompts=cfg.prompts, max_exec=cfg.max_exec,
                       max_steps=None if cfg.max_steps == 1 else cfg.max_steps, tools=cfg.tools or None,
                       hosted=cfg.hosted or None, fragments=cfg.fragments or None, lease=cfg.lease, scan_bound=cfg.scan_bound, grace=cfg.grace,
                       supervision_lag=cfg.supervision_lag, max_tries=cfg.max_tries, faults=sorted(cfg.faults),
                       admission=cfg.admission or None, steering=cfg.steering or None, delivery_kinds=cfg.delivery_kinds
                       or None, steer_prompts=sorted(cfg.steer_prompts) or None, defects=sorted(cfg.defects),
                       left_claims=[x for x in cfg.sessions if x in cfg.left_claims] or None, assumptions_off=off, **_wake_fields(cfg))


_WAKE_DEFAULTS = {"wake_rows": 0, "wake_batch": 2, "fresh_share": 1, "max_wake_tries": 2}  # trace_to_config's


def _wake_fields(cfg: M.Config) -> dict:
    """The wake constants a trace writes: all four with wake rows, else those that differ from the default
    (so a configuration round-trips whole, even one whose wake constants nothing reads)."""
    wakers = {"wakers": cfg.wakers} if cfg.wakers != 1 else {}  # (absent with one waker, as before)
    wakers |= {"wakes_tied": True} if cfg.wakes_tied else {}  # (absent untied, as before)
    if cfg.wake_rows:
        return {k: getattr(cfg, k) for k in _WAKE_DEFAULTS} | wakers
    return {k: getattr(cfg, k) for k, default in _WAKE_DEFAULTS.items() if getattr(cfg, k) != default} | wakers


def config_of(trace: "Trace", defects=None, name: str = "trace") -> M.Config:
    """trace_to_config of a whole trace, its errors naming the trace."""
    try:
        return trace_to_config(trace.config, defects)
    except TraceError as exc:
        raise TraceError(f"{name}: {exc}") from None


def trace_to_config(tc: TraceConfig, defects=None, prefix: str = "config.") -> M.Config:
    """The twin configuration of a trace; `defects` (when given) overrides the recorded switches. The
    model has validated every field; this re-checks the switches (a model built with model_construct)."""
    unknown = set(tc.faults) - set(N.FAULT_KINDS)
    if unknown:
        raise TraceError(f"{prefix}faults: unknown fault {sorted(unknown)[0]!r}")
    try:
        chosen = N.check_defects(tc.defects if defects is None else defects)
    except ValueError as exc:
        raise TraceError(f"{prefix}defects: {exc}") from exc
    off = {}
    for a in tc.assumptions_off:
        if a not in configs.ASSUMPTION_FIELDS:
            raise TraceError(f"{prefix}assumptions_off: unknown assumption {a!r}")
        off[configs.ASSUMPTION_FIELDS[a]] = False
    if set(tc.nodes) & set(tc.recoverers):
        raise TraceError(f"{prefix}recoverers: node and recoverer ids must differ")
    wake = dict(wake_rows=tc.wake_rows or 0, wake_batch=2 if tc.wake_batch is None else tc.wake_batch,
                fresh_share=1 if tc.fresh_share is None else tc.fresh_share, max_wake_tries=tc.max_wake_tries or 2,
                wakers=tc.wakers or 1, wakes_tied=bool(tc.wakes_tied))
    try:  # the constants it refuses (spec.config: wake_constants_problem, left_claims_problem) name their field first
        return M.Config(**wake, sessions=tuple(tc.sessions), nodes=tuple(tc.nodes), recoverers=tuple(tc.recoverers),
                        prompts=tc.prompts, max_exec=tc.max_exec, max_steps=tc.max_steps or 1, tools=tc.tools or 0,
                        hosted=tc.hosted or 0, fragments=tc.fragments or 0, lease=tc.lease, scan_bound=tc.scan_bound, grace=tc.grace,
                        supervision_lag=tc.supervision_lag, max_tries=tc.max_tries, faults=frozenset(tc.faults),
                        admission=bool(tc.admission), steering=bool(tc.steering), delivery_kinds=bool(tc.delivery_kinds),
                        steer_prompts=frozenset(tc.steer_prompts or ()), left_claims=frozenset(tc.left_claims or ()),
                        defects=frozenset(chosen), **off)
    except ValueError as exc:
        raise TraceError(f"{prefix}{str(exc).split(' ', 1)[0]}: {exc}") from None


# ---------------------------------------------------------------- steps <-> twin

def check_steps(trace: "Trace", cfg: M.Config, name: str) -> list[tuple]:
    """Validate every step (its action, parameters and recorded state) and the names `expect` and `loop`
    use, so a malformed trace fails before anything runs; returns each step's parameters."""
    out = []
    for k, step in enumerate(trace.steps):
        where = f"{name}: steps[{k}]"
        params = params_from_json(step.action, step.params, where)
        check_param_names(cfg, step.action, params, where)
        if step.state is not None:
            state_from_json(cfg, step.state, where)
        if step.instead is not None:
            _check_instead(step, f"{where}.instead")
        out.append(params)
    bad = name_problems(cfg, trace.expect) if trace.expect else []
    if bad:
        raise TraceError(f"{name}: {bad[0]}")
    if trace.loop is not None and not 0 <= trace.loop <= len(trace.steps):
        raise TraceError(f"{name}: loop: {trace.loop} is outside 0..{len(trace.steps)}")
    return out


def _check_instead(step: "TraceStep", where: str) -> None:
    actor = N.ACTIONS[step.action].actor
    if not step.refused:
        raise TraceError(f"{where}: only a refused step names what the actor takes instead")
    if step.action in N.ATTEMPTS or actor not in N.STEPPING_ACTORS:
        raise TraceError(f"{where}: {step.action} is not an actor's own step (an attempt, or the environment's); "
                         "nothing takes anything instead")
    if N.ACTIONS[step.instead].actor != actor:
        raise TraceError(f"{where}: {step.instead} is not a step of the {actor} that {step.action} belongs to")


def actor_moves(cfg: M.Config, st: M.State, action: str, who: str) -> list[tuple[str, tuple, M.State]]:
    """What the twin enables for the actor of `action` (its kind, names.ACTIONS[action].actor) named
    `who`: (action, params, next state) for each enabled instance of that actor's actions."""
    kind = N.ACTIONS[action].actor
    return [(a, p, nx) for a, p, nx in M.successors(cfg, st) if N.ACTIONS[a].actor == kind and p and p[0] == who]


def refused_next(cfg: M.Config, st: M.State, step: "TraceStep", params: tuple, where: str) -> M.State:
    """The twin's state after a refused step (the twin enables none of it): `st` unchanged, or, when the
    step names what the actor takes instead, the successor of that action for that actor (a TraceError
    when the twin does not enable exactly one such instance)."""
    if step.instead is None:
        return st
    moves = [m for m in actor_moves(cfg, st, step.action, params[0]) if m[0] == step.instead]
    if len(moves) != 1:
        enabled = ", ".join(f"{a}({', '.join(map(str, p))})" for a, p, _ in actor_moves(cfg, st, step.action, params[0]))
        what = "several instances" if moves else "no instance"
        raise TraceError(f"{where}.instead: the twin enables {what} of {step.instead} for {params[0]} here "
                         f"(it enables: {enabled or 'nothing'})")
    return moves[0][2]


def state_to_json(cfg: M.Config, st: M.State) -> dict[str, Any]:
    d = twin_to_canon(cfg, st)
    if cfg.wakers <= 1:  # one waker has no memory between a read and a reservation (states as before)
        del d["waker"]
    # an input's flaw only when it has one (a forged continuation row's: ForgeContinuation; states as before)
    d["inputs"] = type(d["inputs"])({k: v for k, v in x.items() if k != "flaw" or v} for x in d["inputs"])
    return to_json(d)


def state_from_json(cfg: M.Config, d: dict[str, Any], where: str) -> M.State:
    try:
        return canon_to_twin(cfg, d)
    except ShapeError as exc:
        raise TraceError(f"{where}.state.{exc.field}: {exc.reason}" if exc.field else f"{where}.state: {exc.reason}") \
            from None
    except (ParseError, TypeError, ValueError, OverflowError) as exc:
        raise TraceError(f"{where}.state: {exc}") from None


def from_steps(cfg: M.Config, steps, *, title: str, source: str, base: str | None = None,
               invariants=(), defect: str | None = None, loop: int | None = None,
               reported: str | None = None, refused: tuple | None = None, mutant=()) -> Trace:
    """A trace from engine steps: each has .action, .params (tuple) and .state; the first is Init.
    `refused` (action, params) ends it with an attempt the twin does not enable."""
    body = [TraceStep(action=s.action, params=params_to_json(s.action, s.params), state=state_to_json(cfg, s.state))
            for s in steps[1:]]
    if refused is not None:
        body.append(TraceStep(action=refused[0], params=params_to_json(*refused), refused=True))
    return Trace(meta=Meta(title=title, reported=reported, defect=defect, invariants=list(invariants),
                           source=source),
                 config=config_to_trace(cfg, base), steps=body, loop=loop, mutant=sorted(mutant))


# ---------------------------------------------------------------- files

def load(path: str | Path, *, check: bool = True) -> Trace:
    """A trace file, validated field by field and (with `check`) against the registry and its own
    configuration (actions, parameters, names, recorded states, loop). Any problem is a TraceError,
    one line: `<file>: <field path>: <reason>`."""
    p = Path(path)
    raw = read_json(p, TraceError)
    if not isinstance(raw, dict):
        raise TraceError(f"{p}: (top): expected a trace object, got {type(raw).__name__}")
    if raw.get("format") != FORMAT:
        hint = " (an ITF file? use `claimcheck itf import`)" if "states" in raw or "#meta" in raw else ""
        raise TraceError(f"{p}: format: expected {FORMAT!r}, got {short(raw.get('format'))}{hint}")
    try:
        trace = Trace.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, str(p), error=TraceError) from None
    if check:
        check_steps(trace, config_of(trace, name=str(p)), str(p))
    return trace


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


SCHEMA_FILE = Path(__file__).resolve().parents[2] / "traces" / "schema" / "trace.schema.json"


def schema() -> dict:
    """The trace JSON Schema: the models' own, with each step's action and parameters from the registry
    (harness.traces.stepschema)."""
    out = Trace.model_json_schema()
    out["$defs"]["TraceStep"] = stepschema.refine_step(out["$defs"]["TraceStep"])
    out["$defs"].update(stepschema.defs())
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return out


# ---------------------------------------------------------------- replay on the twin

def replay_twin(trace: Trace, defects=None, name: str = "trace"):
    """Apply every step to the twin; returns (cfg, states). Raises TraceError at the first step that is
    not enabled, or whose resulting state differs from the recorded one."""
    cfg = config_of(trace, defects, name)
    st = M.init(cfg)
    states = [st]
    for k, step in enumerate(trace.steps, start=1):
        where = f"{name}: steps[{k - 1}]"
        params = params_from_json(step.action, step.params, where)
        check_param_names(cfg, step.action, params, where)
        nxt = M.apply(cfg, st, step.action, params)
        if step.refused:
            if nxt is not None:
                raise TraceError(f"{where}: {step.action}{params} is marked refused but the twin enables it")
            st = refused_next(cfg, st, step, params, where)
            states.append(st)
            continue
        if nxt is None:
            raise TraceError(f"{where}: {guards.explain(cfg, st, step.action, params)}")
        if step.state is not None and state_from_json(cfg, step.state, where) != nxt:
            raise TraceError(f"{where}: the twin's state after {step.action} differs from the recorded state")
        st = nxt
        states.append(st)
    return cfg, states


def check_enabled(trace: "Trace", cfg: M.Config, all_params: list[tuple], name: str) -> None:
    """A step the twin does not enable, under the trace's own switches, is bad input: a TraceError naming
    the step, the failing conjunct of its guard and what the twin enables there (spec.guards). Walks the
    twin up to the first recorded state that differs (replay reports that one itself)."""
    st = M.init(cfg)
    hint = ""
    for k, (step, params) in enumerate(zip(trace.steps, all_params)):
        nxt = M.apply(cfg, st, step.action, params)
        if step.refused:
            if nxt is not None:
                return  # replay reports a refused step the twin enables
            st = refused_next(cfg, st, step, params, f"{name}: steps[{k}]")
            if step.instead is None and step.action not in N.ATTEMPTS and N.ACTIONS[step.action].actor in N.STEPPING_ACTORS:
                hint = (f" (after steps[{k}], refused without `instead`, the twin takes {params[0]} to have taken "
                        "no step; name the action it takes with `instead`)")
            continue
        if nxt is None:
            raise TraceError(f"{name}: steps[{k}]: {guards.explain(cfg, st, step.action, params)}{hint}")
        if step.state is not None and state_from_json(cfg, step.state, f"{name}: steps[{k}]") != nxt:
            return
        st = nxt


def schema_text() -> str:
    """The text of the committed `SCHEMA_FILE` (tests/conformance/test_replay.py checks the file is current)."""
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"

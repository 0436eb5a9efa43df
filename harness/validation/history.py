"""History format v1: what an implementation logs, one JSON line per committed write transaction, for
`claimcheck validate` (harness/validation/search.py). docs/history.md documents it; docs/history.schema.json
(`SCHEMA_FILE`) is generated from these models (tests/validation/test_history_schema.py keeps it current).

A file is JSON lines. The first line may be a `Header` (`"format": "claimcheck-history"`), which may carry
the twin configuration the run used; every other line is a `Commit`: who committed (`actor`), as which
registry action with which parameters (`action`, `params`, exactly as a trace step writes them), the
clock reading in ticks (`now`), the durable rows the transaction wrote in the twin's vocabulary
(`writes`: one key per durable variable of the twin, only the ones it wrote) and, optionally, the
committing actors' memory before the step (`memory`). Everything is plain JSON objects with named fields,
so any language can write it with its standard JSON library.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from spec import model as M
from spec import names as N

from harness import registry as R
from harness.traces import stepschema
from harness.traces import trace as T
from harness.traces.inputfile import InputError, short, validation_error

FORMAT = "claimcheck-history"
VERSION = 1
MAX_LINE = 4 * 2 ** 20  # a longer line is refused (a log line is a few hundred bytes)


class HistoryError(InputError):
    """A history that cannot be read: one line, `<file>: line <L>: <field>: <reason>`."""


_STRICT = ConfigDict(extra="forbid", strict=True)


class ClaimRow(BaseModel):
    """A Session's execution claim after the commit (the twin's `claim[s]`)."""
    model_config = _STRICT
    exec: int = Field(ge=1, description="the claimed execution id")
    owner: str = Field(description="the owner id the claim names (a node or a recovery worker)")
    ttl: int = Field(description="ticks left on the lease at this commit's clock reading (lease_expires_at - now); "
                                 "0 or less: expired (values below -Grace read as -Grace)")
    phase: Literal[tuple(p for p in N.PHASES if p != "none")]
    asst: int = Field(0, ge=0, description="the latest Step's assistant (Asst(e, k) = (e - 1) * MaxSteps + k); 0: none")
    quar: bool = Field(False, description="the recovery error is set (quarantined)")
    tries: int = Field(0, ge=0, description="recovery takeovers of this claim so far (counted up to MaxTries)")
    why: Literal[("",) + tuple(N.QUARANTINE_REASONS)] = Field("", description="the quarantine's reason; '' when not quarantined")


class EventRow(BaseModel):
    """One event the commit appended to the Session's event log (the twin's `log`)."""
    model_config = _STRICT
    sess: str
    kind: Literal[tuple(N.LOG_KINDS)]
    asst: int = Field(description="the assistant it names (a PromptExecutionRequested: its prompt's number)")
    node: str = Field(description="the claim identity (owner id) it was written under; '' for none")
    call: int = Field(0, ge=0, description="a tool event's call index in its Step (1, 2, ...); 0 (or absent) for "
                                           "every other event")


class RecoveryRow(BaseModel):
    """A session_recovery row the commit inserted (the twin's `recovery`), or an execution recorded cancelled
    (the twin's `cancelled`)."""
    model_config = _STRICT
    exec: int
    sess: str


class InputRow(BaseModel):
    """An input the commit admitted or whose state it changed, as it is after the commit (the twin's `inputs`)."""
    model_config = _STRICT
    sess: str
    kind: Literal[tuple(N.INPUT_KINDS)]
    src: int = Field(description="the prompt number, or the execution a continuation recovers")
    state: Literal[tuple(N.INPUT_STATES)]
    gen: int = Field(0, ge=0, description="a continuation's id beyond Session and execution (0: derived from them)")
    flaw: Literal[("",) + N.CONTINUATION_FLAWS] = Field(
        "", description="a forged continuation row's one flaw (spec/README.md decision 28; absent: none)")


class WakeRow(BaseModel):
    """One wake row (the twin's `wakes[w]`, oldest first)."""
    model_config = _STRICT
    work: bool
    tries: int = Field(ge=0)
    woken: Literal[tuple(N.WAKE_RESERVATIONS)]
    turned: bool = Field(False, description="woken in the current round of retries (absent: false)")


class Writes(BaseModel):
    """The durable rows one commit wrote, named by the twin's durable variables. A key left out: the commit
    wrote nothing there."""
    model_config = _STRICT
    claim: dict[str, ClaimRow | None] = Field(
        default_factory=dict, description="Session -> its claim row after the commit, for every claim the commit "
                                          "inserted, updated or deleted (null: deleted); every other claim is unchanged")
    nextExec: int | None = Field(None, ge=1, description="the next fresh execution id after the commit "
                                                         "(optional; give it when the commit minted one)")
    log: list[EventRow] = Field(default_factory=list, description="the events appended, in log order")
    recovery: list[RecoveryRow] = Field(default_factory=list, description="session_recovery rows inserted")
    inputs: list[InputRow] = Field(default_factory=list, description="inputs admitted or changed, as after the commit")
    cancelled: list[RecoveryRow] = Field(default_factory=list,
                                         description="executions recorded cancelled (their claim removed)")
    wakes: list[WakeRow] | None = Field(None, description="the whole wake-row table after the commit, when it changed it")


class RunnerMemory(BaseModel):
    model_config = _STRICT
    pc: str
    sess: str | None = None
    exec: int | None = None
    mem: int | None = None
    active: bool | None = None
    intr: bool | None = None
    ordinal: int | None = None
    tool: int | None = None


class FinMemory(BaseModel):
    model_config = _STRICT
    pc: str
    sess: str | None = None
    exec: int | None = None
    owner: str | None = None


class RecMemory(BaseModel):
    model_config = _STRICT
    pc: str
    sess: str | None = None
    exec: int | None = None
    seen: str | None = None
    why: str | None = None


class PlanRow(BaseModel):
    """A row a waker's read planned (the twin's Plan): the row, the counter it observed, the batch slot."""
    model_config = _STRICT
    row: int = Field(ge=1)
    tries: int = Field(ge=0)
    slot: Literal[tuple(x for x in N.WAKE_RESERVATIONS if x)]


class Memory(BaseModel):
    """The committing process's actors' in-memory records *before* the step (the twin's `run`, `fin`, `rec`
    entries by actor name, and `wake`: racing waker k's plan by "k", the rows its read planned and its
    reservation has not spent, [] for none); a field left out is not compared."""
    model_config = _STRICT
    run: dict[str, RunnerMemory] = Field(default_factory=dict)
    fin: dict[str, FinMemory] = Field(default_factory=dict)
    rec: dict[str, RecMemory] = Field(default_factory=dict)
    wake: dict[str, list[PlanRow]] = Field(default_factory=dict)


class Header(BaseModel):
    """The optional first line."""
    model_config = _STRICT
    format: Literal["claimcheck-history"]
    version: Literal[1]
    config: T.TraceConfig | None = Field(None, description="the twin configuration of the run (what --config gives)")
    source: str | None = Field(None, description="what wrote the history (an implementation, a converter)")


class Commit(BaseModel):
    """One committed write transaction."""
    model_config = _STRICT
    seq: int | None = Field(None, ge=1, description="the implementation's own commit number, when it has one "
                                                    "(informative: the file's order is the commit order)")
    actor: str = Field(description="who committed: a node, a recovery worker, or 'environment'")
    process: str | None = Field(None, description="the process (incarnation) that committed, whose clock `now` was "
                                                  "read from; absent: the actor's")
    action: str = Field(description="the registry action (spec/names.py) the transaction is")
    params: dict[str, Any] = Field(default_factory=dict, description="its parameters by the registry's letters")
    now: int | None = Field(None, description="the clock reading (ticks) the step used for its lease decisions; "
                                              "absent: a step that reads no clock (no tick is taken before it); in a "
                                              "log with no reading at all, any number of ticks may pass between lines")
    writes: Writes = Field(default_factory=Writes)
    memory: Memory | None = Field(None, description="the committing actors' memory before the step (optional)")


# ---------------------------------------------------------------- typed lines

class Line:
    """A commit line read as twin values."""
    __slots__ = ("number", "commit", "params", "claims", "log", "recovery", "inputs", "cancelled", "wakes", "memory",
                 "action", "now", "process", "nothing", "checks", "plans", "window_read")

    def __init__(self, number: int, commit: Commit, cfg: M.Config, where: str):
        self.number = number
        self.commit = commit
        # read at every state a search visits: plain attributes, not the model's fields
        self.action, self.now, self.process = commit.action, commit.now, commit.process or commit.actor
        w = commit.writes
        self.nothing = not (w.claim or w.log or w.recovery or w.inputs or w.cancelled or w.wakes is not None)
        self.params = T.params_from_json(commit.action, commit.params, where)
        T.check_param_names(cfg, commit.action, self.params, where)
        w = commit.writes
        for s in w.claim:
            if s not in cfg.sessions:
                raise HistoryError(f"{where}.writes.claim: {short(s)} is not a configured Session")
        self.claims = {s: (M.NO_CLAIM if c is None else M.Claim(c.exec, c.owner, max(c.ttl, -cfg.eff_grace),
                                                                 c.phase, c.asst, c.quar, min(c.tries, cfg.max_tries),
                                                                 c.why))
                       for s, c in w.claim.items()}
        self.log = tuple(M.Event(e.sess, e.kind, e.asst, e.node, e.call) for e in w.log)
        self.recovery = frozenset(M.RecRow(r.exec, r.sess) for r in w.recovery)
        self.inputs = frozenset(M.Input(i.sess, i.kind, i.src, i.state, i.gen, i.flaw) for i in w.inputs)
        self.cancelled = frozenset(M.RecRow(r.exec, r.sess) for r in w.cancelled)
        self.wakes = None if w.wakes is None else tuple(M.Wake(x.work, x.tries, x.woken, x.turned) for x in w.wakes)
        if self.wakes is not None and len(self.wakes) != cfg.wake_rows:
            raise HistoryError(f"{where}.writes.wakes: {len(self.wakes)} rows, the configuration has "
                               f"{cfg.wake_rows} (WakeRows)")
        self.memory = commit.memory
        if self.memory is not None:
            for kind, names in (("run", cfg.nodes), ("fin", cfg.nodes), ("rec", cfg.recoverers)):
                for who in getattr(self.memory, kind):
                    if who not in names:
                        raise HistoryError(f"{where}.memory.{kind}: {short(who)} is not in the configuration "
                                           f"({', '.join(names)})")
            for k in self.memory.wake:
                if not (k.isdigit() and 1 <= int(k) <= cfg.wakers and cfg.wakers > 1):
                    raise HistoryError(f"{where}.memory.wake: {short(k)} is not a racing waker of the configuration "
                                       f"(Wakers = {cfg.wakers}: 1..Wakers when more than 1)")
        # a recorded waker's plan: (waker index, the twin's plan) compared at every state (search.step)
        self.plans = () if self.memory is None else tuple(
            (int(k) - 1, frozenset(M.Plan(p.row, p.tries, p.slot) for p in v)) for k, v in self.memory.wake.items())
        # the recorded memory as (State field, actor, record field, value) positions: what the search compares at
        # every state (search.memory_differences says which differ, for the report)
        self.checks = () if self.memory is None else tuple(
            (M.State._fields.index(kind), names.index(who), fields.index(f), v)
            for kind, names, fields in (("run", cfg.nodes, M.Runner._fields), ("fin", cfg.nodes, M.Fin._fields),
                                        ("rec", cfg.recoverers, M.Rec._fields))
            for who, rec in getattr(self.memory, kind).items()
            for f in fields for v in [getattr(rec, f, None)] if v is not None)
        self.window_read = None  # set by `typed` (`window_reads`): a lost race on an earlier read of the window

    def wrote_nothing(self) -> bool:
        return self.nothing


def parse_line(text: str, number: int, name: str, mapping=None):
    """A Header or a Commit from one line's text (HistoryError naming the line); `mapping`
    (harness/validation/mapping.py) renames a server's own names to the format's first."""
    where = f"{name}: line {number}"
    if len(text) > MAX_LINE:
        raise HistoryError(f"{where}: longer than {MAX_LINE} bytes")
    try:
        raw = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise HistoryError(f"{where}: not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise HistoryError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    if mapping is not None and "format" not in raw:
        raw = mapping.apply(raw)
    model = Header if "format" in raw else Commit
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, where, error=HistoryError) from None


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def read(path: str | Path, mapping=None) -> tuple[Header | None, list[tuple[int, Commit]]]:
    """The header (None: the file has none) and the commit lines with their line numbers (blank lines are
    skipped). Any problem is a HistoryError naming the file and the line."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise HistoryError(f"{p}: cannot read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HistoryError(f"{p}: not UTF-8 (byte {exc.start})") from None
    header, commits = None, []
    for k, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        got = parse_line(line, k, str(p), mapping)
        if isinstance(got, Header):
            if commits or header is not None:
                raise HistoryError(f"{p}: line {k}: a header must be the first line")
            header = got
        else:
            commits.append((k, got))
    return header, commits


def typed(cfg: M.Config, commits: list[tuple[int, Commit]], name: str) -> list[Line]:
    """The commit lines as twin values, checked against the configuration (names, parameters)."""
    out = []
    for number, c in commits:
        where = f"{name}: line {number}"
        try:
            out.append(Line(number, c, cfg, where))
        except (T.TraceError, HistoryError) as exc:  # `<file>: line N.params.n: ...` -> `<file>: line N: params.n: ...`
            raise HistoryError(str(exc).replace(f"line {number}.", f"line {number}: ", 1)) from None
    window_reads(cfg, out)
    return out


def window_reads(cfg: M.Config, lines: list[Line]) -> None:
    """Mark each lost race that may be on an earlier read of its worker's window (`Line.window_read`).

    The code's production pass reads the window once and tries its rows in turn; the twin's worker remembers
    one row (spec/README.md decision 6), so a later row's compare-and-swap compares on a read older than the
    worker's own work on the rows before it (docs/history.md, "The production pass's window"; search.py,
    `Search.window_read`). A line is marked when it is a RecoveryTakeover that wrote nothing (a lost race),
    its worker's recorded memory is `scanned` (Session, execution, former owner), the same process recorded
    an earlier `scanned` of that worker (the pass's earlier row, `P`: the window was read before P's
    compare-and-swap, at a reading at most P's), and the recorded row was first written before P, its
    lease run out for Grace at P's reading (an earlier line wrote that identity at reading t with ttl d, and
    t + d + Grace <= P's reading): the row was eligible at a reading of the process before P. Set to
    (worker index, Session index, execution, former owner, the line's other memory checks)."""
    expiry: dict = {}  # (Session, execution, owner) -> (the first line that wrote it, the latest lease expiry written)
    scanned: dict = {}  # (worker, process) -> (its latest recorded `scanned`'s reading, that line's index)
    rec_field = M.State._fields.index("rec")
    for k, line in enumerate(lines):
        line.window_read = None
        rec = line.memory.rec if line.memory is not None else {}
        if line.action == R.RECOVERY_TAKEOVER and line.nothing and line.params[0] in rec:
            who = line.params[0]
            w = rec[who]
            p = scanned.get((who, line.process))
            row = expiry.get((w.sess, w.exec, w.seen))
            if w.pc == "scanned" and p is not None and row is not None and row[0] < p[1] \
                    and row[1] + cfg.eff_grace <= p[0]:
                r = cfg.recoverers.index(who)
                line.window_read = (r, cfg.sessions.index(w.sess), w.exec, w.seen,
                                    tuple(c for c in line.checks if (c[0], c[1]) != (rec_field, r)))
        for who, w in rec.items():
            if w.pc == "scanned" and line.now is not None:
                scanned[(who, line.process)] = (line.now, k)
        if line.now is not None:
            for s, c in line.claims.items():
                if c != M.NO_CLAIM:
                    first = expiry.get((s, c.exec, c.owner), (k,))[0]
                    expiry[(s, c.exec, c.owner)] = (first, line.now + c.ttl)


def dumps(model: BaseModel) -> str:
    """One line of a history file."""
    return model.model_dump_json(exclude_none=True, exclude_defaults=True) if isinstance(model, Commit) \
        else model.model_dump_json(exclude_none=True)


# ---------------------------------------------------------------- the schema

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "history.schema.json"


def schema() -> dict:
    """The JSON Schema of one line: a Header or a Commit (whose action and parameters come from the registry)."""
    commit = Commit.model_json_schema()
    header = Header.model_json_schema()
    defs = {**commit.pop("$defs", {}), **header.pop("$defs", {})}
    defs["Commit"] = stepschema.refine_step(commit)
    defs["Header"] = header
    defs.update(stepschema.defs())
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"claimcheck-history line, version {VERSION}",
            "description": "one line of a history file (JSON lines): an optional header first, then one commit per "
                           "committed write transaction (docs/history.md)",
            "oneOf": [{"$ref": "#/$defs/Header"}, {"$ref": "#/$defs/Commit"}], "$defs": defs}


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"

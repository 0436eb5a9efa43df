"""The commit history's records (the port's recorded side, harness.port.history) read as twin values.

A history row names its actor, action and parameters, the committing process's actors' memory before
the step, the claim table after and the rows the commit appended or changed, in the recording server's
words: its `Vocabulary` (binding.stress.vocabulary for the bundled server, whose recorder,
impl/history.py, writes the rows) says what they are in the twin's. `read_commit` turns one into a
`Commit` (what the history check, harness/stress/checker.py, walks); `SessionView` is one Session's
durable state as the fold of the commits so far; the other functions read single recorded values (an
event, an input, an actor's memory), the run's configuration, and `Final`, the final database the fold
of all commits must equal.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from spec import model as M
from spec import names as N

from harness import registry as R
from harness.port.history import Vocabulary
from harness.traces import trace as T

ADMIT = "AdmitRequested"  # the environment's prompt admission, its execution requested: not a twin action
# (the twin admits at Init; its Admit, with Admission, admits a prompt held)
ENV_STEPS = (ADMIT, R.CRASH, R.CORRUPT_RECOVERY_ROW, R.FORGE_CONTINUATION)
DURABLE_VARS = ("claim", "nextExec", "log", "recovery", "inputs", "cancelled")


# ---------------------------------------------------------------- single recorded values

def asst_of(aid, steps: int, words: Vocabulary) -> int:
    """The twin's assistant of a recorded assistant id, with `steps` Steps per execution (0: none; -1: not
    an assistant id of the implementation)."""
    if aid is None:
        return 0
    try:
        return words.assistant(aid, steps)
    except (ValueError, AttributeError):
        return -1


def event_of(row, steps: int, words: Vocabulary) -> M.Event:
    """A recorded event; an input event (PromptExecutionRequested) names its prompt by number, as the twin does;
    a tool event carries its call index (the row's eighth column; a row without it: 0)."""
    _id, sess, kind, aid, _execution, writer, *rest = row
    prompt, call = (rest + [None, 0])[:2]
    short = words.event_kind(kind)
    if short == N.REQUEST_KIND:
        return M.Event(sess, short, prompt if prompt is not None else -1, writer)
    return M.Event(sess, short, asst_of(aid, steps, words), writer, call or 0)


def input_of(row, words: Vocabulary) -> tuple[str, M.Input]:
    """A recorded input row; an eighth column, when the converter put it there, is a continuation's flaw (the
    first check of the promotion's validation it fails, names.CONTINUATION_FLAWS; "" for none)."""
    iid, sess, kind, src, state = row[:5]
    cont = kind == "continuation"
    flaw = row[7] if cont and len(row) == 8 else ""
    return iid, M.Input(sess, "cont" if cont else "prompt", src, state, words.continuation_gen(iid) if cont else 0,
                        flaw)


def runner_of(v) -> M.Runner:
    return M.Runner(v[0], v[1], v[2], v[3], bool(v[4]), bool(v[5]), v[6], v[7] if len(v) > 7 else 0)


def fin_of(v) -> M.Fin:
    return M.Fin(*v)


def rec_of(v) -> M.Rec:
    return M.Rec(*v)


def memory_of(mem: dict | None) -> dict:
    """Recorded memory as twin records: {"run": {node: Runner}, "fin": {node: Fin}, "rec": {worker: Rec}}."""
    mem = mem or {}
    return {"run": {n: runner_of(v) for n, v in mem.get("run", {}).items()},
            "fin": {n: fin_of(v) for n, v in mem.get("fin", {}).items()},
            "rec": {r: rec_of(v) for r, v in mem.get("rec", {}).items()}}


def plans_of(mem: dict | None) -> dict[int, frozenset]:
    """A waker's recorded plan (memory `wake`, before its read or its reservation) as the twin's: {k: Plan set}."""
    return {int(k): frozenset(M.Plan(row, tries, slot) for row, tries, slot in v)
            for k, v in (mem or {}).get("wake", {}).items()}


def config_from_meta(meta: dict, words: Vocabulary, prompts: int = 1) -> M.Config:
    """The twin configuration of a run: its Sessions, nodes, recovery workers, lease (in clock ticks)
    and scan bound, its wake rows and batch; execution ids unbounded; every fault; the input actions
    (Admission, Steering) on, as a caller or a runner may take them at any time; no defect (the protocol
    as specified). `words`: the recording server's (its MaxTries where the metadata names none)."""
    return M.Config(sessions=tuple(meta["sessions"]), nodes=tuple(meta["nodes"]),
                    admission=True, steering=True, wake_rows=int(meta.get("wake_rows", 0)),
                    wakes_tied=bool(meta.get("wakes_tied", False)), hosted=int(meta.get("hosted", 0)),
                    wake_batch=int(meta.get("wake_batch", 2)), fresh_share=int(meta.get("fresh_share", 1)),
                    max_wake_tries=int(meta.get("max_wake_tries", 2)), wakers=int(meta.get("wakers", 1)),
                    recoverers=tuple(meta["workers"]), prompts=max(1, prompts), max_exec=2 ** 31,
                    max_steps=int(meta.get("max_steps", 1)), tools=int(meta.get("tools", 0)),
                    fragments=int(meta.get("fragments", 0)), lease=int(meta["lease_ticks"]), scan_bound=int(meta.get("scan_bound", 100)),
                    grace=int(meta.get("grace_ticks", 0)), max_tries=int(meta.get("max_tries", words.max_tries)),
                    faults=frozenset(N.FAULT_KINDS))


def meta_for(cfg: M.Config, **extra) -> dict:
    """The history's metadata for a run on a twin configuration (the inverse of `config_from_meta`)."""
    return {"sessions": list(cfg.sessions), "nodes": list(cfg.nodes), "workers": list(cfg.recoverers),
            "lease_ticks": cfg.lease, "grace_ticks": cfg.eff_grace, "scan_bound": cfg.scan_bound,
            "max_tries": cfg.max_tries, "max_steps": cfg.max_steps, "tools": cfg.tools, "fragments": cfg.fragments,
            "wake_rows": cfg.wake_rows, "wake_batch": cfg.wake_batch, "fresh_share": cfg.fresh_share,
            "max_wake_tries": cfg.max_wake_tries, "wakers": cfg.wakers,
            **({"wakes_tied": True} if cfg.wakes_tied else {}), **({"hosted": cfg.hosted} if cfg.hosted else {}),
            "defects": sorted(cfg.defects), **extra}


def twin_params(action: str, params: dict) -> tuple:
    """Registry parameters of a recorded step; keys starting with `_` are annotations the twin has no
    parameter for (`_execution`: the execution a routed interrupt names)."""
    return T.params_from_json(action, {k: v for k, v in params.items() if not k.startswith("_")}, "history")


# ---------------------------------------------------------------- one commit

@dataclass
class Commit:
    """One recorded commit read as twin values: what each step of the history check takes."""
    row: dict  # the decoded commit_history row
    params: tuple | None  # registry parameters (() for an environment step; None: unreadable)
    memory: dict  # the committing process's actors before the step, as `memory_of` gives it
    claims: dict  # Session -> the recorded claim row after the commit
    events: list = field(default_factory=list)  # M.Event appended
    inputs: list = field(default_factory=list)  # (input id, M.Input) admitted or changed
    recovery: set = field(default_factory=set)  # M.RecRow inserted
    cancelled: set = field(default_factory=set)  # M.RecRow of claims removed as cancelled
    exec_mark: int = 0  # the execution sequence after the commit
    wakes: list | None = None  # the whole wake-row table after the commit, when it changed it (None: unchanged)
    plans: dict = field(default_factory=dict)  # waker k -> its recorded plan before the step (`plans_of`)
    focus: str | None = None  # the Session it acts on (set by the checker, which knows the actors' memory)

    @property
    def seq(self) -> int:
        return self.row["seq"]

    @property
    def actor(self) -> str:
        return self.row["actor"]

    @property
    def action(self) -> str:
        return self.row["action"]

    @property
    def now(self) -> int:
        return self.row["now"]

    def actors(self) -> list[tuple[str, str]]:
        """(kind, name) of every actor whose memory the commit recorded: run, fin, rec."""
        return [(kind, name) for kind in ("run", "fin", "rec") for name in self.memory[kind]]


def read_commit(row: dict, exec_mark: int, steps: int, words: Vocabulary) -> tuple[Commit, str | None]:
    """The commit as twin values, and why its parameters are unreadable (None: they are readable).
    `exec_mark` is the execution sequence before it (a record without the mark leaves it unchanged);
    `steps`: Steps per execution, for the assistants' numbers; `words`: the recording server's."""
    delta = row["delta"]
    action = row["action"]
    why = None
    try:
        params = twin_params(action, row["params"]) if action in N.ACTIONS else ()
    except T.TraceError as exc:
        params, why = None, f"unreadable parameters: {exc}"
    commit = Commit(
        row=row, params=params, memory=memory_of(row["memory"]), claims={c[0]: c for c in row["claims"]},
        events=[event_of(e, steps, words) for e in delta.get("events", ())],
        inputs=[input_of(i, words) for i in delta.get("inputs", ())],
        recovery={M.RecRow(r[1], r[2]) for r in delta.get("recovery", ())},
        cancelled={M.RecRow(h[0], h[1]) for h in delta.get("history", ()) if h[2] == "cancelled"},
        exec_mark=row["marks"].get("execution", exec_mark), wakes=delta.get("wakes"), plans=plans_of(row["memory"]))
    return commit, why


# ---------------------------------------------------------------- the fold

def live(i: M.Input) -> bool:
    """An input any action or invariant can read whatever the commit: every continuation, and the prompts
    still waiting (held or pending); consumed prompts drop out of the view unless a commit names them."""
    return i.kind == "cont" or i.state in ("pending", "held")


class SessionView:
    """The durable state of one Session, as the fold of the deltas so far."""

    def __init__(self):
        self.log: list[M.Event] = []
        self.by_asst: dict[int, list[int]] = defaultdict(list)  # assistant -> positions in log
        self.by_prompt: dict[int, list[int]] = defaultdict(list)  # prompt -> positions of its input events
        self.inputs: dict[str, M.Input] = {}
        self.live_inputs: dict[str, M.Input] = {}  # `live` inputs
        self.cancelled: set[M.RecRow] = set()

    def log_view(self, assts: Iterable[int], prompts: Iterable[int] = ()) -> tuple:
        """The log's events of these assistants and the input events of these prompts, in log order."""
        pos = sorted([p for a in set(assts) for p in self.by_asst.get(a, ())]
                     + [p for k in set(prompts) for p in self.by_prompt.get(k, ())])
        return tuple(self.log[p] for p in pos)

    def append(self, ev: M.Event) -> None:
        (self.by_prompt if ev.kind == N.REQUEST_KIND else self.by_asst)[ev.asst].append(len(self.log))
        self.log.append(ev)

    def put_input(self, iid: str, i: M.Input) -> None:
        self.inputs[iid] = i
        if live(i):
            self.live_inputs[iid] = i
        else:
            self.live_inputs.pop(iid, None)


# ---------------------------------------------------------------- comparing and showing states

def durable_eq(a: M.State, b: M.State) -> bool:
    return all(getattr(a, v) == getattr(b, v) for v in DURABLE_VARS)


def changed_vars(a: M.State, b: M.State) -> str:
    return ", ".join(v for v in DURABLE_VARS if getattr(a, v) != getattr(b, v)) or "nothing"


def fmt(params) -> str:
    from harness.conformance.replay import fmt_params
    return f"({fmt_params(params)})" if params is not None else "(?)"


def short(v, limit: int = 160) -> str:
    text = repr(v)
    return text if len(text) <= limit else text[:limit] + "…"


# ---------------------------------------------------------------- the final database

@dataclass
class Final:
    """The database at the end of a run (a History's `final()`)."""
    snapshot: object  # claims, events, inputs, recovery, cancelled: as impl.snapshot.Snapshot has them
    execution_seq: int
    outcomes: dict  # execution -> cleared | cancelled | recovered

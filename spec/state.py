"""The twin's state: the variables' value types, `State`, `init`, and the TLA+ helper operators the actions
share (`fenced`, `scan_window`, ...), each named as in SessionExecution.tla.

A helper that reads a hook (SessionExecution.tla's "Helpers that read hooks": `selectable`, `scan_window`,
`run_stale`, ...) reads it through `cfg.hooks` (spec.config, spec.mc), never a defect. `spec.model` holds
the actions and `Next` over these and re-exports every name here, and `Config` (spec.config), so callers
keep writing `M.State`, `M.Config`, `M.init`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from . import names as N

if TYPE_CHECKING:
    from .config import Config


def left_claim(cfg, s: str) -> "Claim":
    """TLA+ LeftClaim(s): the poison row a crashed recovery worker left (its takeover, then the crash), of
    execution LeftExec[s] (1.., in the order of cfg.sessions)."""
    e = [t for t in cfg.sessions if t in cfg.left_claims].index(s) + 1
    return Claim(e, cfg.recoverers[0], -cfg.eff_grace, "recovering", 0, False, 1, "")


class Claim(NamedTuple):
    exec: int
    owner: str
    ttl: int  # ticks left on the lease; 0 = expired
    phase: str
    asst: int  # the latest Step's assistant id (asst(exec, k)); 0 = none
    quar: bool  # recovery error set
    tries: int = 0  # recovery takeovers of this claim so far (capped at max_tries)
    why: str = ""  # the quarantine's reason (names.QUARANTINE_REASONS); "" while not quarantined


NO_CLAIM = Claim(0, "", 0, "none", 0, False, 0, "")


class Event(NamedTuple):
    sess: str
    kind: str
    asst: int
    node: str  # the claim identity the publisher wrote under
    call: int = 0  # a tool event's call index (1..Tools + Hosted); Step.Started's: its hosted call; else 0


class RecRow(NamedTuple):
    exec: int
    sess: str


class Input(NamedTuple):
    sess: str
    kind: str  # prompt | cont
    src: int  # prompt number, or the recovered execution of a continuation
    state: str  # held | pending | ordinary | recovery | steered (names.INPUT_STATES)
    gen: int = 0  # a continuation's id beyond (Session, execution): 0, derived from them (ContinuationGen)
    flaw: str = ""  # a forged or corrupt continuation row's one flaw (names.CONTINUATION_FLAWS); "" otherwise


class Runner(NamedTuple):
    pc: str
    sess: str
    exec: int
    mem: int  # publisher memory: the last assistant id it published
    active: bool  # publisher memory: assistant active
    intr: bool  # interrupt delivered
    ordinal: int = 0  # the current Step (1..max_steps); 0 while idle
    tool: int = 0  # the tool-settlement flag: the Step's tool calls whose Tool.Success was published


class Fin(NamedTuple):
    pc: str
    sess: str
    exec: int
    owner: str  # the claim identity the finalizer writes under


class Rec(NamedTuple):
    pc: str
    sess: str
    exec: int
    seen: str = ""  # the former owner the scan saw (pc scanned): what the compare-and-swap compares
    why: str = ""  # why the conversion failed (pc quarantining): names.QUARANTINE_REASONS


class Effect(NamedTuple):
    """An external effect begun: provider dispatch, local tool or finalizer reconciliation (the history
    `effects`); recovery's takeover and reconciliation are read from its workers' moves instead."""
    sess: str
    exec: int
    owner: str  # the claim identity's owner the actor works under
    by: str  # the node (or recovery worker) it runs on
    kind: str  # dispatch | tool | reconcile (and takeover, recovery's: never in the history)
    step: int = 0  # the Step a dispatch or tool belongs to (0: a reconciliation)
    call: int = 0  # a tool's call index in its Step (1..Tools); 0 for every other effect


class Wake(NamedTuple):
    """A wake row (durable): pending work, its wake counter (0: fresh), the reservation it holds."""
    work: bool
    tries: int  # the counter: 0 never woken; a reservation's compare-and-set rotates it (max -> 1)
    woken: str  # names.WAKE_RESERVATIONS: "" none, "fresh" or "retry" (the slot it was reserved in)
    turned: bool = False  # woken in the current round of retries (TLA+ NewRound, Unturned)


WAKE_IDLE = Wake(False, 0, "")


class Plan(NamedTuple):
    """A row a waker planned in its read (TLA+ plan): the row, the counter it observed, the slot kind."""
    row: int
    tries: int
    slot: str  # "fresh" or "retry"

# the call indices a Step's tool calls may have (TLA+ CallIndices: local 1..Tools, then the hosted call)
CALL_INDICES = (1, 2, 3)

RUNNER_IDLE = Runner("idle", "", 0, 0, False, False)
FIN_IDLE = Fin("idle", "", 0, "")
REC_IDLE = Rec("idle", "", 0, "", "")


class State(NamedTuple):
    claim: tuple[Claim, ...]  # indexed like cfg.sessions
    nextExec: int
    log: tuple[Event, ...]
    recovery: frozenset[RecRow]
    inputs: frozenset[Input]
    run: tuple[Runner, ...]  # indexed like cfg.nodes
    fin: tuple[Fin, ...]
    rec: tuple[Rec, ...]  # indexed like cfg.recoverers
    cancelled: frozenset[RecRow]  # (execution, Session) pairs that reached cancelled
    faults: frozenset[str]
    effects: frozenset[Effect] = frozenset()  # history: every external effect begun
    wakes: tuple[Wake, ...] = ()  # the wake rows, indexed 1..wake_rows as wakes[w - 1]
    waker: tuple[frozenset[Plan], ...] = ()  # TLA+ waker: waker k's plan at waker[k - 1] (only with Wakers > 1)


VARIABLES = State._fields


def init(cfg: Config) -> State:
    return State(
        claim=tuple(left_claim(cfg, s) if s in cfg.left_claims else NO_CLAIM for s in cfg.sessions),
        nextExec=len(cfg.left_claims) + 1,
        log=(),
        recovery=frozenset(),
        inputs=frozenset() if cfg.admission else frozenset(
            Input(s, "prompt", k, "ordinary" if k == 1 and s in cfg.left_claims else "pending")
            for s in cfg.sessions for k in range(1, cfg.prompts + 1)),
        run=tuple(RUNNER_IDLE for _ in cfg.nodes),
        fin=tuple(FIN_IDLE for _ in cfg.nodes),
        rec=tuple(REC_IDLE for _ in cfg.recoverers),
        cancelled=frozenset(),
        faults=frozenset(),
        effects=frozenset(),
        wakes=tuple(WAKE_IDLE for _ in range(cfg.wake_rows)),
        waker=tuple(frozenset() for _ in range(cfg.wakers if cfg.wakers > 1 else 0)),
    )


# ---------------------------------------------------------------- helpers (TLA+ operators of the same name)

def _put(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


def si(cfg: Config, s: str) -> int:
    return cfg.sessions.index(s)


def ni(cfg: Config, n: str) -> int:
    return cfg.nodes.index(n)


def owner_id(cfg: Config, k: int) -> str:
    """Owner id of actor index k: nodes first, then recovery workers (as Heartbeat and Crash number them)."""
    return (cfg.nodes + cfg.recoverers)[k]


def asst(cfg: Config, e: int, k: int) -> int:
    """TLA+ Asst: Step k of execution e writes this assistant (one per Step, globally unique)."""
    return (e - 1) * cfg.max_steps + k


def exec_of(cfg: Config, a: int) -> int:
    """TLA+ ExecOf: the execution an assistant id belongs to."""
    return (a - 1) // cfg.max_steps + 1


def step_asst(cfg: Config, r: Runner) -> int:
    """TLA+ StepAsst: the assistant of the runner's current Step."""
    return asst(cfg, r.exec, r.ordinal)


def step_of(cfg: Config, a: int) -> int:
    """TLA+ StepOf: the Step an assistant belongs to, within its execution."""
    return a - (exec_of(cfg, a) - 1) * cfg.max_steps


def _tool_events(st: State, a: int) -> frozenset:
    """(kind, call index) of every tool event of assistant a's Step, and of a Step.Started naming a call."""
    if type(st.log) is not tuple:  # an EventLog (spec/indexed.py): a long log's facts kept
        return st.log.calls(a)
    return frozenset((e.kind, e.call) for e in st.log if e.asst == a and (e.kind in N.TOOL_KINDS or e.call))


def call_started(st: State, a: int, i: int) -> bool:
    """TLA+ CallStarted: call i of assistant a's Step has its start recorded (ToolStarted, or Step.Started)."""
    return not _tool_events(st, a).isdisjoint((("ToolStarted", i), ("Started", i)))


def step_has_outcome(st: State, a: int) -> bool:
    """Some call of assistant a's Step has an outcome (whichever its index)."""
    return any(k in N.TOOL_OUTCOMES for k, _ in _tool_events(st, a))


def open_call(st: State, a: int, i: int) -> bool:
    """TLA+ OpenCall: call i of assistant a's Step has its start recorded and no outcome (matched by index)."""
    calls = _tool_events(st, a)
    return (("ToolStarted", i) in calls or ("Started", i) in calls) and not any((k, i) in calls for k in N.TOOL_OUTCOMES)


def reconciled_calls(cfg, st: State, a: int) -> tuple:
    """TLA+ ReconciledCalls: the calls of assistant a's Step a reconciliation settles, in index order."""
    return () if a == 0 else tuple(i for i in CALL_INDICES if cfg.hooks.reconciles_call(cfg, st, a, i))


def with_calls(log: tuple, s: str, kind: str, a: int, node: str, calls: tuple) -> tuple:
    """TLA+ WithCalls: log with one tool event of `kind` appended per call, in index order."""
    return log + tuple(Event(s, kind, a, node, i) for i in calls)


def started(st: State, a: int) -> bool:
    if type(st.log) is not tuple:
        return "Started" in st.log.kinds(a)
    return any(e.kind == "Started" and e.asst == a for e in st.log)


def completed(st: State, a: int) -> bool:
    if type(st.log) is not tuple:
        return not st.log.kinds(a).isdisjoint(N.TERMINAL_KINDS)
    return any(e.kind in N.TERMINAL_KINDS and e.asst == a for e in st.log)


def continuation(s: str, e: int, gen: int) -> Input:
    """TLA+ Continuation: the pending continuation of (Session, execution) with id `gen`."""
    return Input(s, "cont", e, "pending", gen)


def has_continuation(st: State, k: Input) -> bool:
    """TLA+ HasContinuation: an input with k's id (Session, execution, gen), in any state."""
    if type(st.inputs) is not frozenset:  # an InputSet (spec/indexed.py): long inputs' facts kept
        return st.inputs.has_continuation(k.sess, k.src, k.gen)
    return any(i.kind == "cont" and i.sess == k.sess and i.src == k.src and i.gen == k.gen for i in st.inputs)


def request_id(j: Input) -> int:
    """TLA+ RequestId: an input's id as a PromptExecutionRequested names it (a prompt's number, a
    continuation's recovered execution negated)."""
    return j.src if j.kind == "prompt" else -j.src


def same_input(j: Input, i: Input) -> bool:
    """TLA+ SameInput: input j is the one id i names (an id carries no state)."""
    return j.sess == i.sess and j.kind == i.kind and j.src == i.src and j.gen == i.gen


def requests_of(st: State, s: str, p: int) -> int:
    """TLA+ RequestsOf, counted: the PromptExecutionRequested events of Session s's prompt p."""
    if type(st.log) is not tuple:
        return st.log.requests(s, p)
    return sum(1 for e in st.log if e.kind == N.REQUEST_KIND and e.sess == s and e.asst == p)


def prompts_of(st: State, s: str) -> list[Input]:
    """TLA+ PromptsOf: Session s's admitted prompts."""
    if type(st.inputs) is not frozenset:
        return st.inputs.prompts(s)
    return [i for i in st.inputs if i.sess == s and i.kind == "prompt"]


def prompt_count(st: State, s: str) -> int:
    """Cardinality(PromptsOf(s))."""
    if type(st.inputs) is not frozenset:
        return st.inputs.prompt_count(s)
    return sum(1 for i in st.inputs if i.sess == s and i.kind == "prompt")


def held_prompts(st: State, s: str) -> list[Input]:
    """Session s's held prompts (admitted, their execution not yet requested)."""
    if type(st.inputs) is not frozenset:
        return [i for i in st.inputs.held_of(s) if i.kind == "prompt"]
    return [i for i in st.inputs if i.sess == s and i.kind == "prompt" and i.state == "held"]


def pending_inputs(st: State, s: str) -> list[Input]:
    """Session s's pending inputs (the ones ordinary selection may take)."""
    if type(st.inputs) is not frozenset:
        return st.inputs.pending_of(s)
    return [i for i in st.inputs if i.sess == s and i.state == "pending"]


def find_input(st: State, i: Input) -> Input | None:
    """The input the id i names (TLA+ SameInput), in whatever state, or None."""
    if type(st.inputs) is not frozenset:
        return st.inputs.find(i.sess, i.kind, i.src, i.gen)
    return next((x for x in st.inputs if same_input(x, i)), None)


def has_row(st: State, s: str, e: int) -> bool:
    return RecRow(e, s) in st.recovery


def row_for_exec(st: State, e: int) -> bool:
    if type(st.recovery) is not frozenset:  # a RecoverySet (spec/indexed.py)
        return e in st.recovery.execs
    return any(r.exec == e for r in st.recovery)


def fenced(st: State, s: int, e: int, owner: str) -> bool:
    """Exact Session, execution, owner and an unexpired lease."""
    c = st.claim[s]
    return c.exec == e and c.owner == owner and c.ttl > 0


def sup_holds(cfg: Config, st: State, s: str, e: int, o: str) -> bool:
    """TLA+ SupHolds, the node's supervision check: the claim its actor works under is still its exact,
    live claim (a hook until issue 30; its one defect is equivalent to it under the clock assumption)."""
    return fenced(st, si(cfg, s), e, o)


def ordinary_ok(st: State, s: int, e: int, owner: str) -> bool:
    """An ordinary (runner) claim update: fenced, and phases never move backwards from running."""
    return fenced(st, s, e, owner) and st.claim[s].phase == "running"


def active_on(st: State, n: int, e: int) -> bool:
    """Node n has an actor working on execution e (its heartbeat keeps that lease)."""
    r, f = st.run[n], st.fin[n]
    return (r.exec == e and r.pc not in ("idle", "stopped")) or (f.exec == e and f.pc != "idle")


def pausing(cfg: Config, st: State) -> bool:
    """A tick now would expire a lease an actor still works on (TLA+ Pausing): the tick is a pause."""
    return any(c.ttl == 1 and owner_active(cfg, st, s) for s, c in enumerate(st.claim))


def justified(cfg: Config, st: State, s: int) -> bool:
    """A quarantine of s's claim is justified by its recorded reason (TLA+ Justified): malformed, and a
    session_recovery row of another Session already names its execution (forged or corrupt); or exhausted,
    and its attempts reached max_tries."""
    c = st.claim[s]
    return (c.why == "malformed" and foreign_row(cfg, st, s, c.exec)) or (c.why == "exhausted" and c.tries >= cfg.max_tries)


def foreign_row(cfg: Config, st: State, s: int, e: int) -> bool:
    """TLA+ ForeignRow: a session_recovery row names execution e under another Session than s (forged, corrupt)."""
    return any(r.exec == e and r.sess != cfg.sessions[s] for r in st.recovery)


def owner_active(cfg: Config, st: State, s: int) -> bool:
    """Some actor is working on s's claimed execution, so its lease expiring is a pause (a fault)."""
    e = st.claim[s].exec
    return (any(active_on(st, n, e) for n in range(len(cfg.nodes)))
            or any(w.exec == e and w.pc != "idle" for w in st.rec))


def selectable(cfg: Config, st: State, i: Input) -> bool:
    """TLA+ Selectable: ordinary steer/queue selection excludes recovery-owned inputs (OrdinarySelects)."""
    return i.state == "pending" and cfg.hooks.ordinary_selects(cfg, st, i)


def delivery(cfg: Config, i: Input) -> str:
    """TLA+ Delivery: the delivery its caller chose: steer for the prompts SteerPrompts names, else queue."""
    return "steer" if i.kind == "prompt" and i.src in cfg.steer_prompts else "queue"


def older_prompt(j: Input, i: Input) -> bool:
    """TLA+ OlderPrompt: j was admitted before i (a Session's prompts are numbered in admission order)."""
    return j.kind == "prompt" and i.kind == "prompt" and j.src < i.src


def in_order(cfg: Config, st: State, i: Input) -> bool:
    """TLA+ InOrder: with DeliveryKinds, no selectable input of i's Session waits ahead of it (steer before
    queue, then age: the hooks KindAhead and AgeAhead)."""
    if not cfg.delivery_kinds:
        return True
    h = cfg.hooks
    return not any(selectable(cfg, st, j) and not same_input(j, i)
                   and (h.kind_ahead(cfg, st, j, i) or h.age_ahead(cfg, st, j, i)) for j in pending_inputs(st, i.sess))


def eligible(cfg: Config, st: State, s: int) -> bool:
    c = st.claim[s]
    return c.phase != "none" and c.ttl <= -cfg.eff_grace and not c.quar


def scan_window(cfg: Config, st: State) -> set[int]:
    """The recovery scan (by creation order = execution id): with a bound of one, the oldest eligible
    claim; with more, the batch plan_batch plans (fresh claims, tries 0, first up to the fresh share)."""
    rows = sorted((st.claim[s].exec, s) for s in range(len(cfg.sessions)) if eligible(cfg, st, s))
    if cfg.scan_bound == 1 or not cfg.hooks.scan_plans_by_kind(cfg, st):
        return {s for _, s in rows[:cfg.scan_bound]}
    fresh = [s for _, s in rows if st.claim[s].tries == 0]
    retried = [s for _, s in rows if st.claim[s].tries > 0]
    again = retried[:cfg.scan_bound - len(fresh[:cfg.hooks.fresh_slots(cfg, st)])]
    return set(fresh[:cfg.scan_bound - len(again)]) | set(again)


# ---------------------------------------------------------------- supervision (TLA+ RunStale ... Overdue)

def run_stale(cfg: Config, st: State, n: int) -> bool:
    r = st.run[n]
    return r.pc not in ("idle", "stopped") and not sup_holds(cfg, st, r.sess, r.exec, cfg.nodes[n])


def fin_stale(cfg: Config, st: State, n: int) -> bool:
    f = st.fin[n]
    return f.pc != "idle" and not cfg.hooks.finalizer_supervised(cfg, st, f)


def lag_of(cfg: Config, st: State, s: str, e: int, owner: str) -> int:
    """Ticks since the actor's claim expired; a claim that changed identity or vanished: the bound."""
    c = st.claim[si(cfg, s)]
    return -c.ttl if c.exec == e and c.owner == owner else cfg.supervision_lag


def overdue(cfg: Config, st: State, n: int) -> bool:
    r, f = st.run[n], st.fin[n]
    return ((run_stale(cfg, st, n) and lag_of(cfg, st, r.sess, r.exec, cfg.nodes[n]) + 1 >= cfg.supervision_lag)
            or (fin_stale(cfg, st, n) and lag_of(cfg, st, f.sess, f.exec, f.owner) + 1 >= cfg.supervision_lag))


def _ticking(cfg: Config, c: Claim) -> bool:
    return c.phase != "none" and c.ttl > -cfg.eff_grace


def _clock_may_advance(cfg: Config, st: State) -> bool:
    """TLA+ ClockMayAdvance: a lease still runs down, TimelyDispatch, and no supervision is overdue."""
    if not any(_ticking(cfg, c) for c in st.claim):
        return False
    if cfg.timely_dispatch and any(
            r.pc in ("renewed", "tool_started") and st.claim[si(cfg, r.sess)].exec == r.exec and st.claim[si(cfg, r.sess)].ttl == 1
            for r in st.run):
        return False
    return not any(overdue(cfg, st, n) for n in range(len(cfg.nodes)))


# ---------------------------------------------------------------- shared by spec.model and spec.input_actions

def _with_input(st: State, old: Input, state: str) -> frozenset[Input]:
    return (st.inputs - {old}) | {old._replace(state=state)}


def _runner_free(st: State, n: int) -> bool:
    return st.run[n].pc == "idle"


def _acquire(cfg: Config, st: State, n: int, i: Input, ordinary: bool) -> State | None:
    s = si(cfg, i.sess)
    if not (_runner_free(st, n) and i in st.inputs and st.nextExec <= cfg.max_exec
            and cfg.hooks.claim_free(cfg, st, s, ordinary)):
        return None
    e = st.nextExec
    return st._replace(
        claim=_put(st.claim, s, Claim(e, cfg.nodes[n], cfg.lease, "running", 0, False)),
        nextExec=e + 1,
        inputs=_with_input(st, i, "ordinary" if ordinary else "recovery"),
        run=_put(st.run, n, Runner("acquired", i.sess, e, 0, False, False, 1)),
    )

# ---------------------------------------------------------------- runner helpers (TLA+ RunnerAt)

def _begin_effect(cfg: Config, st: State, n: int, kind: str, pc: str, call: int = 0) -> State:
    """Runner n begins an external effect of `kind` for its current Step (no transaction) and moves to `pc`:
    the provider dispatch (TLA+ Dispatch) and the physical tool (ToolRun, its call index `call`) alike."""
    r = st.run[n]
    node = cfg.nodes[n]
    return st._replace(run=_put(st.run, n, r._replace(pc=pc)),
                       effects=st.effects | {Effect(r.sess, r.exec, node, node, kind, r.ordinal, call)})


def _stop(st: State, n: int, **memory) -> State:
    return st._replace(run=_put(st.run, n, st.run[n]._replace(pc="stopped", **memory)))


def _runner_at(st: State, n: int, pc: str) -> bool:
    r = st.run[n]
    return r.pc == pc and not r.intr


def listener_gate(st: State, n: int) -> bool:
    """TLA+ ListenerGate: runner n's Step event committed and its listeners have not returned (after the
    last Step's Step.Ended the return is ClearClaim, memory still active)."""
    return (_runner_at(st, n, "started") or _runner_at(st, n, "failed") or _runner_at(st, n, "ended")
            or (_runner_at(st, n, "done") and st.run[n].active))

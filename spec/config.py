"""The constants of the specification (`Config`, as an MC_*.cfg gives them) and the hooks they resolve.

`Config.hooks` is the protocol's hooks with the configuration's defects switched on (spec.mc): every
action reads a hook through it, so the twin's protocol modules name no defect. `spec.model` re-exports
`Config`, so callers keep writing `M.Config`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from . import names as N
from .mc import Hooks, resolve


def wake_constants_problem(batch: int, share: int, max_tries: int, scan_bound: int = 1) -> str | None:
    """Why the wake constants are refused (None when they are not): a batch of one cannot keep a slot for
    each kind, a fresh share of 0 lets retries fill the batch, a share of the whole batch lets no retry
    advance (impl/wakes.py plan_batch refuses the same); a claim scan of more than one row is planned with
    the same share, so it must leave that scan a retry slot too."""
    if batch < 2:
        return f"wake_batch must be at least 2 (got {batch}): a batch of one cannot keep a slot for each kind"
    if not 1 <= share <= batch - 1:
        return (f"fresh_share must be in 1..wake_batch-1 = 1..{batch - 1} (got {share}): 0 lets retries fill "
                "the batch, the whole batch lets no retry advance")
    if max_tries < 1:
        return f"max_wake_tries must be at least 1 (got {max_tries})"
    if scan_bound >= 2 and share > scan_bound - 1:
        return (f"fresh_share must be in 1..scan_bound-1 = 1..{scan_bound - 1} (got {share}): the claim scan "
                "plans its window with the same share")
    return None


def wakers_problem(wakers: int, wake_rows: int) -> str | None:
    """Why Wakers is refused (None when it is not): at least one waker, and several only with wake rows."""
    if wakers < 1:
        return f"wakers must be at least 1 (got {wakers})"
    if wakers > 1 and wake_rows < 1:
        return f"wakers = {wakers} needs wake rows (wake_rows >= 1): several wakers race for wake rows"
    return None


def wakes_tied_problem(cfg) -> str | None:
    """Why WakesTied is refused (None when it is not): tied rows are modelled for one Session, its ordinary
    wake (row 1) and its recovery wake (row 2), and one waker."""
    if cfg.wakes_tied and (len(cfg.sessions) != 1 or cfg.wake_rows != 2 or cfg.wakers != 1):
        return (f"wakes_tied needs one Session, wake_rows = 2 and one waker (got {len(cfg.sessions)} Sessions, "
                f"wake_rows = {cfg.wake_rows}, wakers = {cfg.wakers}): row 1 its ordinary wake, row 2 its recovery wake")
    return None


def left_claims_problem(cfg) -> str | None:
    """Why LeftClaims is refused (None when it is not): its Sessions must be the configuration's, each with a
    prompt its left execution took (so no Admission), an execution id each, and one recovery worker (the
    left rows' owner); Sessions in sorted order, the order TLC numbers the left executions in (the TLA+
    `LeftExec`: its CHOOSE picks the Sessions in the order the generated cfg first names them)."""
    left = cfg.left_claims
    if not left:
        return None
    if not set(left) <= set(cfg.sessions):
        return f"left_claims must name Sessions of the configuration (got {sorted(set(left) - set(cfg.sessions))})"
    if cfg.admission or cfg.prompts < 1:
        return "left_claims needs prompts admitted at Init (prompts >= 1, no admission): a left execution took one"
    if len(left) > cfg.max_exec:
        return f"left_claims names {len(left)} Sessions, more than max_exec = {cfg.max_exec} execution ids"
    if len(cfg.recoverers) != 1:
        return "left_claims needs exactly one recovery worker (the left rows' owner)"
    if list(cfg.sessions) != sorted(cfg.sessions):
        return "left_claims needs the Sessions in sorted order (the order the left executions are numbered in)"
    return None


@dataclass(frozen=True)
class Config:
    """The constants of the specification (MC_*.cfg)."""

    sessions: tuple[str, ...] = ("s1",)
    nodes: tuple[str, ...] = ("n1", "n2")
    recoverers: tuple[str, ...] = ("r1",)  # recovery workers: owner ids of their own
    prompts: int = 1  # prompts admitted per Session at Init
    max_exec: int = 2  # execution ids are 1..max_exec, globally unique
    max_steps: int = 1  # MaxSteps: Steps per execution, one assistant each
    tools: int = 0  # Tools: local tool calls per Step (0, 1 or 2; 0: the model without tools)
    hosted: int = 0  # Hosted: 0 or 1, each Step's provider call also runs one hosted tool (call index tools + 1)
    lease: int = 1  # ticks a fresh lease lives
    scan_bound: int = 1  # rows a recovery scan looks at, oldest first
    max_tries: int = 2  # MaxTries: takeovers of one claim before a conversion that lost its lease quarantines
    faults: frozenset[str] = frozenset(N.FAULT_KINDS) - set(N.NAMED_FAULTS)  # these only when named
    timely_dispatch: bool = True
    synchronized_clocks: bool = True  # off: the takeover's grace drops below the supervision lag
    grace: int = 1  # Grace: ticks an expired claim waits before RecoveryTakeover may take it
    supervision_lag: int = 1  # SupervisionLag: Supervise happens before this many ticks pass
    process_local_routing: bool = True
    admission: bool = False  # Admission: prompts admitted by Admit (held), armed by ExactRetry or Resume
    steering: bool = False  # Steering: a running execution steers pending inputs into itself (Steer)
    # DeliveryKinds: inputs carry their delivery (steer for the prompt numbers steer_prompts, SteerPrompts;
    # queue otherwise): Steer takes steer inputs only, the drain steer before queue, each kind oldest first
    delivery_kinds: bool = False
    steer_prompts: frozenset[int] = frozenset()
    fragments: int = 0  # Fragments: 0 or 1, a stream may open a partial fragment before Step.Started (OpenFragment)
    defects: frozenset[str] = field(default_factory=frozenset)
    wake_rows: int = 0  # WakeRows: wake rows 1..wake_rows, oldest first; 0 = wake scans not modelled
    wake_batch: int = 2  # WakeBatch: rows one wake scan reserves at most
    fresh_share: int = 1  # FreshShare: slots of a batch fresh rows take first (1..wake_batch - 1)
    max_wake_tries: int = 2  # MaxWakeTries: a wake row's counter rotates from it back to 1
    # Wakers: wakers scanning the wake rows; 1: the scan is one action (WakeScan); more: each waker's read
    # (WakeRead) and reservation (WakeReserve) are two, and they race (spec/README.md, decision 16)
    wakers: int = 1
    # WakesTied: wake rows tied to the work they wake (spec/README.md, decision 16): row 1 the one Session's
    # ordinary wake, row 2 its recovery wake; the woken redrive acquires (WakeAcquire) or promotes
    # (WakePromote) and removes its row in that transaction; promotion only through a recovery wake
    wakes_tied: bool = False
    # LeftClaims: Sessions whose claim earlier processes left at Init (a restart on a shared database): each a
    # poison row as a crashed recovery worker leaves it (executions 1.. in the order of `sessions`; phase
    # recovering, owner the recovery worker, one takeover, expired past the grace) and its prompt 1 taken
    left_claims: frozenset[str] = frozenset()
    # the protocol's hooks as these defects decide them (spec.mc, as TLC's `Hook <- MCHook`): not a constant,
    # resolved once in __post_init__, since the explorer calls them on every successor (set there, with the
    # fields, so the instance keeps its compact attributes: a cached_property writing it later made every
    # attribute of the configuration several times slower to read)
    hooks: Hooks = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        problem = (wake_constants_problem(self.wake_batch, self.fresh_share, self.max_wake_tries, self.scan_bound)
                   or wakers_problem(self.wakers, self.wake_rows) or wakes_tied_problem(self)
                   or left_claims_problem(self))
        if problem:
            raise ValueError(problem)
        object.__setattr__(self, "hooks", resolve(frozenset(self.defects)))

    def __getstate__(self) -> dict:
        """Pickled without its hooks (a defect's alternative is a lambda): they are resolved again."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}  # (never __dict__: see hooks)

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():  # one by one, as __init__ sets them (the compact attributes again)
            object.__setattr__(self, name, value)
        self.__post_init__()

    @property
    def eff_grace(self) -> int:
        """The model's Grace: SynchronizedClocks is `Grace >= SupervisionLag`; switched off, the grace is
        one tick short of the lag bound."""
        return self.grace if self.synchronized_clocks else min(self.grace, self.supervision_lag - 1)

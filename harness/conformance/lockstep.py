"""Hypothesis lockstep conformance: the twin chooses, the system under test follows, step by step.

Why: the explorer proves the twin and replay checks schedules someone wrote down; this checks that the
code follows the twin on schedules nobody picked. The machine has no action list of its own: its one
rule draws from `M.successors` (the twin's enabled action instances, every registry action; an action
by per-example swarm weight, then an instance), applies that instance to the twin and, through the port
(harness.port: a world the server starts), to the server, then compares the server's mapped state with
the twin's (harness.conformance.diff) and checks every state invariant on the mapped state and every
action invariant on the mapped edge.

Liveness is checked on the run's own path (sound under the twin's weak fairness; the fairness condition
and the path check are harness.engines.liveness's `fair_enabled` and `fair_lasso`):

- a *stuck* state: no fair action instance is enabled, so stuttering there forever is a fair behaviour;
  if a leads-to premise holds there without its goal, the property fails (`step-started-window`);
- a *fair cycle*: the run returns to a state it visited, the goal is false all along the cycle, the
  premise held on the way in, and every fair action instance enabled throughout the cycle is taken in
  it (`silent-quarantine-noop`: takeover, failed conversion, no-op quarantine, again).

It cannot see a liveness failure whose fair lasso the run never walks (a cycle it leaves before closing,
or one needing a choice it did not make); the explorer's SCC check over the whole graph covers those.
Both checks run after every step (not only at teardown) so a failure's trace ends where it is first seen.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context, should_note
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from spec import configs
from spec import guards as G
from spec import invariants as I
from spec import model as M
from spec import names as N

from harness import registry as R
from harness.traces.paths import Step
from harness.engines.liveness import fair_enabled, fair_lasso
from harness.port import Campaigns, DivergenceError, Server
from harness.conformance.diff import diff, render_diff
from harness.conformance.memo import Memo
from harness.conformance.probes import problems as probe_problems

ACTION_NAMES = tuple(N.ACTIONS)
STEPS_PER_RULE = 4
PROBE = "(refusal probe)"  # drawn beside the actions: attempt an instance the twin does not enable
PAUSE = "(pause)"  # a Tick that expires a working actor's lease: the pause fault, an interruption for a focus
NOVEL_PROBE = 4  # a probe's weight is multiplied by this where some refusal's reason is new to the run
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large]
# no Phase.explain: it traces every line of the implementation under sys.settrace, which made shrinking
# a failure take minutes; the trace file explains a failure better
_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)

PROFILES = {
    # sized so `claimcheck fuzz --profile ci` (ci and sessions configurations) stays well under 2 minutes
    "ci": settings(max_examples=450, stateful_step_count=10, derandomize=True, print_blob=True,
                   deadline=None, database=None, report_multiple_bugs=False, suppress_health_check=_SUPPRESS,
                   phases=_PHASES),
    # nightly: random seeds, many more and longer runs
    "deep": settings(max_examples=3000, stateful_step_count=25, derandomize=False, print_blob=True,
                     deadline=None, database=None, report_multiple_bugs=False, suppress_health_check=_SUPPRESS,
                   phases=_PHASES),
}
for _name, _s in PROFILES.items():
    settings.register_profile(f"claimcheck-{_name}", _s)

NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)  # detection benchmarks: first failure only


class LockstepFailure(AssertionError):
    """The implementation diverged from the twin, or the run broke an invariant or liveness property."""


@dataclass
class Found:
    kind: str  # divergence | safety | liveness | error
    invariants: list[str]
    message: str
    steps: list[Step]  # the twin's steps, Init first, up to and including the failing one
    loop: int | None = None  # liveness: the step index the behaviour returns to forever
    probe: tuple | None = None  # (action, params) the implementation took although the twin refuses it


@dataclass
class Coverage:
    """What one campaign exercised: action instances taken, boundary hits, distinct twin states and
    distinct labelled edges (action, params, from, to: the unit harness.conformance.conform covers whole)."""

    actions: Counter = field(default_factory=Counter)
    boundaries: Counter = field(default_factory=Counter)
    states: set = field(default_factory=set)
    edges: set = field(default_factory=set)
    probes: Counter = field(default_factory=Counter)  # refusals checked, per action
    examples: int = 0  # Hypothesis examples
    runs: int = 0  # runs from Init (an example starts a new run when the bounded twin ends)
    steps: int = 0


# ---------------------------------------------------------------- the campaign and its machine

class Campaign:
    """One configuration's run: its worlds, coverage, and the failures Hypothesis reported."""

    def __init__(self, cfg: M.Config, server: Server, mutant=None, progress=None):
        """`server`: the system under test (harness.port); its runs come from one campaign of its own
        where it offers that (Campaigns: the bundled server's database restored per run), else a world
        each from `start`."""
        self.cfg = cfg
        self.server = server
        self.progress = progress  # progress(steps=, examples=, states=), after every lockstep step
        self.mutant = None if mutant is None else frozenset(mutant)  # implementation-only defects
        self.runs = server.campaign(cfg, self.mutant) if isinstance(server, Campaigns) else None
        self.coverage = Coverage()
        self.found: list[Found] = []
        self.last: Found | None = None  # the latest failure seen (the only one when shrinking is off)
        self.leads_to = [(name, p, q) for name in N.LIVENESS for _s, p, q in I.leads_to(name, cfg)]
        self.memo = Memo(cfg)  # the twin's answers per state (harness.conformance.memo)

    def start(self):
        """A fresh world at Init for the next run."""
        return self.runs.start() if self.runs is not None else self.server.start(self.cfg, mutant=self.mutant)

    def close(self) -> None:
        if self.runs is not None:
            self.runs.close()

    def record(self, found: Found) -> None:
        self.last = found
        try:
            final = current_build_context().is_final
        except Exception:  # noqa: BLE001 - outside a Hypothesis run (direct use in tests)
            final = True
        if final:
            self.found.append(found)


def _protocol(action: str) -> bool:
    """Weighed as a protocol step, never held back for a focused boundary: a fair action, or a runner's own
    unfair option (Steer, Resume: the node's choice, not an interruption from outside)."""
    return N.ACTIONS[action].fair or N.ACTIONS[action].actor == "runner"


def swarm_names(cfg: M.Config) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The actions a swarm weighs and the boundaries it may focus on: those the configuration can take
    (`configs.possible_actions`; a feature's actions only where its constants are on), so every
    configuration without a feature draws its examples exactly as before the feature existed."""
    possible = set(configs.possible_actions(cfg))
    return (tuple(a for a in ACTION_NAMES if a in possible),
            tuple(b for b in N.BOUNDARIES if N.BOUNDARIES[b].after in possible))


def _swarm_rule(actions: tuple[str, ...], boundaries: tuple[str, ...]):
    """The initialize rule that draws an example's swarm over `actions` and `boundaries`."""
    @initialize(weights=st.fixed_dictionaries(
        {a: st.sampled_from((1, 2, 4) if a == PAUSE or _protocol(a) else (1, 1, 0, 0))
         for a in actions + ((PAUSE,) if R.TICK in actions else ())}),
        focus=st.sampled_from((None,) * (len(boundaries) // 2) + boundaries),
        probe_weight=st.sampled_from((1, 0, 2)), focus_pass=st.integers(1, 3))
    def choose_swarm(self, weights, focus, probe_weight, focus_pass):
        self.weights = {**dict.fromkeys(ACTION_NAMES + (PAUSE,), 1), **weights}
        self.probe_weight = probe_weight
        self.focus = frozenset((N.BOUNDARIES[focus].after,) if focus else ())
        # a boundary passes once per Step, a tool call's once per call (Tools 2: twice per Step)
        self.focus_pass = min(focus_pass, self.cfg.max_steps * max(1, self.cfg.tools))
    return choose_swarm


def machine_class(campaign: Campaign) -> type[RuleBasedStateMachine]:
    """A machine bound to one campaign (Hypothesis caches rules per class, so the class is made once)."""

    class Lockstep(LockstepMachine):
        choose_swarm = _swarm_rule(*swarm_names(campaign.cfg))
    Lockstep.campaign = campaign
    return Lockstep


class LockstepMachine(RuleBasedStateMachine):
    campaign: Campaign

    def __init__(self):
        super().__init__()
        self.cfg = self.campaign.cfg
        self.weights = dict.fromkeys(ACTION_NAMES + (PAUSE,), 1)
        self.focus: frozenset[str] = frozenset()  # actions after which environment actions come
        self.focus_pass = 1  # ... from the focus_pass-th time an actor passes the boundary on (a later Step's or call's)
        self.probe_weight = 1  # the weight of a refusal probe beside the enabled actions
        self.burst = False  # environment actions have been coming since a focused boundary
        self.campaign.coverage.examples += 1
        self._start()

    def _start(self) -> None:
        """A run from Init on a fresh world. An example holds several runs: when the twin can go
        no further (the bounded model ends), the next run starts at once instead of Hypothesis
        spending the rest of the example's steps on a rule that does nothing."""
        c = self.campaign
        self.sched = c.start()
        self.twin = M.init(self.cfg)
        self.burst = False
        self.path = [Step(None, (), self.twin)]
        self.enabled: list[list[tuple]] = []  # per path index: the twin's enabled instances
        self.paused: list[bool] = []  # per path index: a Tick there is a pause (spec.model.pausing)
        self.probed: set[tuple[str, str]] = set()  # (action, refusal reason) this run has probed
        self.visits: dict[M.State, list[int]] = {}
        c.coverage.runs += 1
        c.coverage.states.add(self.twin)
        self.impl = self.sched.state()
        self._check(None, self.twin, self.impl, [])

    # Swarm testing, generated from the registry: each example weighs every action (fair ones 1, 2 or 4;
    # the environment's unfair ones, interrupts, time and faults, 1 or 0 = only when nothing else is
    # enabled), so some examples run long protocol paths undisturbed and others are all interruption.
    # A Tick that would expire a working actor's lease is the pause fault, not the clock's fair progress
    # (spec.model.pausing, as in fairness): it has a weight of its own (PAUSE, drawn as a fair action's,
    # so unfocused examples pause as often as before) and under a focus it is held back like the other
    # interruptions; as a fair action there it cut most focused runs short before a later Step's window.
    # A refusal probe's weight is multiplied by NOVEL_PROBE where some refusal has a reason (its guard's
    # first failing conjunct) this run has not probed, and the probe then draws among those: code that
    # lacks a conjunct takes an attempt only where that conjunct is the one failing (a steer of a
    # recovery-owned input at an execution's start, once in a run).
    # Weights shrink to 1 (uniform over enabled actions). Rule preconditions are not used for this
    # because a swarm-disabled rule could leave no runnable rule and reject the example. A refusal probe
    # is drawn beside the actions with weight 0, 1 or 2 (shrinking to 1).
    #
    # Interruptions at a boundary: the races the protocol has to survive happen when environment
    # actions (cancels, pauses, crashes) land while an actor is held at a named boundary. Two thirds of the
    # examples pick one boundary of the registry as their focus: environment actions are then held
    # back except right after some actor passed that boundary's `after` action, where one is all but
    # certain to come next, possibly followed by more (a burst, which the next protocol step ends).
    # No focus (what it shrinks to) leaves the plain swarm. Where an execution has several Steps, the
    # focus may wait for a later pass of its boundary (a later Step's gate), up to MaxSteps.
    # (machine_class draws it over the configuration's actions and boundaries: swarm_names)
    choose_swarm = _swarm_rule(ACTION_NAMES, tuple(N.BOUNDARIES))

    @precondition(lambda self: bool(self.options))
    @rule(data=st.data())
    def steps(self, data):
        """STEPS_PER_RULE lockstep steps: Hypothesis's own work per rule (choosing it, stopping or not)
        cost as much as a step, and shrinking still works on every draw inside."""
        # outside the final (reported) example, the draw itself: data.draw's extra work is the report's
        # ("Draw 1: ..." notes) and made up a tenth of a run; the choices drawn are the same
        draw = data.draw if should_note() else data.conjecture_data.draw
        for _ in range(STEPS_PER_RULE):
            if not self.options:
                return
            self.step(draw)

    def step(self, draw) -> None:
        """Draw an enabled action (by weight) or a refusal probe (PROBE), then one of its instances
        (`draw`: a Hypothesis draw function)."""
        names = sorted({o[0] for o in self.options})
        weights = [self._weight(n) for n in names]
        if not any(weights):
            weights = [1] * len(names)
        if self.refusals and (self.probe_weight or self._at_focus()):
            names.append(PROBE)  # at a focused boundary an attempt is an interruption like the others
            novel = self._novel_refusals() is not self.refusals
            weights.append(8 * (self.probe_weight or 1) if self._at_focus() else self.probe_weight * (NOVEL_PROBE if novel else 1))
        k = draw(_integers(sum(weights) - 1)) if sum(weights) > 1 else 0
        for name, w in zip(names, weights):
            if k < w:
                break
            k -= w
        pool = self._novel_refusals() if name == PROBE else [o for o in self.options if o[0] == name]
        pick = pool[draw(_integers(len(pool) - 1)) if len(pool) > 1 else 0]
        if name == PROBE:
            self.probed.add(self._reason_key(pick))
            self.probe(*pick)
        else:
            self.advance(*pick)

    def _weight(self, name: str) -> int:
        if name == R.TICK and self.paused[-1]:
            name = PAUSE  # no more the clock's fair progress but a fault (TLA+ WF_vars(CalmTick))
        elif _protocol(name):
            return self.weights[name]
        if not self.focus:
            return self.weights[name]
        if self._at_focus():
            return 8 * (self.weights[name] or 1)  # at a focused boundary: interrupt now
        if self.burst:
            return self.weights[name]  # may go on, with the kinds the swarm allows
        return 0  # held back

    def _at_focus(self) -> bool:
        """An actor has just passed the focused boundary (at its focus_pass-th pass or later)."""
        return self.path[-1].action in self.focus and self._passes() >= self.focus_pass

    def _passes(self) -> int:
        """How often this run has passed the focused boundary so far."""
        return sum(1 for s in self.path if s.action in self.focus)

    def probe(self, name: str, params: tuple) -> None:
        """Attempt an instance the twin does not enable: the implementation must refuse it (or, where the
        protocol permits it as a stutter, take it without any visible change: harness.conformance.probes). Only actions a caller attempts with parameters of its own choice
        are probed; without this a guard the code lacks is never exercised, since the twin never asks."""
        try:
            answer = self.sched.attempt(name, params)
            impl = self.sched.state()
        except Exception as exc:  # noqa: BLE001 - a crash on a refused attempt is a failure too
            self._fail("error", [], f"probe {name}{params} raised {type(exc).__name__}: {exc}", cause=exc,
                       probe=(name, params))
        self.campaign.coverage.probes[name] += 1
        lines = probe_problems(self.cfg, self.twin, name, params, answer, impl)
        if lines:
            self._fail("divergence", [], f"probe after {self._label(-1)}: " + "\n".join(lines), probe=(name, params))
        self.impl = impl

    def _novel_refusals(self) -> list[tuple[str, tuple]]:
        """The refusals here whose reason (the guard's first failing conjunct, spec.guards.why_not, less
        its values) this run has not probed yet, else all: code that lacks a conjunct takes an attempt
        only where that conjunct is the one failing, so a probe for a reason already seen adds little."""
        here = self._here
        if here.reasons is None:
            here.reasons = [self._reason_key(o) for o in self.refusals]
        novel = [o for o, key in zip(self.refusals, here.reasons) if key not in self.probed]
        return novel or self.refusals

    def _reason_key(self, attempt: tuple[str, tuple]) -> tuple[str, str]:
        return attempt[0], _reason(G.why_not(self.cfg, self.twin, *attempt))

    @property
    def refusals(self) -> list[tuple[str, tuple]]:
        """The probe-able instances the twin does not enable here (once per state: harness.conformance.memo)."""
        here = self._here
        if here.refusals is None:
            here.refusals = refusals(self.cfg, self.twin, here.enabled)
        return here.refusals

    @precondition(lambda self: not self.options)
    @rule()
    def deadlocked(self):
        """The twin has no enabled action: nothing to do (Hypothesis needs one runnable rule)."""

    def teardown(self):
        self.campaign.coverage.boundaries.update(self.sched.names)

    def _restart_if_ended(self) -> None:
        if not self.options and len(self.path) > 1:  # (an Init with no action is the `deadlocked` rule's)
            self.teardown()
            self._start()

    @property
    def options(self):
        return self.enabled[-1]

    # ------------------------------------------------------------ one lockstep step

    def advance(self, name: str, params: tuple, nxt: M.State) -> None:
        interrupts = not _protocol(name) or (name == R.TICK and self.paused[-1])
        self.burst = interrupts and (self.burst or self.path[-1].action in self.focus)
        self.path.append(Step(name, params, nxt))
        try:
            self.sched.apply(name, params, nxt)
            impl = self.sched.state()
        except DivergenceError as exc:
            self._fail("divergence", [], f"{name}{params}: {exc}")
        except Exception as exc:  # the implementation crashed: still leave a trace behind
            self._fail("error", [], f"{name}{params} raised {type(exc).__name__}: {exc}", cause=exc)
        cov = self.campaign.coverage
        cov.actions[name] += 1
        cov.steps += 1
        cov.states.add(nxt)
        cov.edges.add((name, params, self.twin, nxt))
        if self.campaign.progress:
            self.campaign.progress(steps=cov.steps, examples=cov.examples, states=len(cov.states))
        prev, self.impl, self.twin = self.impl, impl, nxt
        self._check(prev, nxt, impl, self.campaign.memo.check_edge(prev, impl))
        self._restart_if_ended()

    def _check(self, prev, twin, impl, bad_edge) -> None:
        memo = self.campaign.memo
        bad = memo.check_state(impl) + bad_edge
        delta = diff(twin, impl, self.cfg)
        if bad or delta:
            lines = [f"after {self._label(-1)}:"]
            lines += [f"  invariant violated: {name}" for name in bad]
            lines += render_diff(delta, "  ")
            self._fail("safety" if bad else "divergence", bad, "\n".join(lines))
        here = len(self.path) - 1
        self._here = memo.here(twin)
        self.enabled.append(self._here.enabled)
        self.paused.append(self._here.paused)
        self._liveness(here)
        self.visits.setdefault(twin, []).append(here)

    def _liveness(self, here: int) -> None:
        st_ = self.path[here].state
        if not fair_enabled(self.enabled[here], self.paused[here]):
            for name, p, q in self.campaign.leads_to:
                if p(st_) and not q(st_):
                    self._fail("liveness", [name], f"stuck after {self._label(here)}: no fair action is "
                               f"enabled, {name} premise holds without its goal", loop=here)
        for j in self.visits.get(st_, ()):
            name = fair_lasso(self.path, self.enabled, j, here, self.campaign.leads_to, self.cfg)
            if name:
                self._fail("liveness", [name], f"fair cycle: steps {j}..{here} return to the same state, "
                           f"{name} premise held and its goal never does", loop=j)

    def _label(self, k: int) -> str:
        s = self.path[k]
        return "Init" if s.action is None else f"step {len(self.path) - 1 if k < 0 else k}: {s.action}{s.params}"

    def _fail(self, kind, invariants, message, *, loop=None, cause=None, probe=None):
        self.campaign.record(Found(kind, list(invariants), message, list(self.path), loop, probe))
        raise LockstepFailure(f"{kind}: {message}") from cause


# st.integers(0, hi), made once per bound (making it, even from Hypothesis's own cache, cost a draw's time)
_integers = lru_cache(maxsize=None)(lambda hi: st.integers(0, hi))


def _reason(why: str | None) -> str:
    """A refusal's reason less its values: parentheses and words with digits (names, ids) dropped."""
    return re.sub(r"\([^)]*\)|\S*\d\S*", "", why or "")


def refusals(cfg: M.Config, st: M.State, enabled) -> list[tuple[str, tuple]]:
    """Every attempt (names.ATTEMPTS) the twin does not enable in `st`, except where only the
    model's own bound disables it (execution ids beyond max_exec: the code has no such bound; a standalone
    promotion with tied wake rows), a cancel
    sent to a node that does not own the claim (routing it is the caller's job: ProcessLocalRouting),
    and recovery workers' heartbeats (only the exhaustive walk's: conform.every_refusal)."""
    taken = {(a, p) for a, p, _n in enabled}
    out = []
    if st.nextExec <= cfg.max_exec:  # tied wake rows: a promotion is a recovery wake's (the reviewed code promotes
        # a continuation from its recovery wake's redrive), so a standalone one is the model's own restriction, not probed
        out += [(a, (node, i)) for node in cfg.nodes for i in sorted(st.inputs)
                for a in (R.ACQUIRE,) + (() if cfg.wakes_tied else (R.PROMOTE_CONTINUATION,))]
    out += [(R.CANCEL_REQUEST, (node, s)) for node in cfg.nodes for k, s in enumerate(cfg.sessions)
            if not cfg.process_local_routing or st.claim[k].owner == node]
    out += [(R.HEARTBEAT, (node, s)) for node in cfg.nodes for s in cfg.sessions]
    out += [(R.RECOVERY_SCAN, (r, s)) for r in cfg.recoverers for s in cfg.sessions]
    if cfg.admission:  # a retry by any Session names any id (an input's, a forged one) with either digest
        out += [(R.ADMIT, (s,)) for s in cfg.sessions]
        ids = sorted({M.Input(i.sess, i.kind, i.src, "pending", i.gen) for i in st.inputs}
                     | {M.Input(cfg.sessions[0], "prompt", 0, "pending")})
        out += [(R.EXACT_RETRY, (s, i, d)) for s in cfg.sessions for i in ids for d in N.DIGESTS]
        out += [(R.RESUME, (node, s)) for node in cfg.nodes for s in cfg.sessions]
    if cfg.steering:
        out += [(R.STEER, (node, i)) for node in cfg.nodes for i in sorted(st.inputs)]
    assert {a for a, _p in out} <= set(N.ATTEMPTS)
    return [o for o in out if o not in taken]


# ---------------------------------------------------------------- running

@dataclass
class Outcome:
    cfg: M.Config
    coverage: Coverage
    found: Found | None
    seconds: float
    mutant: frozenset | None = None  # the implementation's own defects, when they differ from cfg's
    hypothesis_error: str | None = None  # Hypothesis's own report when it failed for another reason


def run(cfg: M.Config, *, server: Server, profile: str = "ci", settings_: settings | None = None,
        seed: int | None = None, mutant=None, progress=None) -> Outcome:
    """Run the lockstep machine on `cfg` against `server` (harness.port) under a profile (or explicit
    settings); never raises for a failure of the server: the Outcome carries it. `mutant` runs the
    server with these defects while the twin keeps `cfg`'s (mutation testing: a correct twin must catch
    a defective implementation, by a divergence or a violated invariant). `progress(steps=, examples=,
    states=)` is called after every lockstep step."""
    import time

    from hypothesis import seed as hseed
    from hypothesis.stateful import run_state_machine_as_test

    s = settings_ or PROFILES[profile]
    campaign = Campaign(cfg, server, mutant, progress)
    cls = machine_class(campaign)

    def factory():
        return cls()
    if seed is not None:
        factory = hseed(seed)(factory)
    t0 = time.perf_counter()
    other = None
    try:
        # every example runs its full step count: Hypothesis otherwise ends many examples after a few
        # steps (its search tries the stop branch), and an example holds several runs anyway (_start)
        run_state_machine_as_test(factory, settings=s, _min_steps=s.stateful_step_count)
    except LockstepFailure:
        pass
    except Exception as exc:  # noqa: BLE001 - Hypothesis errors (health checks, flakiness) are reported
        if campaign.last is None:
            other = f"{type(exc).__name__}: {exc}"
    finally:
        campaign.close()
    found = campaign.found[-1] if campaign.found else campaign.last
    return Outcome(cfg, campaign.coverage, found, time.perf_counter() - t0, mutant=campaign.mutant,
                   hypothesis_error=other)

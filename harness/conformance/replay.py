"""Replay a trace against a system under test (a port's Server, harness.port), in lockstep with the twin.

Each step is applied to the twin and, through the port, to the server's world; after every step the
world's mapped state must equal the twin's, every state and action invariant must
hold on it, and the step's named boundary must have fired. A replay is never vacuous: a step that cannot
be taken, or a boundary that does not fire, fails it. At the end the trace's `expect` block and the goals of
its liveness properties are checked on the implementation's final state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from spec import guards as G
from spec import invariants as I
from spec import model as M
from spec import names as N

from harness.traces import expect as X
from harness.traces import trace as T
from harness.engines.liveness import fair_enabled
from harness.port import DivergenceError, Server
from harness.conformance import boundaries
from harness.conformance.diff import diff
from harness.conformance.probes import problems as probe_problems

TRACES = Path(__file__).resolve().parents[2] / "traces"


@dataclass
class StepRecord:
    index: int  # 1-based
    action: str
    params: tuple
    boundary: str | None
    fired: list[str] = field(default_factory=list)  # boundaries hit during the step
    violated: list[str] = field(default_factory=list)
    note: str | None = None
    refused: bool = False  # a step the twin does not enable: refused (an attempt) or not taken (an actor's step)
    took: str | None = None  # a refused actor step: what the actor, asked to move, took ("none" or the action)


@dataclass
class ReplayResult:
    name: str
    trace: T.Trace
    cfg: M.Config
    steps: list[StepRecord] = field(default_factory=list)
    violated: list[str] = field(default_factory=list)  # invariant / property names, first occurrence order
    problems: list[str] = field(default_factory=list)  # divergence, unfired boundary, failed expectation
    warnings: list[str] = field(default_factory=list)  # not failures: a liveness expectation held vacuously
    final: M.State | None = None
    completed: bool = False  # every step ran, in lockstep, with its boundary
    followed: list[StepRecord] = field(default_factory=list)  # a defect's continuation past a refused step

    @property
    def ok(self) -> bool:
        return not self.violated and not self.problems

    @property
    def consumed(self) -> int:
        return len(self.steps)

    def _violate(self, names, where: str | None = None) -> None:
        for n in names:
            if n not in self.violated:  # report each property where it first breaks
                self.violated.append(n)
                if where:
                    self.problems.append(f"{where}: {n} violated")


def parse_steps(trace: T.Trace, cfg: M.Config, name: str) -> list[tuple]:
    """Validate every step (and the names `expect` uses) up front, so a malformed trace fails before
    anything runs; returns each step's parameters (harness.traces.trace.check_steps)."""
    return T.check_steps(trace, cfg, name)


def liveness_failures(cfg: M.Config, st: M.State, names) -> list[tuple[str, str]]:
    """(property, Session) where the final state satisfies the property's premise and not its goal."""
    out = []
    for name in names:
        if N.INVARIANTS[name].kind != "liveness":
            continue
        out += [(name, sess) for sess, p, q in I.leads_to(name, cfg) if p(st) and not q(st)]
    return out


def check_expect(cfg: M.Config, st: M.State, ex: T.Expect) -> list[str]:
    """Each failed expectation as one line naming its field, expected beside actual (harness.traces.expect)."""
    return X.check(cfg, st, ex)


def replay(trace: T.Trace, defects=None, name: str = "trace", *, server: Server) -> ReplayResult:
    """Replay `trace` (defects override the recorded switches) against a world `server` starts (the
    bundled server, binding.server.Bundled, or one behind a driver, harness.driver.client.Sut; the
    server's failure to start one propagates). Raises TraceError when it is malformed,
    which includes a step the twin does not enable under the trace's own switches (the message names the
    failing guard conjunct and what is enabled). Under other switches (`defects`) such a step is a finding
    of the replay, not bad input: a defect may change what the twin enables."""
    cfg = T.config_of(trace, defects, name)
    all_params = parse_steps(trace, cfg, name)
    same_switches = defects is None or set(defects) == set(trace.config.defects)
    if same_switches:
        T.check_enabled(trace, cfg, all_params, name)
    res = ReplayResult(name, trace, cfg)
    mutant = (cfg.defects | set(trace.mutant)) if trace.mutant else None  # the code's own defects
    sched = server.start(cfg, mutant=mutant)
    hits = sched.hits
    twin = M.init(cfg)
    impl = sched.state()
    res._violate(I.check_state(cfg, impl), "initial state")
    seen = [impl]  # the implementation's mapped states, by step index
    for k, (step, params) in enumerate(zip(trace.steps, all_params), start=1):
        rec = StepRecord(k, step.action, params, step.boundary, note=step.note, refused=step.refused)
        label = f"step {k} {step.action}({fmt_params(params)})"
        nxt = M.apply(cfg, twin, step.action, params)
        if step.refused:
            moved = _refused(res, sched, cfg, (twin, impl), nxt, step, rec, label, hits)
            if moved is None:
                break
            twin, impl = moved
            seen.append(impl)
            continue
        if nxt is None:
            res.problems.append(f"step {k} {G.explain(cfg, twin, step.action, params)}; "
                                f"{len(trace.steps) - k + 1} step(s) not consumed")
            break
        if same_switches and step.state is not None and T.state_from_json(cfg, step.state, f"{name}: steps[{k - 1}]") != nxt:
            res.problems.append(f"{label}: the twin's state differs from the state recorded in the trace")
            break
        mark = len(hits)
        res.steps.append(rec)
        try:
            sched.apply(step.action, params, nxt)
        except DivergenceError as exc:
            res.problems.append(f"{label}: divergence: {exc}")
            impl = sched.state()
            break
        except Exception as exc:  # noqa: BLE001 - the implementation's failure is the finding
            res.problems.append(f"{label}: the implementation raised {type(exc).__name__}: {exc}")
            break
        rec.fired = [h for h, _ in hits[mark:]]
        got = sched.state()
        rec.violated = I.check_state(cfg, got) + I.check_edge(cfg, impl, got)
        res._violate(rec.violated, label)
        delta = diff(nxt, got, cfg)
        impl, twin = got, nxt
        seen.append(got)
        if delta:
            res.problems += [f"{label}: divergence: {d}" for d in delta]
            break
        if not cfg.defects and (stray := boundaries.problem(step.action, rec.fired)):
            res.problems.append(f"{label}: divergence: the implementation {stray}")
            break
        if step.boundary and step.boundary not in rec.fired:
            res.problems.append(f"{label}: boundary {step.boundary} did not fire (fired: {', '.join(rec.fired) or 'none'})")
            break
    else:
        res.completed = True
    res.final = impl
    _judge_liveness(res, seen)
    if trace.expect is not None:
        _judge_vacuity(res, seen)
        mine = check_expect(cfg, impl, trace.expect)
        res.problems += mine + [f"the twin: {b}" for b in check_expect(cfg, twin, trace.expect) if b not in mine]
    return res


def _refused(res, sched, cfg, states, nxt, step, rec, label, hits):
    """A step marked `refused` (the twin does not enable it): (twin, implementation) states to go on from,
    or None with the problem recorded. An attempt: the implementation must refuse it, its state staying
    the twin's. An actor's own step: the actor, asked to move, takes none or an action the twin enables
    for it (the one `instead` names, when the step names one), never the refused one. An environment or
    fault action: nothing is asked of the implementation."""
    twin, impl = states
    if nxt is not None:
        res.problems.append(f"{label}: marked refused, but the twin enables it")
        bad = I.check_state(cfg, nxt) + I.check_edge(cfg, twin, nxt)
        res._violate(bad, f"{label} (enabled here)")
        if not bad:
            _follow_defect(res, sched, cfg, (twin, impl), (rec.action, rec.params, nxt), rec.index)
        return None
    mark = len(hits)
    res.steps.append(rec)
    if not _asks_an_actor(rec.action):
        return twin, impl
    try:
        answer = sched.attempt(rec.action, rec.params) if rec.action in N.ATTEMPTS else sched.move(rec.action, rec.params[0])
    except Exception as exc:  # noqa: BLE001 - the implementation's failure is the finding
        res.problems.append(f"{label}: the implementation raised {type(exc).__name__}: {exc}")
        return None
    rec.fired = [h for h, _ in hits[mark:]]
    got = sched.state()
    rec.violated = I.check_state(cfg, got) + I.check_edge(cfg, impl, got)
    res._violate(rec.violated, label)
    if rec.action in N.ATTEMPTS:
        delta = diff(twin, got, cfg)
        if delta:
            res.problems.append(f"{label}: the implementation took it ({answer}) although the twin does not enable it")
            res.problems += [f"{label}: divergence: {d}" for d in delta]
            return None
        lines = probe_problems(cfg, twin, rec.action, rec.params, answer, got)
        if lines:  # accepted with nothing changed, but the protocol requires the refusal (spec.refusals)
            res.problems += [f"{label}: {line}" for line in lines]
            return None
        return twin, got
    return _moved(res, cfg, twin, got, step, rec, label, answer)


FOLLOW_DEPTH = 6  # steps past the refused one; FOLLOW_STATES bounds the search
FOLLOW_STATES = 50_000


def _follow_defect(res, sched, cfg, states, edge, index) -> None:
    """A refused step that the twin, under other switches, enables without breaking anything yet: take it
    on both sides and follow the twin's shortest continuation (at most FOLLOW_DEPTH steps) to the first
    broken invariant, checking the implementation along it, so the verdict names what the defect breaks
    (tool-settled-before-publication: the Step ends, then the claim is cleared with the call open)."""
    path = _shortest_violation(cfg, edge[2])
    if path is None:
        return
    twin, impl = states
    for k, (action, params, nxt) in enumerate([edge] + path):
        rec = StepRecord(index + k, action, params, None)
        res.followed.append(rec)
        label = f"step {rec.index} {action}({fmt_params(params)}) (the defect's continuation)"
        try:
            sched.apply(action, params, nxt)
        except Exception as exc:  # noqa: BLE001 - a divergence or crash ends the continuation
            res.problems.append(f"{label}: {type(exc).__name__}: {exc}")
            return
        got = sched.state()
        rec.violated = I.check_state(cfg, got) + I.check_edge(cfg, impl, got)
        res._violate(rec.violated, label)
        delta = diff(nxt, got, cfg)
        if delta:
            res.problems += [f"{label}: divergence: {d}" for d in delta]
            return
        twin, impl = nxt, got


def _shortest_violation(cfg: M.Config, start: M.State):
    """The twin's shortest path of steps from `start` whose last edge breaks a state or action invariant."""
    frontier, parent = [start], {start: None}
    for _depth in range(FOLLOW_DEPTH):
        nxt_frontier = []
        for st in frontier:
            for action, params, nxt in M.successors(cfg, st):
                if nxt in parent:
                    continue
                parent[nxt] = (st, action, params)
                if I.check_state(cfg, nxt) or I.check_edge(cfg, st, nxt):
                    path, cur = [], nxt
                    while parent[cur] is not None:
                        prev, a, p = parent[cur]
                        path.append((a, p, cur))
                        cur = prev
                    return path[::-1]
                if len(parent) > FOLLOW_STATES:
                    return None
                nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return None


def _asks_an_actor(action: str) -> bool:
    """A refused step of this action asks the implementation something: an attempt, or an actor's step."""
    return action in N.ATTEMPTS or N.ACTIONS[action].actor in N.STEPPING_ACTORS


def _moved(res, cfg, twin, got, step, rec, label, took):
    """The actor of a refused step took `took` (an action name, or None): the twin's state it must match
    (unchanged, or that action's successor for the actor), or None with the problem recorded."""
    who = rec.params[0]
    if took is None:
        rec.took = "none"
        if step.instead is not None:
            res.problems.append(f"{label}: {who} took no step; the trace expects it to take {step.instead} instead")
            return None
        expected = twin
    elif took == rec.action:
        rec.took = f"{took}({who})"
        res.problems.append(f"{label}: {who} took {took}, the refused action, although the twin does not enable it")
        res.problems += [f"{label}: divergence: {d}" for d in diff(twin, got, cfg)]
        return None
    else:
        moves = [m for m in T.actor_moves(cfg, twin, rec.action, who) if m[0] == took]
        if not moves:
            enabled = ", ".join(f"{a}({fmt_params(p)})" for a, p, _ in T.actor_moves(cfg, twin, rec.action, who))
            rec.took = took
            res.problems.append(f"{label}: {who} took {took}, which the twin does not enable for it here "
                                f"(it enables: {enabled or 'nothing'})")
            return None
        action, params, expected = next((m for m in moves if m[2] == got), moves[0])
        rec.took = f"{action}({fmt_params(params)})"
        if step.instead is not None and action != step.instead:
            res.problems.append(f"{label}: {who} took {rec.took}; the trace expects it to take {step.instead} instead")
            return None
    delta = diff(expected, got, cfg)
    if delta:
        res.problems += [f"{label}: {who} took {rec.took}: divergence: {d}" for d in delta]
        return None
    return expected, got


def _judge_vacuity(res: ReplayResult, seen: list[M.State]) -> None:
    """A liveness property the trace expects to hold (expect.invariants) whose premise is false on every
    state of the replay holds only vacuously: a warning, or a failure when expect.non_vacuous names it.
    Judged on a replay that ran to its end (a shorter one has failed already)."""
    ex = res.trace.expect
    if not res.completed:
        return
    live = [p for p in ex.invariants if N.INVARIANTS[p].kind == "liveness"]
    for prop in dict.fromkeys(ex.non_vacuous + live):
        if X.premise_held(res.cfg, seen, prop):
            continue
        if prop in ex.non_vacuous:
            res.problems.append(f"expect.non_vacuous: {prop} holds only vacuously: its premise is false on every "
                                f"state of the replay ({len(seen)} states)")
        else:
            res.warnings.append(f"{prop} holds only vacuously: its premise is false on every state of the replay "
                                "(expect.non_vacuous would make this fail)")


def _unfair(cfg: M.Config, states: list[M.State], steps) -> str | None:
    """A fair action instance enabled on every state of the loop and taken on none of its steps."""
    enabled = [fair_enabled(list(M.successors(cfg, st)), M.pausing(cfg, st)) for st in states]
    taken = {(s.action, T.params_from_json(s.action, s.params, "loop")) for s in steps}
    missing = sorted(set.intersection(*enabled) - taken, key=repr)
    return f"{missing[0][0]}({fmt_params(missing[0][1])})" if missing else None


def _judge_liveness(res: ReplayResult, seen: list[M.State]) -> None:
    """A lasso (trace with `loop`) violates a property when it closes on the implementation, is weakly fair
    (on the twin's enabled actions), and the property's premise holds without its goal on every state of
    the loop; a goal the trace expects
    (expect.invariants) must be reached wherever the schedule ended. A lasso that did not run to its end
    proves nothing about liveness (its divergence is already reported)."""
    trace, cfg = res.trace, res.cfg
    expected = trace.expect.invariants if trace.expect else []
    claimed = trace.meta.invariants if res.completed else []
    if res.completed and trace.loop is not None and seen[-1] != seen[trace.loop]:
        res.problems.append(f"loop: the state after the last step is not the state after step {trace.loop}; "
                            "the lasso does not close on the implementation")
        claimed = []
    if claimed and trace.loop is not None:
        unfair = _unfair(cfg, seen[trace.loop:], trace.steps[trace.loop:])
        if unfair:
            res.problems.append(f"loop: not weakly fair: {unfair} is enabled on every state of the loop and "
                                "never taken, so the lasso is no counterexample")
            claimed = []
    if claimed and trace.loop is not None:
        loop_states = seen[trace.loop:]
        kinds = {I.step_kind(s.action, M.pausing(cfg, loop_states[k]))
                 for k, s in enumerate(trace.steps[trace.loop:]) if k < len(loop_states)}
        for prop in [p for p in claimed if kinds & I.CEASING.get(p, frozenset())]:
            res.problems.append(f"loop: it takes a fault step ({', '.join(sorted(kinds & I.CEASING[prop]))}), "
                                f"so faults recur forever: outside the premise of {prop}")
            claimed = [p for p in claimed if p != prop]
    found = {}
    for prop in dict.fromkeys(claimed + expected):
        states = seen[trace.loop:] if prop in claimed and trace.loop is not None else [seen[-1]]
        bad = set.intersection(*(set(liveness_failures(cfg, st, [prop])) for st in states))
        for _, sess in sorted(bad):
            found.setdefault(prop, []).append(sess)
    for prop, sessions in found.items():
        res._violate([prop])
        where = "on every state of the loop" if trace.loop is not None and prop in claimed else "at the end"
        whom = ", ".join(sessions)  # Sessions, or the wake properties' labels ("wake row 3", "wake rows")
        whom = f"Session {whom}" if all(s in cfg.sessions for s in sessions) else whom
        res.problems.append(f"{prop} violated for {whom}: its premise holds {where}, its goal never")


def replay_file(path, defects=None, *, server: Server) -> ReplayResult:
    return replay(T.load(path), defects, str(path), server=server)


def committed_traces(root: Path = TRACES) -> list[Path]:
    """The committed race traces: traces/*.json (not traces/found/; the schema is in traces/schema/)."""
    return sorted(Path(root).glob("*.json"))


def replay_through(trace: T.Trace, defects, name: str, server: Server) -> ReplayResult:
    """`replay` against `server`, for a run of many traces: a server that breaks outside a step (a driver
    at `start`, or observing Init) fails this trace with its message as the problem, and the next replay
    starts it again."""
    try:
        return replay(trace, defects, name, server=server)
    except T.TraceError:
        raise
    except Exception as exc:  # noqa: BLE001 - the server's own failure (a driver's DriverError)
        res = ReplayResult(name, trace, T.config_of(trace, defects, name))
        res.problems.append(str(exc))
        return res


def replay_all(root: Path = TRACES, defects=None, progress=None, *, server: Server) -> list[ReplayResult]:
    """What the gate runs: every committed trace against the (correct, unless `defects`) server.
    `progress(done=, steps=)` after each trace."""
    out: list[ReplayResult] = []
    for p in committed_traces(root):
        out.append(replay_through(T.load(p), defects, str(p), server))
        if progress:
            progress(done=len(out), steps=sum(r.consumed for r in out))
    return out


# ---------------------------------------------------------------- report

def fmt_params(params: tuple) -> str:
    return ", ".join(f"{i.sess}/{i.kind}#{i.src}" + (f"/{i.flaw}" if i.flaw else "") if isinstance(i, M.Input)
                     else str(i) for i in params)


def render(res: ReplayResult) -> str:
    lines = [f"replay {res.name}: {res.trace.meta.title}",
             f"  defects: {', '.join(sorted(res.cfg.defects)) or 'none'}"
             + (f"; in the implementation only: {', '.join(res.trace.mutant)}" if res.trace.mutant else "")]
    for r in res.steps:
        gate = ""
        if r.boundary:
            gate = f"  [{r.boundary} {'fired' if r.boundary in r.fired else 'NOT FIRED'}]"
        bad = f"  VIOLATES {', '.join(r.violated)}" if r.violated else ""
        note = f"  -- {r.note}" if r.note else ""
        if r.refused and r.took is not None:
            note += f"  [refused; {r.params[0]} took {r.took}]"
        elif r.refused:
            note += "  [must be refused]" if _asks_an_actor(r.action) else "  [not enabled in the twin]"
        lines.append(f"  {r.index:3d}  {r.action}({fmt_params(r.params)}){gate}{bad}{note}")
    if res.followed:
        lines.append("       under these switches the refused step is taken; the twin's shortest way on to a violation:")
        lines += [f"  {r.index:3d}  {r.action}({fmt_params(r.params)})"
                  + (f"  VIOLATES {', '.join(r.violated)}" if r.violated else "") for r in res.followed]
    if res.trace.loop is not None:
        lines.append(f"       (loop back to step {res.trace.loop}; replayed once)")
    lines.append(f"  steps:   {res.consumed}/{len(res.trace.steps)} consumed")
    lines += [f"  warning: {w}" for w in res.warnings]
    if res.ok:
        lines.append("  verdict: PASS, every invariant and expectation holds")
    else:
        if res.violated:
            lines.append(f"  verdict: FAIL, violates {', '.join(res.violated)}")
        else:
            lines.append("  verdict: FAIL")
        lines += [f"    - {p}" for p in res.problems]
    return "\n".join(lines)

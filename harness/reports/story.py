"""A trace as a story: each step attributed to its actor, with what it changed where (the database, a
node's publisher memory, the actor's own record), what it calls (the database, the provider, publisher
memory, or nothing shared), the boundaries it holds and hits, the invariants it breaks on the twin and
the twin's state after it. harness/reports/explain.py (text, mermaid) and explain_html.py render it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from spec import guards
from spec import invariants as I
from spec import model as M
from spec import names as N

from harness import registry as R
from harness.traces import trace as T
from harness.conformance.replay import fmt_params, liveness_failures, parse_steps, replay

DB = "database"
PROVIDER = "provider"
OWN = ""  # an effect on the actor's own record (its program counter), or the run's fault bookkeeping

# Where a step goes, beside its actor's own record: every other action is one database transaction.
TO_PROVIDER = frozenset({R.DISPATCH})  # the provider call begins: an external effect, no transaction
TO_MEMORY = frozenset({R.STEP_STARTED_RETURN, R.STEP_FAILED_RETURN, R.RUNNER_EXIT})  # publisher memory
LOCAL = frozenset({R.RUNNER_STOP, R.TICK, R.CRASH})  # the actor's own step: nothing shared is called


def memory_of(node: str) -> str:
    """The participant for a node's publisher memory (the runner's in-process record of its assistant)."""
    return f"memory@{node}"


def target_of(action: str, params: tuple) -> str | None:
    """What a step calls: the database, the provider or a node's publisher memory; None for a step of the
    actor's own (RunnerStop, the clock's Tick, a Crash), which a diagram draws as a note, not an arrow."""
    if action in LOCAL:
        return None
    if action in TO_PROVIDER:
        return PROVIDER
    if action in TO_MEMORY:
        return memory_of(params[0])
    return DB


@dataclass
class Line:
    index: int
    actor: str
    action: str
    params: tuple
    effects: list[str] = field(default_factory=list)
    boundary: str | None = None  # the gate the trace holds this actor at
    fired: list[str] = field(default_factory=list)  # boundaries the implementation hit in this step
    violated: list[str] = field(default_factory=list)
    note: str | None = None
    reach: list[tuple[str, str]] = field(default_factory=list)  # (DB | memory@n | OWN, effect), as effects
    state: M.State | None = None  # the twin's state after the step

    @property
    def target(self) -> str | None:
        return target_of(self.action, self.params)


@dataclass
class Story:
    title: str
    cfg: M.Config
    lines: list[Line]
    stuck: str | None  # a step the twin could not take (with --defect overrides)
    final_violated: list[str]
    loop: int | None
    init: M.State | None = None


def actor_of(action: str, params: tuple) -> str:
    kind = N.ACTIONS[action].actor
    if kind == "environment":
        return "clock" if action == R.TICK else "wake rows"  # (fresh arrivals, a woken redrive's loss)
    if kind == "waker":
        return "waker"
    if kind == "fault":
        return "adversary"
    if kind == "caller":
        return "caller"
    if kind == "node":
        return f"heartbeat@{params[0]}"
    return f"{kind}@{params[0]}"


def _claim(c: M.Claim) -> str:
    if c.phase == "none":
        return "none"
    extra = (f" a{c.asst}" if c.asst else "") + (" quarantined" if c.quar else "")
    return f"e{c.exec} {c.owner} {c.phase} ttl{c.ttl}{extra}"


def _wake(x: M.Wake) -> str:
    if not x.work:
        return "none"
    return f"counter {x.tries}" + (f" reserved ({x.woken})" if x.woken else "")


def commit_line(e: M.Event) -> str:
    """A committed log event: a Step event of an assistant under a claim, or a request naming its input (a
    prompt by number, a continuation by its execution negated) with the content when not the admitted."""
    if e.kind == N.REQUEST_KIND:
        named = f"{e.sess}/prompt{e.asst}" if e.asst > 0 else f"{e.sess}/cont{-e.asst}"
        return f"commit {e.kind} {named}" + (f" (content {e.node})" if e.node else "")
    return f"commit Step.{e.kind} a{e.asst} ({e.sess}, by {e.node})"


def effects(cfg: M.Config, st: M.State, nx: M.State) -> list[str]:
    """What one step changed, durable effects first."""
    return [e for _, e in effect_items(cfg, st, nx)]


def effect_items(cfg: M.Config, st: M.State, nx: M.State) -> list[tuple[str, str]]:
    """What one step changed, each with where it lives: the database (DB), a node's publisher memory
    (memory_of), or the actor's own record (OWN); durable effects first."""
    db = [commit_line(e) for e in nx.log[len(st.log):]]
    for s, c, d in zip(cfg.sessions, st.claim, nx.claim):
        if c != d:
            db.append(f"claim {s}: {_claim(c)} -> {_claim(d)}")
    db += [f"recovery row ({r.sess}, e{r.exec})" for r in sorted(nx.recovery - st.recovery)]
    db += [f"input {i.sess}/{i.kind}{i.src} {i.state}" for i in sorted(nx.inputs - st.inputs)]
    db += [f"wake row {w}: {_wake(x)} -> {_wake(y)}" for w, (x, y) in enumerate(zip(st.wakes, nx.wakes), 1) if x != y]
    out = [(DB, e) for e in db]
    for n, r, r2 in zip(cfg.nodes, st.run, nx.run):
        if (r.mem, r.active) != (r2.mem, r2.active):
            out.append((memory_of(n), f"memory@{n}: a{r2.mem} {'active' if r2.active else 'inactive'}"))
        if r.pc != r2.pc:
            out.append((OWN, f"runner@{n} {r.pc} -> {r2.pc}"))
    for n, f, f2 in zip(cfg.nodes, st.fin, nx.fin):
        if f.pc != f2.pc:
            out.append((OWN, f"finalizer@{n} {f.pc} -> {f2.pc}"))
    for r, w, w2 in zip(cfg.recoverers, st.rec, nx.rec):
        if w.pc != w2.pc:
            out.append((OWN, f"recovery@{r} {w.pc} -> {w2.pc}"))
    out += [(OWN, f"fault: {x}") for x in sorted(nx.faults - st.faults)]
    return out


def story(trace: T.Trace, defects=None, name: str = "trace", *, server) -> Story:
    """The trace's story; `server` (harness.port) replays it for the boundaries each step passes."""
    cfg = T.config_of(trace, defects, name)
    bare = trace.model_copy(deep=True)  # the code's own boundary hits, whatever gates the trace names
    for step in bare.steps:
        step.boundary = None
    fired = {r.index: r.fired for r in replay(bare, defects, name, server=server).steps}
    st = init = M.init(cfg)
    lines, stuck = [], None
    for k, (step, params) in enumerate(zip(trace.steps, parse_steps(trace, cfg, name)), start=1):
        nx = M.apply(cfg, st, step.action, params)
        if step.refused and nx is None:  # the twin does not enable it: nothing changes, or the actor moves
            nx = T.refused_next(cfg, st, step, params, f"{name}: steps[{k - 1}]")
            said = "must be refused: the twin does not enable it" + (
                f"; the actor takes {step.instead} instead" if step.instead else "")
            reach = [(OWN, said)] + effect_items(cfg, st, nx)
            lines.append(Line(k, actor_of(step.action, params), step.action, params, [e for _, e in reach], None,
                              fired.get(k, []), I.check_state(cfg, nx) + I.check_edge(cfg, st, nx) if nx != st else [],
                              step.note, reach, nx))
            st = nx
            continue
        if nx is None:
            stuck = f"step {k} {guards.explain(cfg, st, step.action, params)}"
            break
        reach = effect_items(cfg, st, nx)
        lines.append(Line(k, actor_of(step.action, params), step.action, params, [e for _, e in reach],
                          step.boundary, fired.get(k, []), I.check_state(cfg, nx) + I.check_edge(cfg, st, nx),
                          step.note, reach, nx))
        st = nx
    props = trace.meta.invariants + (trace.expect.invariants if trace.expect else [])
    final = sorted({p for p, _ in liveness_failures(cfg, st, props)})
    return Story(trace.meta.title, cfg, lines, stuck, final, trace.loop, init)


def first_violations(s: Story):
    """Each line with the invariants it is the first to break."""
    seen = set()
    for ln in s.lines:
        new = [v for v in ln.violated if v not in seen]
        seen |= set(new)
        yield ln, new

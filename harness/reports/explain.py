"""`claimcheck explain`: a trace as a story a reviewer can follow.

Each step is attributed to its actor (the runner or finalizer on a node, a node's heartbeat, a recovery
worker, the clock, the adversary), with what it committed (claim changes, events, recovery rows, inputs),
what it changed in memory, the listener gate it stops at, and the invariants it breaks on the twin. `text`
is for terminals; `mermaid` is a `sequenceDiagram` to paste into a review thread (the actors, the provider,
each node's publisher memory and the database as participants, the trace's notes, a lasso's loop, and a
legend for every arrow and abbreviation it uses); `html` (harness/reports/explain_html.py) is a page of
its own with one lane per actor and the state after every step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
        return "clock"
    if kind == "fault":
        return "adversary"
    if kind == "node":
        return f"heartbeat@{params[0]}"
    return f"{kind}@{params[0]}"


def _claim(c: M.Claim) -> str:
    if c.phase == "none":
        return "none"
    extra = (f" a{c.asst}" if c.asst else "") + (" quarantined" if c.quar else "")
    return f"e{c.exec} {c.owner} {c.phase} ttl{c.ttl}{extra}"


def effects(cfg: M.Config, st: M.State, nx: M.State) -> list[str]:
    """What one step changed, durable effects first."""
    return [e for _, e in effect_items(cfg, st, nx)]


def effect_items(cfg: M.Config, st: M.State, nx: M.State) -> list[tuple[str, str]]:
    """What one step changed, each with where it lives: the database (DB), a node's publisher memory
    (memory_of), or the actor's own record (OWN); durable effects first."""
    db = [f"commit Step.{e.kind} a{e.asst} ({e.sess}, by {e.node})" for e in nx.log[len(st.log):]]
    for s, c, d in zip(cfg.sessions, st.claim, nx.claim):
        if c != d:
            db.append(f"claim {s}: {_claim(c)} -> {_claim(d)}")
    db += [f"recovery row ({r.sess}, e{r.exec})" for r in sorted(nx.recovery - st.recovery)]
    db += [f"input {i.sess}/{i.kind}{i.src} {i.state}" for i in sorted(nx.inputs - st.inputs)]
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


def story(trace: T.Trace, defects=None, name: str = "trace") -> Story:
    cfg = T.config_of(trace, defects, name)
    bare = trace.model_copy(deep=True)  # the code's own boundary hits, whatever gates the trace names
    for step in bare.steps:
        step.boundary = None
    fired = {r.index: r.fired for r in replay(bare, defects, name).steps}
    st = init = M.init(cfg)
    lines, stuck = [], None
    for k, (step, params) in enumerate(zip(trace.steps, parse_steps(trace, cfg, name)), start=1):
        nx = M.apply(cfg, st, step.action, params)
        if step.refused and nx is None:  # an attempt the implementation must refuse: nothing changes
            lines.append(Line(k, actor_of(step.action, params), step.action, params,
                              ["must be refused: the twin does not enable it"], None, fired.get(k, []), [], step.note,
                              [(OWN, "must be refused: the twin does not enable it")], st))
            continue
        if nx is None:
            stuck = f"step {k} {step.action}({fmt_params(params)}) is not enabled"
            break
        reach = effect_items(cfg, st, nx)
        lines.append(Line(k, actor_of(step.action, params), step.action, params, [e for _, e in reach],
                          step.boundary, fired.get(k, []), I.check_state(cfg, nx) + I.check_edge(cfg, st, nx),
                          step.note, reach, nx))
        st = nx
    props = trace.meta.invariants + (trace.expect.invariants if trace.expect else [])
    final = sorted({p for p, _ in liveness_failures(cfg, st, props)})
    return Story(trace.meta.title, cfg, lines, stuck, final, trace.loop, init)


def _first_violations(s: Story):
    seen = set()
    for ln in s.lines:
        new = [v for v in ln.violated if v not in seen]
        seen |= set(new)
        yield ln, new


def text(s: Story) -> str:
    actors = list(dict.fromkeys(ln.actor for ln in s.lines))
    width = max([len(a) for a in actors] + [5])
    out = [f"{s.title}", f"  defects: {', '.join(sorted(s.cfg.defects)) or 'none'}",
           f"  actors:  {', '.join(actors)}", ""]
    for ln, new in _first_violations(s):
        out.append(f"  {ln.index:3d}  {ln.actor:<{width}}  {ln.action}({fmt_params(ln.params)})"
                   + (f"   -- {ln.note}" if ln.note else ""))
        pad = " " * (9 + width)
        out += [f"{pad}{e}" for e in ln.effects]
        for b in dict.fromkeys(([ln.boundary] if ln.boundary else []) + ln.fired):
            held = "held here by the trace" if b == ln.boundary else "passed"
            out.append(f"{pad}|| boundary {b} ({held}{'' if b in ln.fired else ', NOT hit by the implementation'})")
        out += [f"{pad}!! VIOLATES {v}: {N.INVARIANTS[v].doc}" for v in new]
    if s.loop is not None:
        out.append(f"       ... and back to step {s.loop}, forever")
    if s.stuck:
        out.append(f"  stuck: {s.stuck}")
    out += [f"  !! VIOLATES {v} at the end: {N.INVARIANTS[v].doc}" for v in s.final_violated]
    out += ["", "  per actor:"]
    for a in actors:
        out.append(f"    {a}: " + ", ".join(f"{ln.index} {ln.action}" for ln in s.lines if ln.actor == a))
    return "\n".join(out)


def _mid(actor: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", actor)


def _safe(t: str) -> str:
    """Text mermaid takes as is: `;` ends a statement and `#` starts an entity code there."""
    return t.replace(";", ",").replace("#", "")


# The abbreviations a diagram may use, each explained in its legend when (and only when) it appears.
SHORTHAND = (
    (r"\be\d+\b", "eN: execution N (execution ids are global)"),
    (r"\ba\d+\b", "aN: assistant N, the assistant of execution N (a0: none)"),
    (r"\bttl\d+\b", "ttlN: N clock ticks left on the claim's lease (ttl0: expired)"),
    (r"\b\w+/prompt\d+", "s1/prompt1: Session s1's input, prompt number 1"),
    (r"\b\w+/cont\d+", "s1/cont1: Session s1's continuation of recovered execution 1"),
    (r"Step\.\w+ a\d+ \(\w+, by \w+\)", "Step.X aN (s, by n): event X of assistant N appended to "
                                         "Session s's log under n's claim"),
    (r"\brecovery row \(", "recovery row (s, eN): a session_recovery row of Session s for execution N"),
    (r"\bheld at ", "held at B: the trace holds the actor at boundary B (a listener gate) until its next step"),
    (r"\bVIOLATES\b", "VIOLATES X: invariant X of the registry first breaks at this step"),
    (r"\bfault: ", "fault: F: the run's first fault of kind F (pause: a lease expires while its owner works, "
                   "crash: a node process dies, corrupt: an adversary's recovery row)"),
)


def _legend(participants: dict[str, str], body: list[str], loop: bool) -> list[str]:
    """One rendered note over every participant: what each kind of participant and arrow stands for,
    then each abbreviation the body uses."""
    text = "\n".join(body)
    rows = ["Legend", "a numbered arrow is one step of the trace, from the actor that takes it, to:"]
    if DB in participants:
        rows.append("- database: the step is one committed transaction")
    if PROVIDER in participants:
        rows.append("- provider: the provider call begins (an external effect, no transaction)")
    if any(p.startswith(memory_of("")) for p in participants):
        rows.append("- publisher memory@n: node n's in-process record of its current assistant")
    rows += ["a numbered note on an actor alone: a step that calls nothing shared (its own record, the clock)",
             "a dashed arrow: another effect of the same step, outside what it called",
             "a note over a participant: what the step changed there (before -> after)",
             "a note over an actor and its target: the trace's own note on the step"]
    if loop:
        rows.append("loop: the steps inside repeat forever (a lasso)")
    rows += [why for pattern, why in SHORTHAND if re.search(pattern, text)]
    ids = list(participants.values())
    span = ids[0] if len(ids) == 1 else f"{ids[0]},{ids[-1]}"
    return [f"  Note over {span}: {_safe('<br/>'.join(rows))}"]


def _participants(s: Story) -> dict[str, str]:
    """Participant name -> mermaid id: the actors in order of appearance, then the provider, each node's
    publisher memory and the database, those that some step reaches."""
    out = {a: _mid(a) for a in dict.fromkeys(ln.actor for ln in s.lines)}
    reached = {ln.target for ln in s.lines} | {t for ln in s.lines for t, _ in ln.reach if t != OWN}
    if PROVIDER in reached:
        out[PROVIDER] = PROVIDER
    for n in s.cfg.nodes:
        if memory_of(n) in reached:
            out[memory_of(n)] = f"mem_{_mid(n)}"
    if DB in reached:
        out[DB] = "DB"
    return out


def _label(name: str) -> str:
    return f"publisher {name}" if name.startswith(memory_of("")) else name


def _step(ln: Line, new: list[str], ids: dict[str, str], indent: str) -> list[str]:
    """One step: an arrow to what it calls (a note on its actor when it calls nothing shared), what it
    changed where, its gate, the trace's note and the invariants it first breaks."""
    who, target = ids[ln.actor], ln.target
    label = f"{ln.index}. {ln.action}({_safe(fmt_params(ln.params))})"
    by_place: dict[str, list[str]] = {}
    for place, e in ln.reach:
        by_place.setdefault(place, []).append(_safe(e))
    own = by_place.pop(OWN, []) + ([f"held at {ln.boundary}"] if ln.boundary else [])
    if target:
        out = [f"{indent}{who}->>{ids[target]}: {label}"]
    else:
        out, own = [f"{indent}Note over {who}: {'<br/>'.join([label] + own)}"], []
    for place, effs in by_place.items():
        if target and place != target:  # a called step's effect elsewhere (memory set before a commit)
            out.append(f"{indent}{who}-->>{ids[place]}: {ln.index}. also {', '.join(effs)}")
        else:
            out.append(f"{indent}Note over {ids[place]}: {'<br/>'.join(effs)}")
    if own:
        out.append(f"{indent}Note over {who}: {'<br/>'.join(own)}")
    span = f"{who},{ids[target]}" if target else who
    if ln.note:
        out.append(f"{indent}Note over {span}: {_safe(ln.note)}")
    out += [f"{indent}Note over {span}: VIOLATES {v}" for v in new]
    return out


def mermaid(s: Story) -> str:
    ids = _participants(s)
    span = f"{next(iter(ids.values()))},{list(ids.values())[-1]}" if ids else None
    body = []
    for ln, new in _first_violations(s):
        inside = s.loop is not None and ln.index > s.loop
        if inside and ln.index == s.loop + 1:
            where = "the initial state" if s.loop == 0 else f"the state after step {s.loop}"
            body.append(f"  loop forever, back to {where}")
        body += _step(ln, new, ids, "    " if inside else "  ")
    if s.loop is not None and s.lines and s.lines[-1].index > s.loop:
        body.append("  end")
    if span and s.stuck:
        body.append(f"  Note over {span}: stuck: {_safe(s.stuck)}")
    if span:
        body += [f"  Note over {span}: VIOLATES {v} at the end (its goal is never reached)" for v in s.final_violated]
    out = ["sequenceDiagram", f"  title {_safe(s.title)}"]
    out += [f"  participant {pid} as {_label(name)}" for name, pid in ids.items()]
    if ids:
        out += _legend(ids, body, s.loop is not None)
    return "\n".join(out + body)


def explain_file(path, fmt: str = "text", defects=None) -> str:
    s = story(T.load(path), defects, str(path))
    if fmt == "html":
        from harness.reports.explain_html import html
        return html(s, str(path))
    return mermaid(s) if fmt == "mermaid" else text(s)

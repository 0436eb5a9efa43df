"""`claimcheck explain`: a trace as a story a reviewer can follow.

Each step is attributed to its actor (the runner or finalizer on a node, a node's heartbeat, a recovery
worker, the clock, the adversary), with what it committed (claim changes, events, recovery rows, inputs),
what it changed in memory, the listener gate it stops at, and the invariants it breaks on the twin. `text`
is for terminals; `mermaid` is a `sequenceDiagram` to paste into a review thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from spec import invariants as I
from spec import model as M
from spec import names as N

from harness.traces import trace as T
from harness.conformance.replay import fmt_params, liveness_failures, parse_steps, replay

DB = "database"


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


@dataclass
class Story:
    title: str
    cfg: M.Config
    lines: list[Line]
    stuck: str | None  # a step the twin could not take (with --defect overrides)
    final_violated: list[str]
    loop: int | None


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
    out = [f"commit Step.{e.kind} a{e.asst} ({e.sess}, by {e.node})" for e in nx.log[len(st.log):]]
    for s, c, d in zip(cfg.sessions, st.claim, nx.claim):
        if c != d:
            out.append(f"claim {s}: {_claim(c)} -> {_claim(d)}")
    out += [f"recovery row ({r.sess}, e{r.exec})" for r in sorted(nx.recovery - st.recovery)]
    out += [f"input {i.sess}/{i.kind}{i.src} {i.state}" for i in sorted(nx.inputs - st.inputs)]
    for n, r, r2 in zip(cfg.nodes, st.run, nx.run):
        if (r.mem, r.active) != (r2.mem, r2.active):
            out.append(f"memory@{n}: a{r2.mem} {'active' if r2.active else 'inactive'}")
        if r.pc != r2.pc:
            out.append(f"runner@{n} {r.pc} -> {r2.pc}")
    for n, f, f2 in zip(cfg.nodes, st.fin, nx.fin):
        if f.pc != f2.pc:
            out.append(f"finalizer@{n} {f.pc} -> {f2.pc}")
    for r, w, w2 in zip(cfg.recoverers, st.rec, nx.rec):
        if w.pc != w2.pc:
            out.append(f"recovery@{r} {w.pc} -> {w2.pc}")
    out += [f"fault: {x}" for x in sorted(nx.faults - st.faults)]
    return out


def story(trace: T.Trace, defects=None, name: str = "trace") -> Story:
    cfg = T.config_of(trace, defects, name)
    bare = trace.model_copy(deep=True)  # the code's own boundary hits, whatever gates the trace names
    for step in bare.steps:
        step.boundary = None
    fired = {r.index: r.fired for r in replay(bare, defects, name).steps}
    st = M.init(cfg)
    lines, stuck = [], None
    for k, (step, params) in enumerate(zip(trace.steps, parse_steps(trace, cfg, name)), start=1):
        nx = M.apply(cfg, st, step.action, params)
        if step.refused and nx is None:  # an attempt the implementation must refuse: nothing changes
            lines.append(Line(k, actor_of(step.action, params), step.action, params,
                              ["must be refused: the twin does not enable it"], None, fired.get(k, []), [], step.note))
            continue
        if nx is None:
            stuck = f"step {k} {step.action}({fmt_params(params)}) is not enabled"
            break
        lines.append(Line(k, actor_of(step.action, params), step.action, params, effects(cfg, st, nx),
                          step.boundary, fired.get(k, []), I.check_state(cfg, nx) + I.check_edge(cfg, st, nx),
                          step.note))
        st = nx
    props = trace.meta.invariants + (trace.expect.invariants if trace.expect else [])
    final = sorted({p for p, _ in liveness_failures(cfg, st, props)})
    return Story(trace.meta.title, cfg, lines, stuck, final, trace.loop)


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
    return t.replace(";", ",").replace("#", "")


def mermaid(s: Story) -> str:
    actors = list(dict.fromkeys(ln.actor for ln in s.lines))
    out = ["sequenceDiagram", f"  title {_safe(s.title)}"]
    out += [f"  participant {_mid(a)} as {a}" for a in actors] + [f"  participant DB as {DB}"]
    for ln, new in _first_violations(s):
        who = _mid(ln.actor)
        args = fmt_params(ln.params)
        out.append(f"  {who}->>DB: {ln.index}. {ln.action}({_safe(args)})")
        if ln.effects:
            out.append(f"  Note right of DB: {_safe(', '.join(ln.effects))}")
        if ln.boundary:
            out.append(f"  Note over {who}: held at {ln.boundary}")
        out += [f"  Note over {who},DB: VIOLATES {v}" for v in new]
    if s.stuck:
        out.append(f"  Note over DB: stuck: {_safe(s.stuck)}")
    out += [f"  Note over DB: VIOLATES {v} (goal never reached)" for v in s.final_violated]
    return "\n".join(out)


def explain_file(path, fmt: str = "text", defects=None) -> str:
    s = story(T.load(path), defects, str(path))
    return mermaid(s) if fmt == "mermaid" else text(s)

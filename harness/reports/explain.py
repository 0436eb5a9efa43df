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

from spec import names as N

from harness.traces import trace as T
from harness.conformance.replay import fmt_params
from harness.reports.explain_html import html
from harness.reports.story import (DB, LOCAL, OWN, PROVIDER, TO_MEMORY, TO_PROVIDER, Line, Story, actor_of,
                                   effect_items, effects, first_violations, memory_of, story, target_of)

__all__ = ["DB", "LOCAL", "OWN", "PROVIDER", "TO_MEMORY", "TO_PROVIDER", "Line", "Story", "actor_of",
           "effect_items", "effects", "explain_file", "html", "memory_of", "mermaid", "story", "target_of", "text"]


def text(s: Story) -> str:
    actors = list(dict.fromkeys(ln.actor for ln in s.lines))
    width = max([len(a) for a in actors] + [5])
    out = [f"{s.title}", f"  defects: {', '.join(sorted(s.cfg.defects)) or 'none'}",
           f"  actors:  {', '.join(actors)}", ""]
    for ln, new in first_violations(s):
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
    for ln, new in first_violations(s):
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


def explain_file(path, fmt: str = "text", defects=None, *, server) -> str:
    """`server`: what the trace is replayed on for the boundaries its steps pass (harness.reports.story)."""
    s = story(T.load(path), defects, str(path), server=server)
    if fmt == "html":
        return html(s, str(path))
    return mermaid(s) if fmt == "mermaid" else text(s)

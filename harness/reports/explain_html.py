"""`claimcheck explain --format html`: a trace as a page of its own, for a browser.

One lane (column) per actor, then one per shared participant that a step reaches (the provider, each
node's publisher memory, the database); one row per step, its action in its actor's lane, what it
changed in the lane of where it changed it, and the twin's state after it in an expandable panel
(open on the steps that break an invariant). The page is self-contained: inline CSS, no script, no
external resource, so it can be attached to a CI run and opened offline.
"""

from __future__ import annotations

from html import escape

from spec import model as M
from spec import names as N

from harness.conformance.replay import fmt_params
from harness.reports.story import DB, OWN, PROVIDER, Line, Story, first_violations, memory_of

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d2430; background: #fff; }
h1 { font-size: 1.3em; margin: 0 0 .2em; }
.meta, .legend { color: #4a5566; margin: .2em 0 1em; }
.legend { border: 1px solid #d5dbe5; background: #f7f9fc; padding: .5em 1em; max-width: 70em; }
.legend ul { margin: .2em 0; padding-left: 1.2em; }
table.lanes { border-collapse: collapse; width: 100%; table-layout: auto; }
table.lanes th, table.lanes td { border: 1px solid #d5dbe5; padding: .35em .5em; vertical-align: top; }
table.lanes thead th { position: sticky; top: 0; background: #e9eef6; z-index: 1; }
th.shared { background: #eef3e6 !important; }
td.index { text-align: right; color: #4a5566; font-variant-numeric: tabular-nums; }
.act { font-weight: 600; font-family: ui-monospace, monospace; }
.to { color: #4a5566; font-size: .9em; }
.eff { font-family: ui-monospace, monospace; font-size: .9em; }
td.reached { background: #f4f8ff; border-left: 3px solid #5a7bd8; }
.gate { color: #7a4d00; font-size: .9em; }
.note { font-style: italic; color: #2d5a2d; }
tr.violated td { background: #fff0f0; }
tr.violated td.reached { background: #ffe4e4; }
.violates { color: #b00020; font-weight: 700; }
tr.in-loop td.index { border-left: 4px solid #8a5cd6; }
tr.loop-head td { background: #f3edfc; color: #5b3a99; font-weight: 600; }
details summary { cursor: pointer; color: #2a4d9b; }
details ul { margin: .3em 0; padding-left: 1.1em; font-family: ui-monospace, monospace; font-size: .85em; }
li.changed { font-weight: 700; }
.end { margin-top: 1em; }
"""


def _claim_long(sess: str, c: M.Claim) -> str:
    if c.phase == "none":
        return f"claim {sess}: none"
    return (f"claim {sess}: execution {c.exec}, owner {c.owner}, {c.phase}, lease {c.ttl} tick(s) left"
            + (f", assistant {c.asst}" if c.asst else "") + (", quarantined" if c.quar else ""))


def state_lines(cfg: M.Config, st: M.State) -> list[str]:
    """The twin state in words, one line per claim, event, row, input and actor."""
    out = [_claim_long(s, c) for s, c in zip(cfg.sessions, st.claim)]
    out += [f"log {k}: Step.{e.kind} of assistant {e.asst} in {e.sess}, by {e.node}'s claim"
            for k, e in enumerate(st.log, start=1)]
    out += [f"recovery row: {r.sess}, execution {r.exec}" for r in sorted(st.recovery)]
    out += [f"input {i.sess}/{i.kind} {i.src}: {i.state}" for i in sorted(st.inputs)]
    for n, r in zip(cfg.nodes, st.run):
        work = f" on {r.sess} execution {r.exec}" if r.sess else ""
        out.append(f"runner@{n}: {r.pc}{work}" + (", interrupt delivered" if r.intr else ""))
        out.append(f"publisher memory@{n}: " + (f"assistant {r.mem}, {'active' if r.active else 'inactive'}"
                                                 if r.mem else "none"))
    for n, f in zip(cfg.nodes, st.fin):
        out.append(f"finalizer@{n}: {f.pc}" + (f" on {f.sess} execution {f.exec}" if f.sess else ""))
    for w, r in zip(cfg.recoverers, st.rec):
        out.append(f"recovery@{w}: {r.pc}" + (f" on {r.sess} execution {r.exec}" if r.sess else ""))
    if st.faults:
        out.append(f"faults so far: {', '.join(sorted(st.faults))}")
    return out


def _lanes(s: Story) -> tuple[list[str], list[str]]:
    actors = list(dict.fromkeys(ln.actor for ln in s.lines))
    reached = {ln.target for ln in s.lines} | {t for ln in s.lines for t, _ in ln.reach if t != OWN}
    shared = ([PROVIDER] if PROVIDER in reached else []) + [memory_of(n) for n in s.cfg.nodes if memory_of(n) in reached]
    return actors, shared + ([DB] if DB in reached else [])


def _title(lane: str) -> str:
    return f"publisher {lane}" if lane.startswith(memory_of("")) else lane


def _state_panel(s: Story, ln: Line, before: list[str], open_: bool) -> str:
    now = state_lines(s.cfg, ln.state) if ln.state is not None else []
    changed = ' class="changed"'
    items = "".join(f"<li{changed if x not in before else ''}>{escape(x)}</li>" for x in now)
    return (f"<details class=\"state\"{' open' if open_ else ''}><summary>state after step {ln.index}</summary>"
            f"<ul>{items}</ul></details>")


def _row(s: Story, ln: Line, new: list[str], lanes: list[str], before: list[str], in_loop: bool) -> str:
    target = ln.target
    places: dict[str, list[str]] = {}
    for place, e in ln.reach:
        places.setdefault(ln.actor if place == OWN else place, []).append(e)
    cells = []
    for lane in lanes:
        body = []
        if lane == ln.actor:
            body.append(f"<div class=\"act\">{ln.index}. {escape(ln.action)}({escape(fmt_params(ln.params))})</div>")
            body.append(f"<div class=\"to\">{'&rarr; ' + escape(_title(target)) if target else 'calls nothing shared'}"
                        "</div>")
            if ln.note:
                body.append(f"<div class=\"note\">note: {escape(ln.note)}</div>")
            if ln.boundary:
                body.append(f"<div class=\"gate\">held at boundary {escape(ln.boundary)}</div>")
            body += [f"<div class=\"violates\">VIOLATES {escape(v)}: {escape(N.INVARIANTS[v].doc)}</div>" for v in new]
        body += [f"<div class=\"eff\">{escape(e)}</div>" for e in places.get(lane, [])]
        reached = lane != ln.actor and (lane == target or lane in places)
        cls = " class=\"reached\"" if reached else ""
        cells.append(f"<td{cls} data-lane=\"{escape(lane)}\">{''.join(body)}</td>")
    classes = " ".join(c for c in ("step", "violated" if new else "", "in-loop" if in_loop else "") if c)
    return (f"<tr class=\"{classes}\" id=\"step-{ln.index}\"><td class=\"index\">{ln.index}</td>{''.join(cells)}"
            f"<td>{_state_panel(s, ln, before, bool(new))}</td></tr>")


def _legend(shared: list[str], loop: bool) -> str:
    rows = ["each row is one step of the trace, in the lane of the actor that takes it; "
            "&rarr; names what it calls, and the lanes it changed are tinted blue",
            "shared lanes: <b>database</b> (a step there is one committed transaction)"
            + (", <b>provider</b> (the provider call begins: an external effect, no transaction)"
               if PROVIDER in shared else "")
            + (", <b>publisher memory@n</b> (node n's in-process record of its current assistant)"
               if any(x.startswith(memory_of("")) for x in shared) else ""),
            "red rows break an invariant (VIOLATES); <i>note:</i> is the trace's own note on the step; "
            "held at boundary B: the trace holds the actor at listener gate B until its next step",
            "state after step k: the model's state in words, bold where the step changed it",
            "eN: execution N; aN: assistant N (a0: none); ttlN: N clock ticks left on the lease; "
            "s1/prompt#1 (or s1/prompt1): Session s1's prompt 1 (s1/cont#1: its continuation of execution 1); "
            "Step.X aN (s, by n): event X of assistant N in Session s's log, under n's claim"]
    if loop:
        rows.append("purple rows are a lasso's loop: they repeat forever")
    return "<div class=\"legend\"><b>Legend</b><ul>" + "".join(f"<li>{r}</li>" for r in rows) + "</ul></div>"


def html(s: Story, source: str = "") -> str:
    """The page (a complete HTML document)."""
    actors, shared = _lanes(s)
    lanes = actors + shared
    head = "".join(f"<th class=\"lane\" data-lane=\"{escape(a)}\">{escape(a)}</th>" for a in actors)
    head += "".join(f"<th class=\"lane shared\" data-lane=\"{escape(a)}\">{escape(_title(a))}</th>" for a in shared)
    rows = []
    before = state_lines(s.cfg, s.init) if s.init is not None else []
    for ln, new in first_violations(s):
        in_loop = s.loop is not None and ln.index > s.loop
        if in_loop and ln.index == s.loop + 1:
            where = "the initial state" if s.loop == 0 else f"the state after step {s.loop}"
            rows.append(f"<tr class=\"loop-head\"><td colspan=\"{len(lanes) + 2}\">loop forever, back to "
                        f"{where}</td></tr>")
        rows.append(_row(s, ln, new, lanes, before, in_loop))
        before = state_lines(s.cfg, ln.state) if ln.state is not None else before
    end = []
    if s.stuck:
        end.append(f"<p class=\"violates\">stuck: {escape(s.stuck)}</p>")
    end += [f"<p class=\"violates\">VIOLATES {escape(v)} at the end: {escape(N.INVARIANTS[v].doc)}</p>"
            for v in s.final_violated]
    defects = ", ".join(sorted(s.cfg.defects)) or "none"
    return "\n".join([
        "<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{escape(s.title)}</title>", f"<style>{CSS}</style></head><body>",
        f"<h1>{escape(s.title)}</h1>",
        f"<p class=\"meta\">{escape(source)} &middot; defects: {escape(defects)} &middot; {len(s.lines)} step(s)"
        f" &middot; {len(lanes)} lane(s)</p>",
        _legend(shared, s.loop is not None),
        f"<table class=\"lanes\"><thead><tr><th>step</th>{head}<th>state</th></tr></thead>",
        f"<tbody>{''.join(rows)}</tbody></table>",
        f"<div class=\"end\">{''.join(end)}</div>", "</body></html>", ""])

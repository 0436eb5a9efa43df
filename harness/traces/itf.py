"""ITF (Apalache's Informal Trace Format, ADR-015) to and from trace format v1.

Export writes what Apalache writes, so ITF tooling can read our counterexamples: `#meta`, `vars`,
`states` with `#bigint`, `#set`, `#map` (the spec's functions over Sessions and nodes), records as
objects, sequences as arrays; the trace's own fields that ITF has no place for (meta, configuration,
expect, mutant, and per step its boundary, note and refused flag) travel in `#meta.claimcheck`, so export
then import gives the same trace. Import reads an Apalache ITF file back into a trace by asking the twin which
action instance leads from each state to the next (Apalache does not always write `action_taken` or
`nondet_picks`, so they are never relied on). Import decodes values itself rather than with itf-py's
`value_from_json`, which builds namedtuples and so rejects record fields and variant tags that are not
Python identifiers; the canonical form (harness.traces.tlavalue) needs plain dicts anyway.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import itf_py
from pydantic import ValidationError

from spec import model as M

from harness.traces import trace as T
from harness.traces.paths import Step
from harness.traces.inputfile import read_json, short, validation_error
from harness.traces.tlavalue import ParseError, ShapeError, TlaSet, _hashable, _order, canon_to_twin

ADR = "https://apalache-mc.org/docs/adr/015adr-trace.html"


# ---------------------------------------------------------------- export

def _itf_state(cfg: M.Config, st: M.State) -> dict:
    """The twin state as values itf-py serializes: dict -> #map, frozenset -> #set, list -> sequence."""
    return {
        "claim": dict(zip(cfg.sessions, st.claim)), "nextExec": st.nextExec, "log": list(st.log),
        "recovery": st.recovery, "inputs": st.inputs, "run": dict(zip(cfg.nodes, st.run)),
        "fin": dict(zip(cfg.nodes, st.fin)), "rec": dict(zip(cfg.recoverers, st.rec)),
        "cancelled": st.cancelled, "faults": st.faults, "effects": st.effects,
        **({"wakes": list(st.wakes)} if cfg.wake_rows else {}),  # (absent without wake rows, as before)
        **({"waker": list(st.waker)} if cfg.wakers > 1 else {}),  # (absent with one waker, as before)
    }


def itf_variables(cfg: M.Config) -> list[str]:
    """The variables an ITF state of `cfg` has: all, but `wakes` only where wake scans are modelled (so
    exports without wake rows are as before)."""
    return [v for v in M.VARIABLES if (v != "wakes" or cfg.wake_rows) and (v != "waker" or cfg.wakers > 1)]


def _sorted_sets(v):
    """itf-py writes sets in hash order; sort them so exports are byte-for-byte reproducible."""
    if isinstance(v, list):
        return [_sorted_sets(x) for x in v]
    if isinstance(v, dict):
        out = {k: _sorted_sets(x) for k, x in v.items()}
        if set(out) == {"#set"}:
            out["#set"] = sorted(out["#set"], key=lambda x: json.dumps(x, sort_keys=True))
        return out
    return v


def carried(trace: T.Trace) -> dict:
    """Everything the trace holds that ITF has no place for, as `#meta.claimcheck`: its header, meta,
    configuration, mutant, expect, loop, and per step its action, parameters, boundary, note, refused
    flag and instead (`"#state": true` when the step recorded its state; the state itself is the ITF state)."""
    own = trace.model_dump(mode="json", exclude_none=True, exclude={"steps"})
    own["steps"] = [{**s.model_dump(mode="json", exclude_none=True, exclude={"state"}),
                     **({"#state": True} if s.state is not None else {})} for s in trace.steps]
    return own


def export(trace: T.Trace, name: str = "trace") -> dict:
    """The trace's twin states (with its recorded switches) as an ITF document, the trace's own fields in
    `#meta.claimcheck` (so import gives the same trace back). A step the twin cannot take is a
    TraceError: there is no state to write for it."""
    cfg, states = T.replay_twin(trace, name=name)
    itf_states = [itf_py.State(meta={"index": k, **({"action": trace.steps[k - 1].action} if k else {})},
                               values=_itf_state(cfg, st)) for k, st in enumerate(states)]
    meta = {"format": "ITF", "format-description": ADR, "source": "claimcheck",
            "description": trace.meta.title, "claimcheck": carried(trace)}
    doc = itf_py.trace_to_json(itf_py.Trace(meta=meta, params=[], vars=itf_variables(cfg), states=itf_states,
                                            loop=trace.loop))
    if doc.get("loop") is None:
        doc.pop("loop", None)
    return _sorted_sets(doc)


def export_file(src, out) -> Path:
    doc = export(T.load(src), str(src))
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(doc, indent=1) + "\n")
    return p


# ---------------------------------------------------------------- import

_BIGINT = re.compile(r"-?[0-9]{1,100}")


def decode(v, where: str = "value"):
    """An ITF value in the canonical form: records and maps as dicts (any key), sets as TlaSet, variants as
    {"tag": .., "value": ..} dicts, integers from #bigint. Raises ParseError naming the field."""
    if isinstance(v, list):
        return [decode(x, f"{where}[{k}]") for k, x in enumerate(v)]
    if not isinstance(v, dict):
        if isinstance(v, float):
            raise ParseError(f"{where}: JSON number {v!r}; ITF integers are {{\"#bigint\": ...}}")
        return v
    if "#bigint" in v:
        b = v["#bigint"]
        if not isinstance(b, str) or not _BIGINT.fullmatch(b):
            raise ParseError(f"{where}.#bigint: expected a string of decimal digits, got {short(b)}")
        return int(b)
    if "#tup" in v:
        return [decode(x, f"{where}.#tup[{k}]") for k, x in enumerate(_array(v["#tup"], f"{where}.#tup"))]
    if "#set" in v:
        items = [decode(x, f"{where}.#set[{k}]") for k, x in enumerate(_array(v["#set"], f"{where}.#set"))]
        return TlaSet(sorted(items, key=_order))
    if "#map" in v:
        out = {}
        for k, pair in enumerate(_array(v["#map"], f"{where}.#map")):
            if not isinstance(pair, list) or len(pair) != 2:
                raise ParseError(f"{where}.#map[{k}]: expected a [key, value] pair")
            out[_hashable(decode(pair[0], f"{where}.#map[{k}][0]"))] = decode(pair[1], f"{where}.#map[{k}][1]")
        return out
    if "#unserializable" in v:
        raise ParseError(f"{where}: unserializable value {short(v['#unserializable'])}")
    return {k: decode(x, _sub(where, k)) for k, x in v.items()}


def _sub(where: str, key: str) -> str:
    return f"{where}.{key}" if re.fullmatch(r"[#A-Za-z_][#A-Za-z0-9_-]*", key) else f"{where}[{short(key)}]"


def _array(v, where: str) -> list:
    if not isinstance(v, list):
        raise ParseError(f"{where}: expected an array")
    return v


def _object(v, where: str) -> dict:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise T.TraceError(f"{where}: expected an object")
    return v


def _config(doc: dict, config: str | None, defects, where: str) -> tuple[M.Config, str | None, T.TraceConfig]:
    """The twin configuration, its label, and the trace's configuration (the embedded one verbatim, its
    defects replaced by `defects` when given)."""
    from harness.traces import configfile
    if config is not None:
        chosen = configfile.resolve(config, defects)
        return chosen.cfg, chosen.label, T.config_to_trace(chosen.cfg, chosen.label)
    ours = _object(_object(doc.get("#meta"), f"{where}: #meta").get("claimcheck"), f"{where}: #meta.claimcheck")
    embedded = ours.get("config")
    if embedded is None:
        raise T.TraceError(f"{where}: #meta: no claimcheck configuration; name one (--config)")
    try:
        tc = T.TraceConfig.model_validate(embedded)
        cfg = T.trace_to_config(tc, defects if defects else None, prefix="")
        if defects:
            tc = tc.model_copy(update={"defects": sorted(cfg.defects)})
        return cfg, tc.base, tc
    except ValidationError as exc:
        raise validation_error(exc, where, "#meta.claimcheck.config.", error=T.TraceError) from None
    except T.TraceError as exc:
        raise T.TraceError(f"{where}: #meta.claimcheck.config.{exc}") from None


def _loop(doc: dict, n_states: int, where: str) -> int | None:
    loop = doc.get("loop")
    try:
        loop = decode(loop, "loop")
    except ParseError as exc:
        raise T.TraceError(f"{where}: {exc}") from None
    if loop is None:
        return None
    if not isinstance(loop, int) or isinstance(loop, bool) or not 0 <= loop < n_states:
        raise T.TraceError(f"{where}: loop: expected a state index 0..{n_states - 1}, got {short(loop)}")
    return loop


def from_itf(doc: dict, *, config: str | None = None, defects=(), title: str | None = None,
             where: str = "itf") -> T.Trace:
    """An ITF document as a trace: each step's action and parameters inferred from the twin. `config` is
    a registered name or a configuration file (else the configuration in `#meta.claimcheck`)."""
    if not isinstance(doc, dict):
        raise T.TraceError(f"{where}: (top): expected an ITF object, got {type(doc).__name__}")
    if not isinstance(doc.get("states"), list) or not doc["states"]:
        raise T.TraceError(f"{where}: states: expected a non-empty array of states")
    names = doc.get("vars", list(M.VARIABLES))
    if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
        raise T.TraceError(f"{where}: vars: expected an array of variable names")
    cfg, base, tc = _config(doc, config, defects, where)
    missing = set(itf_variables(cfg)) - set(names)
    if missing:
        raise T.TraceError(f"{where}: vars: missing {sorted(missing)}")
    states = []
    for k, raw in enumerate(doc["states"]):
        if not isinstance(raw, dict):
            raise T.TraceError(f"{where}: states[{k}]: expected an object")
        try:
            values = {var: decode(raw[var], f"states[{k}].{var}") for var in itf_variables(cfg)}
            states.append(canon_to_twin(cfg, values))
        except KeyError as exc:
            raise T.TraceError(f"{where}: states[{k}]: missing variable {exc}") from None
        except ShapeError as exc:
            raise T.TraceError(f"{where}: states[{k}]{'.' + exc.field if exc.field else ''}: {exc.reason}") from None
        except ParseError as exc:  # decode's messages start with the field
            raise T.TraceError(f"{where}: {exc}") from None
    init = M.init(cfg)
    if states[0] != init:
        raise T.TraceError(f"{where}: states[0]: not the twin's initial state for this configuration")
    loop = _loop(doc, len(states), where)
    top = _object(doc.get("#meta"), f"{where}: #meta")
    ours = _object(top.get("claimcheck"), f"{where}: #meta.claimcheck")
    if ours.get("steps") is not None:
        return _restore(cfg, tc, states, ours, loop, title, where)
    steps = [Step(None, (), init)]
    for k, st in enumerate(states[1:], start=1):
        match = [(a, p, nx) for a, p, nx in M.successors(cfg, steps[-1].state) if nx == st]
        if not match:
            raise T.TraceError(f"{where}: states[{k}]: no twin action leads here from states[{k - 1}]")
        steps.append(Step(*match[0]))  # the twin's own state: equal, and of the twin's types
    meta = _object(ours.get("meta"), f"{where}: #meta.claimcheck.meta")
    described = top.get("description") if isinstance(top.get("description"), str) else None
    try:
        return T.from_steps(cfg, steps, title=title or meta.get("title") or described or "imported from ITF",
                            source="apalache" if not meta else meta.get("source", "hand"),
                            base=base, invariants=meta.get("invariants") or [], defect=meta.get("defect"),
                            loop=loop, reported=meta.get("reported"))
    except ValidationError as exc:
        raise validation_error(exc, where, "#meta.claimcheck.meta.", error=T.TraceError) from None
    except TypeError as exc:  # invariants that are not a list
        raise T.TraceError(f"{where}: #meta.claimcheck.meta: {exc}") from None


def _restore(cfg: M.Config, tc: T.TraceConfig, states: list, ours: dict, loop, title, where: str) -> T.Trace:
    """The trace `export` wrote: its own fields from `#meta.claimcheck`, each carried step checked against
    the ITF states (its action leads from the state before to the state after; a refused step leaves the
    state as it is), its recorded state (`#state`) taken from the ITF state."""
    pre = f"{where}: #meta.claimcheck"
    carried = ours["steps"]
    if not isinstance(carried, list) or len(carried) != len(states) - 1:
        raise T.TraceError(f"{pre}.steps: expected an array of {len(states) - 1} steps (one per ITF state after "
                           f"the first), got {short(carried) if not isinstance(carried, list) else len(carried)}")
    if ours.get("loop") != loop:
        raise T.TraceError(f"{pre}.loop: {short(ours.get('loop'))} is not the ITF loop {short(loop)}")
    steps = []
    for k, (c, before, after) in enumerate(zip(carried, states, states[1:])):
        at = f"{pre}.steps[{k}]"
        if not isinstance(c, dict):
            raise T.TraceError(f"{at}: expected a step object")
        action, params = c.get("action"), c.get("params", {})
        got = T.params_from_json(action, params, at)
        T.check_param_names(cfg, action, got, at)
        nxt = M.apply(cfg, before, action, got)
        if c.get("refused") is True:
            moves = [m[2] for m in T.actor_moves(cfg, before, action, got[0]) if m[0] == c.get("instead")] \
                if got and c.get("instead") is not None else [before]
            if nxt is not None or moves != [after]:
                raise T.TraceError(f"{at}: a refused step, but states[{k + 1}] is not states[{k}] unchanged "
                                   "(or after the action the actor takes instead) or the twin enables it")
        elif nxt != after:
            raise T.TraceError(f"{at}: {action} does not lead from states[{k}] to states[{k + 1}]")
        step = {key: v for key, v in c.items() if key != "#state"}
        if c.get("#state") is True:
            step["state"] = T.state_to_json(cfg, after)
        steps.append(step)
    raw = {**{key: v for key, v in ours.items() if key != "steps"}, "config": tc.model_dump(exclude_none=True),
           "steps": steps}
    if title:
        raw["meta"] = {**_object(raw.get("meta"), f"{pre}.meta"), "title": title}
    try:
        trace = T.Trace.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, where, "#meta.claimcheck.", error=T.TraceError) from None
    T.check_steps(trace, cfg, pre)  # what `expect` names, refused only on attempts: as `load` checks a file
    return trace


def import_file(src, out, *, config: str | None = None, defects=()) -> Path:
    p = Path(src)
    doc = read_json(p, T.TraceError)
    return T.save(from_itf(doc, config=config, defects=defects, where=str(p)), out)

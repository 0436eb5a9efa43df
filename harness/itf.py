"""ITF (Apalache's Informal Trace Format, ADR-015) to and from trace format v1.

Export writes what Apalache writes, so ITF tooling can read our counterexamples: `#meta`, `vars`,
`states` with `#bigint`, `#set`, `#map` (the spec's functions over Sessions and nodes), records as
objects, sequences as arrays. Import reads an Apalache ITF file back into a trace by asking the twin which
action instance leads from each state to the next (Apalache does not always write `action_taken` or
`nondet_picks`, so they are never relied on). Import decodes values itself rather than with itf-py's
`value_from_json`, which builds namedtuples and so rejects record fields and variant tags that are not
Python identifiers; the canonical form (harness.tlavalue) needs plain dicts anyway.
"""

from __future__ import annotations

import json
from pathlib import Path

import itf_py

from spec import configs
from spec import model as M

from . import trace as T
from .explore import Step
from .tlavalue import ParseError, TlaSet, _hashable, _order, canon_to_twin

ADR = "https://apalache-mc.org/docs/adr/015adr-trace.html"


# ---------------------------------------------------------------- export

def _itf_state(cfg: M.Config, st: M.State) -> dict:
    """The twin state as values itf-py serializes: dict -> #map, frozenset -> #set, list -> sequence."""
    return {
        "claim": dict(zip(cfg.sessions, st.claim)), "nextExec": st.nextExec, "log": list(st.log),
        "recovery": st.recovery, "inputs": st.inputs, "run": dict(zip(cfg.nodes, st.run)),
        "fin": dict(zip(cfg.nodes, st.fin)), "rec": dict(zip(cfg.recoverers, st.rec)),
        "cancelled": st.cancelled, "faults": st.faults,
    }


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


def export(trace: T.Trace) -> dict:
    """The trace's twin states (with its recorded switches) as an ITF document."""
    cfg, states = T.replay_twin(trace)
    itf_states = [itf_py.State(meta={"index": k, **({"action": trace.steps[k - 1].action} if k else {})},
                               values=_itf_state(cfg, st)) for k, st in enumerate(states)]
    meta = {"format": "ITF", "format-description": ADR, "source": "claimcheck",
            "description": trace.meta.title,
            "claimcheck": {"config": trace.config.model_dump(), "meta": trace.meta.model_dump(exclude_none=True)}}
    doc = itf_py.trace_to_json(itf_py.Trace(meta=meta, params=[], vars=list(M.VARIABLES), states=itf_states,
                                            loop=trace.loop))
    if doc.get("loop") is None:
        doc.pop("loop", None)
    return _sorted_sets(doc)


def export_file(src, out) -> Path:
    doc = export(T.load(src))
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(doc, indent=1) + "\n")
    return p


# ---------------------------------------------------------------- import

def decode(v, where: str = "value"):
    """An ITF value in the canonical form: records and maps as dicts (any key), sets as TlaSet, variants as
    {"tag": .., "value": ..} dicts, integers from #bigint."""
    if isinstance(v, list):
        return [decode(x, where) for x in v]
    if not isinstance(v, dict):
        if isinstance(v, float):
            raise ParseError(f"{where}: JSON number {v!r}; ITF integers are {{\"#bigint\": ...}}")
        return v
    if "#bigint" in v:
        try:
            return int(v["#bigint"])
        except (TypeError, ValueError) as exc:
            raise ParseError(f"{where}: bad #bigint {v['#bigint']!r}") from exc
    if "#tup" in v:
        return [decode(x, where) for x in v["#tup"]]
    if "#set" in v:
        return TlaSet(sorted((decode(x, where) for x in v["#set"]), key=_order))
    if "#map" in v:
        return {_hashable(decode(k, where)): decode(x, where) for k, x in v["#map"]}
    if "#unserializable" in v:
        raise ParseError(f"{where}: unserializable value {v['#unserializable']!r}")
    return {k: decode(x, f"{where}.{k}") for k, x in v.items()}


def _config(doc: dict, config: str | None, defects) -> tuple[M.Config, str | None]:
    embedded = doc.get("#meta", {}).get("claimcheck", {}).get("config")
    if config is not None:
        return configs.get(config, defects), config
    if embedded is None:
        raise T.TraceError("#meta: no claimcheck configuration; name one (--config)")
    tc = T.TraceConfig.model_validate(embedded)
    return T.trace_to_config(tc, defects if defects else None), tc.base


def from_itf(doc: dict, *, config: str | None = None, defects=(), title: str | None = None,
             where: str = "itf") -> T.Trace:
    """An ITF document as a trace: each step's action and parameters inferred from the twin."""
    if not isinstance(doc, dict) or not isinstance(doc.get("states"), list) or not doc["states"]:
        raise T.TraceError(f"{where}: states: expected a non-empty array of states")
    missing = set(M.VARIABLES) - set(doc.get("vars", M.VARIABLES))
    if missing:
        raise T.TraceError(f"{where}: vars: missing {sorted(missing)}")
    cfg, base = _config(doc, config, defects)
    states = []
    for k, raw in enumerate(doc["states"]):
        try:
            values = {var: decode(raw[var], f"states[{k}].{var}") for var in M.VARIABLES}
            states.append(canon_to_twin(cfg, values))
        except KeyError as exc:
            raise T.TraceError(f"{where}: states[{k}]: missing variable {exc}") from exc
        except ParseError as exc:
            raise T.TraceError(f"{where}: states[{k}]: {exc}") from exc
    if states[0] != M.init(cfg):
        raise T.TraceError(f"{where}: states[0]: not the twin's initial state for this configuration")
    steps = [Step(None, (), states[0])]
    for k, st in enumerate(states[1:], start=1):
        match = [(a, p) for a, p, nx in M.successors(cfg, steps[-1].state) if nx == st]
        if not match:
            raise T.TraceError(f"{where}: states[{k}]: no twin action leads here from states[{k - 1}]")
        steps.append(Step(match[0][0], match[0][1], st))
    meta = doc.get("#meta", {}).get("claimcheck", {}).get("meta", {})
    loop = doc.get("loop")
    if isinstance(loop, dict):
        loop = decode(loop)
    return T.from_steps(cfg, steps, title=title or meta.get("title") or doc.get("#meta", {}).get("description")
                        or "imported from ITF", source="apalache" if not meta else meta.get("source", "hand"),
                        base=base, invariants=meta.get("invariants", ()), defect=meta.get("defect"),
                        loop=loop, reported=meta.get("reported"))


def import_file(src, out, *, config: str | None = None, defects=()) -> Path:
    p = Path(src)
    try:
        doc = json.loads(p.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise T.TraceError(f"{p}: cannot read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise T.TraceError(f"{p}: not JSON (line {exc.lineno}: {exc.msg})") from exc
    return T.save(from_itf(doc, config=config, defects=defects, where=str(p)), out)

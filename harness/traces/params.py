"""A trace step's parameters <-> the twin's (harness.traces.trace re-exports these): each by the registry's
parameter letter, checked field by field, and checked against the configuration's names."""

from __future__ import annotations

from typing import Any

from spec import model as M
from spec import names as N

from harness import registry as R
from harness.traces.inputfile import TraceError, json_type, short


def _input_to_json(i: M.Input) -> dict[str, Any]:
    """An input record; a continuation's gen only when it is not the derived id's (0), and its flaw only when
    it has one (a forged row's), as traces write it."""
    d = i._asdict()
    if not d["gen"]:
        del d["gen"]
    if not d["flaw"]:
        del d["flaw"]
    return d


def params_to_json(action: str, params: tuple) -> dict[str, Any]:
    names = N.ACTIONS[action].params
    return {k: (_input_to_json(v) if isinstance(v, M.Input) else v) for k, v in zip(names, params)}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _input_from_json(v, where: str) -> M.Input:
    fields = M.Input._fields
    # gen: 0 when left out; flaw: "" when left out
    if not isinstance(v, dict) or not set(fields) - {"gen", "flaw"} <= set(v) <= set(fields):
        got = f"keys {short(sorted(map(str, v)), 80)}" if isinstance(v, dict) else json_type(v)
        raise TraceError(f"{where}: not an input record (expected an object with {', '.join(fields)}; got {got})")
    if not isinstance(v["sess"], str):
        raise TraceError(f"{where}.sess: expected a Session name (string)")
    if v["kind"] not in N.INPUT_KINDS:
        raise TraceError(f"{where}.kind: unknown input kind {short(v['kind'])} (expected one of {', '.join(N.INPUT_KINDS)})")
    if not _is_int(v["src"]):
        raise TraceError(f"{where}.src: expected an integer")
    if v["state"] not in N.INPUT_STATES:
        raise TraceError(f"{where}.state: unknown input state {short(v['state'])} "
                         f"(expected one of {', '.join(N.INPUT_STATES)})")
    if not _is_int(v.get("gen", 0)) or v.get("gen", 0) < 0:
        raise TraceError(f"{where}.gen: expected a non-negative integer")
    if v.get("flaw", "") not in ("",) + N.CONTINUATION_FLAWS:
        raise TraceError(f"{where}.flaw: unknown continuation flaw {short(v['flaw'])} "
                         f"(expected one of {', '.join(N.CONTINUATION_FLAWS)})")
    return M.Input(**v)


def params_from_json(action: str, params: dict[str, Any], where: str) -> tuple:
    if not isinstance(action, str) or action not in N.ACTIONS:
        raise TraceError(f"{where}.action: unknown action {short(action)} (expected one of {', '.join(N.ACTIONS)})")
    names = N.ACTIONS[action].params
    if not isinstance(params, dict) or set(params) != set(names):
        got = short(sorted(map(str, params)), 120) if isinstance(params, dict) else json_type(params)
        raise TraceError(f"{where}.params: {action} takes {list(names)}, got {got}")
    out = []
    for k in names:
        v = params[k]
        if k == "i":
            v = _input_from_json(v, f"{where}.params.i")
        elif k in ("e", "w", "k"):
            if not _is_int(v):
                raise TraceError(f"{where}.params.{k}: expected "
                                 + {"e": "an execution id", "w": "a wake row", "k": "a waker"}[k] + " (integer)")
        elif k == "d" and v not in N.DIGESTS:
            raise TraceError(f"{where}.params.d: expected a content digest, one of {', '.join(N.DIGESTS)}")
        elif k == "f" and v not in N.CONTINUATION_FLAWS:
            raise TraceError(f"{where}.params.f: expected a continuation flaw, one of {', '.join(N.CONTINUATION_FLAWS)}")
        elif not isinstance(v, str):
            raise TraceError(f"{where}.params.{k}: expected a name (string)")
        out.append(v)
    return tuple(out)


def check_param_names(cfg: M.Config, action: str, params: tuple, where: str) -> None:
    """A step naming an actor or Session outside the configuration is malformed, not a violation."""
    actors = cfg.nodes + cfg.recoverers if action in (R.HEARTBEAT, R.CRASH) else cfg.nodes
    domains = {"n": actors, "r": cfg.recoverers, "s": cfg.sessions}
    for k, v in zip(N.ACTIONS[action].params, params):
        if k in domains and v not in domains[k]:
            raise TraceError(f"{where}.params.{k}: {short(v)} is not in the configuration ({', '.join(domains[k])})")
        if k == "i" and v.sess not in cfg.sessions:
            raise TraceError(f"{where}.params.i.sess: {short(v.sess)} is not a configured Session")
        if k == "w" and not 1 <= v <= cfg.wake_rows:
            raise TraceError(f"{where}.params.w: {v} is not a wake row (1..{cfg.wake_rows})")
        if k == "k" and not 1 <= v <= cfg.wakers:
            raise TraceError(f"{where}.params.k: {v} is not a waker (1..{cfg.wakers})")

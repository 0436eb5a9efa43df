"""`claimcheck driver-kit`: what a driver's author needs, printed for one configuration, and with `--sut CMD`
their server's first divergence said as what to look at.

Without `--sut`: the `start` request of the configuration, the Init state's JSON (what `observe` answers
right after `start`), then every registry action: its actor, its parameters, whether claimcheck attempts
it, and a sample exchange on the reference (the bundled server, in this process): the first edge of the
twin's breadth-first graph that takes the action, its request, the reply, and the observe after it (the
fields that changed, the boundaries fired); for an attempt also a refusal at the same state, with whether
the protocol requires it or permits it as a stutter (spec.refusals). An action the configuration never
enables says so. With `--sut CMD`: the walk of `conform --config C --sut CMD`; on its first failure, the
action (or probe), each differing field path with the twin's value and the server's, and the command that
replays just that edge (the trace of the shortest path from Init to it).
"""

from __future__ import annotations

import json
import shlex

from spec import guards as G
from spec import model as M
from spec import names as N
from spec import refusals as SR

from harness.conformance import conform as C
from harness.conformance import exhaustive as X
from harness.conformance.diff import diff, show
from harness.conformance.lockstep import refusals
from harness.traces import trace as T
from harness.traces.paths import path_to

DEFAULT = "steer/no-faults"  # small (408 states) and every kind of request: a first driver's first target


def add_driver_kit(sub, add_sut) -> None:
    k = sub.add_parser("driver-kit", help="for a driver's author: the Init state's JSON, every action with a sample "
                                          "request and answer; with --sut, the first divergence and its replay")
    k.add_argument("--config", default=DEFAULT, metavar="NAME|LABEL|FILE",
                   help=f"a configuration: a registered name, a profile's label or a JSON file (default {DEFAULT})")
    k.add_argument("--out", default="traces/found", help="where the first divergence's trace is written (--sut)")
    add_sut(k, "walk")
    k.set_defaults(func=cmd_driver_kit)


def _line(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


_GRAPHS: dict = {}


def _enabled_in(name: str) -> str | None:
    """The first of the ci profile's configurations whose reachable graph takes `name` (its label)."""
    for label in X.PROFILES["ci"]:
        if label not in _GRAPHS:
            _GRAPHS[label] = C.graph_of(X.resolve(label)[0])
        if any(a == name for out in _GRAPHS[label].succ for a, _p, _j in out):
            return label
    return None


def _changed(cfg, before: M.State, after: M.State) -> dict:
    """The state's top-level fields an edge changed, as `observe` writes them."""
    a, b = T.state_to_json(cfg, before), T.state_to_json(cfg, after)
    return {k: v for k, v in b.items() if a.get(k) != v}


def _walk_to(cfg, graph, server, i: int):
    """A world on `server` at the twin's state `i`, by the shortest path from Init."""
    world = server.start(cfg)
    for step in path_to(graph, i)[1:]:
        world.apply(step.action, step.params, step.state)
    return world


def _sample(cfg, graph, server, name: str) -> list[str]:
    edge = next(((i, p, j) for i, out in enumerate(graph.succ) for a, p, j in out if a == name), None)
    if edge is None:
        where = _enabled_in(name)
        return ["    not enabled in this configuration" + (f": see claimcheck driver-kit --config '{where}'" if where
                                                              else "")]
    i, params, j = edge
    path = [G.label(s.action, s.params) for s in path_to(graph, i)[1:]]
    lines = [f"    a sample, after {'Init' if not path else ', '.join(path)}:"]
    world = _walk_to(cfg, graph, server, i)
    mark = len(world.hits)
    world.apply(name, params, graph.states[j])
    fired = [h for h, _ in world.hits[mark:]]
    jp = T.params_to_json(name, params)
    lines += [f"    > {_line({'id': 3, 'op': 'step', 'action': name, 'params': jp})}",
              f"    < {_line({'id': 3, 'ok': True, 'took': name})}",
              "    > " + _line({"id": 4, "op": "observe"}),
              "    < " + _line({"id": 4, "ok": True, "state": {"…": "unchanged fields",
                                                            **_changed(cfg, graph.states[i], graph.states[j])},
                             "boundaries": fired})]
    if name in N.ATTEMPTS:
        lines += _refusal(cfg, graph, name)
    return lines


def _refusal(cfg, graph, name: str) -> list[str]:
    """A probe of `name` the twin refuses, at the first state (breadth first) that has one."""
    for k, st in enumerate(graph.states):
        enabled = [(a, p, None) for a, p, _ in graph.succ[k]]
        refused = next((p for a, p in refusals(cfg, st, enabled) if a == name), None)
        if refused is not None:
            verdict = SR.classify(cfg, st, name, refused)
            path = [G.label(s.action, s.params) for s in path_to(graph, k)[1:]]
            return [f"    a refusal probe, after {'Init' if not path else ', '.join(path)} ({verdict.kind}: "
                    f"{G.why_not(cfg, st, name, refused) or 'it changes nothing'}; {verdict.why}):",
                    f"    > {_line({'id': 5, 'op': 'attempt', 'action': name, 'params': T.params_to_json(name, refused)})}",
                    f"    < {_line({'id': 5, 'ok': True, 'answer': 'refused'})}"]
    return []


def kit(cfg, label: str, graph, reference) -> list[str]:
    """The whole printout without a server of the author's (`reference`: the bundled server)."""
    start = {"id": 1, "op": "start", "config": T.config_to_trace(cfg).model_dump(mode="json", exclude_none=True),
             "defects": sorted(cfg.defects)}
    lines = [f"driver kit for {label}: {len(graph.states):,} reachable states (docs/driver.md walks you through it)",
             "", "start:", f"  > {_line(start)}", f"  < {_line({'id': 1, 'ok': True})}", "",
             "Init: what observe answers right after start (`state`; `faults` may be left empty):",
             json.dumps(T.state_to_json(cfg, graph.states[0]), indent=2), "", "actions:"]
    for name, action in N.ACTIONS.items():
        how = "an attempt: the caller chooses its parameters, and it is probed where the twin refuses it" \
            if name in N.ATTEMPTS else "a step (or an actor's move)"
        lines.append(f"  {name} ({action.actor}; params {', '.join(action.params) or 'none'}; {how}): {action.doc}")
        lines += _sample(cfg, graph, reference, name)
    return lines


def first_divergence(cfg, rep, path, server) -> list[str]:
    """The walk's first failure as what to do: the edge, each field twin against server, the replay."""
    from harness.conformance.found import replay_command
    f = rep.failure
    last = f.steps[-1]
    if f.probe is not None:
            what, twin = f"probe {G.label(*f.probe)}", last.state
    else:
        what, twin = G.label(last.action, last.params), last.state
    k = len(f.steps) - 1 + (f.probe is not None)
    lines = [f"first divergence: {what}, step {k} of the shortest path from Init ({f.kind}"
             + (f": {', '.join(f.invariants)}" if f.invariants else "") + ")"]
    try:
        world = server.start(cfg)
        for step in f.steps[1:-1] if f.probe is None else f.steps[1:]:
            world.apply(step.action, step.params, step.state)
        if f.probe is not None:
            world.attempt(*f.probe)
        else:
            world.apply(last.action, last.params, twin)
        delta = diff(twin, world.state(), cfg)
    except Exception as exc:  # noqa: BLE001 - the server's failure is the finding; the message has it
        delta = []
        lines.append(f"  (read again: {type(exc).__name__}: {exc})")
    for d in delta:
        lines.append(f"  field {d.path}: twin {show(d.model)}, server {show(d.impl)}")
    if not delta:
        lines += [f"  {line}" for line in f.message.splitlines()]
    lines.append(f"  replay just that edge: {replay_command(path, cfg, server)}")
    return lines


def cmd_driver_kit(args) -> int:
    from harness.cli.arguments import UsageError
    from harness.cli.drive import open_server
    try:
        cfg, label = X.resolve(args.config)
    except Exception as exc:  # noqa: BLE001 - a name or file that is no configuration: bad usage
        raise UsageError(f"claimcheck driver-kit: --config {args.config}: {exc}") from None
    graph = C.graph_of(cfg)
    server = open_server(args, "driver-kit")  # the reference (the bundled server) without --sut
    try:
        if server.command is None:
            print("\n".join(kit(cfg, label, graph, server)))
            return 0
        rep = C.walk(cfg, server=server, graph=graph)
        if rep.failure is None and rep.complete:
            print(f"driver-kit {label}: {X.summary(rep)}: no divergence; next: claimcheck gate --sut {shlex.quote(args.sut)}")
            return 0
        if rep.failure is None:
            print(f"driver-kit {label}: incomplete walk: {X.summary(rep)}")
            return 1
        path = X.write_trace(rep, label, args.out)
        print("\n".join(first_divergence(cfg, rep, path, server.fresh())))
        return 1
    finally:
        server.close()

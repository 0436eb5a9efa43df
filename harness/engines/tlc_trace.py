"""A counterexample of TLC's distributed mode, made whole and named by local TLC.

Why: TLC 2.15's distributed server prints only the violating step of a counterexample (the step's first
state comes out labelled as the initial state: the path that reached it is lost between server and
workers), and never what the step violated. So, on this machine:

1. `prefix`: local TLC searches breadth-first, with one worker, for the step's first state (its only
   invariant: "not that state"), and prints the shortest path to it, as a local run would;
2. `replay`: local TLC replays exactly that path and the violating step (INIT and NEXT are the trace's
   states, each step also one of Next's, `trace_module`) with the run's own configuration, and names the
   violation as a local run does.

A trace that either step does not confirm raises Unconfirmed: an error, never a verdict. The search in 1
costs what a local run to that depth costs; a run that finds no violation never needs it.
"""

from __future__ import annotations

import re
from pathlib import Path

from spec import configs
from spec import model as M
from spec.source import MC_SPEC

from harness.engines import tlc

PLAIN = "INIT Init\nNEXT Next\n"
TARGET = "NotTraceTarget"


class Unconfirmed(RuntimeError):
    """Local TLC does not confirm the distributed server's counterexample."""


def definitions(states: list[str], name: str = "TraceState", primed: bool = False) -> list[str]:
    """TraceState1..n: each state as the conjunction TLC printed ("/\\ var = value" lines); `primed`: as
    the next state's ("/\\ var' = value": TLC generates a successor from assignments to primed variables,
    not from a primed definition)."""
    lines: list[str] = []
    for k, text in enumerate(states, start=1):
        rows = [re.sub(r"^/\\ (\w+) = ", r"/\\ \1' = ", row) if primed else row for row in text.splitlines() if row.strip()]
        lines += [f"{name}{k} =="] + ["  " + row for row in rows] + [""]
    return lines


def module(body: list[str]) -> str:
    return "\n".join(["---- MODULE MCTrace ----", f"EXTENDS {MC_SPEC.stem}, TLC", "", *body, "===="]) + "\n"


def trace_module(states: list[str]) -> str:
    """A module whose only behaviour is the trace: TraceInit is its first state, TraceNext its steps, each
    also a step of the spec's Next (so a step Next does not take is no behaviour at all)."""
    steps = [f"  \\/ (TraceState{k} /\\ TraceNextState{k + 1} /\\ Next)" for k in range(1, len(states))]
    return module(definitions(states) + definitions(states, "TraceNextState", primed=True)
                  + ["TraceInit == TraceState1", "", "TraceNext ==", *(steps or ["  FALSE"]), ""])


def target_module(state: str) -> str:
    """A module whose invariant fails exactly at `state`."""
    return module(definitions([state]) + [f"{TARGET} == ~TraceState1", ""])


def _local(cfg: M.Config, work: Path, module_text: str, cfg_text: str, timeout) -> tlc.TlcResult:
    work.mkdir(parents=True)
    (work / "MCTrace.tla").write_text(module_text)
    return tlc.run_in(cfg, work, tlc.command(work, cfg_text, 1, spec="MCTrace.tla"), timeout=timeout)


def prefix(cfg: M.Config, state: str, work: Path, *, timeout=None) -> tuple[list[tlc.TlcStep], list[str]]:
    """The shortest path from an initial state to `state` (its steps and its states' text), by local TLC."""
    cfg_text = configs.to_tlc_cfg(cfg, liveness=False, checks=False) + f"INVARIANT {TARGET}\n"
    found = _local(cfg, work, target_module(state), cfg_text, timeout)
    if found.verdict != "violation" or found.violated != [TARGET]:
        raise Unconfirmed("local TLC finds no path to the state where TLC's distributed server reports a "
                          f"violation (search verdict {found.verdict}):\n{_tail(found.output)}")
    return found.steps, tlc.state_texts(found.output)


def replay(cfg: M.Config, states: list[str], cfg_text: str, work: Path, *, timeout=None) -> tlc.TlcResult:
    """Local TLC's verdict on exactly this trace, under the run's configuration `cfg_text`."""
    assert PLAIN in cfg_text, "a safety configuration names INIT and NEXT"
    return _local(cfg, work, trace_module(states), cfg_text.replace(PLAIN, "INIT TraceInit\nNEXT TraceNext\n"), timeout)


def rebuild(cfg: M.Config, res: tlc.TlcResult, printed: list[str], cfg_text: str, work: Path, *, timeout=None) -> None:
    """Make `res` (the server's parsed output, `printed` its states' text) the whole, named violation."""
    if len(printed) == 1:  # a violating initial state: nothing was lost
        steps, texts = list(res.steps), printed
    else:
        head, head_texts = prefix(cfg, printed[-2], work / "prefix", timeout=timeout)
        steps, texts = head + res.steps[-1:], head_texts + printed[-1:]
    local = replay(cfg, texts, cfg_text, work / "replay", timeout=timeout)
    if local.verdict != "violation" or [s.state for s in local.steps] != [s.state for s in steps]:
        raise Unconfirmed("local TLC, replaying the counterexample of TLC's distributed server, does not confirm "
                          f"a violation (replay verdict {local.verdict}):\n{_tail(local.output)}")
    res.steps, res.verdict, res.violated = steps, "violation", local.violated
    res.depth = max(res.depth, len(steps))  # the server prints no depth after a violation; a local run's


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])

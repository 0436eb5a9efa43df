"""A refusal probe's verdict, one rule for replay, lockstep and the exhaustive walk.

The server must leave the mapped state as the twin's (a change is a divergence, whatever it answered).
Whether it may also answer "taken" is the protocol's, derived from the twin by spec.refusals: a refusal
*required* by the protocol must be refused (an acceptance is a lie the caller acts on: it goes on as if it
held a claim, a lease or a takeover it has not), one *permitted as a stutter* may be accepted when nothing
changes (a heartbeat on a fresh lease).
"""

from __future__ import annotations

from spec import guards as G
from spec import model as M
from spec import refusals as SR

from harness.conformance.diff import diff, render_diff


def problems(cfg: M.Config, st: M.State, name: str, params: tuple, answer, got: M.State) -> list[str]:
    """Why the probe of `name(params)` at the twin's `st` failed, given the server's `answer` and the state
    `got` it maps to after it; empty when it passed. The first line says what the server did."""
    delta = diff(st, got, cfg)
    if delta:
        return [f"the implementation took {name}{params}, which the twin does not enable (answer: {answer})"] \
            + render_diff(delta, "  ")
    if not answer:
        return []
    verdict = SR.classify(cfg, st, name, params)
    if not verdict.required:
        return []
    why = G.why_not(cfg, st, name, params) or "the twin's action changes nothing here"
    return [f"the implementation answered {answer!r} to {name}{params}, which the protocol requires it to refuse "
            f"({why}; {verdict.why}), although nothing it maps changed"]

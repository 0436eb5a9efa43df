"""The validation search's silent steps (harness/validation/silent.py) are exactly the twin's steps that
change no durable variable: compared with `spec.model.successors` on every state of a bounded walk of
registered configurations, with and without a defect."""

from __future__ import annotations

import pytest

from spec import configs
from spec import model as M
from harness.validation.search import durable
from harness.validation.silent import silent_successors

BOUND = 1500  # states per configuration (the walk is depth-first: it reaches deep states fast)


def _walk(cfg):
    seen, todo = {M.init(cfg)}, [M.init(cfg)]
    while todo and len(seen) < BOUND:
        st = todo.pop()
        yield st
        for _n, _p, nxt in M.successors(cfg, st):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)


@pytest.mark.parametrize("name, defects", [("ci", ()), ("sessions", ()), ("steps", ()), ("tools", ()),
                                           ("wakes", ()), ("inputs", ()), ("workers", ()),
                                           ("ci", ("takeover-trusts-scan",)), ("heartbeat", ())])
def test_silent_successors_are_the_twins_steps_that_write_nothing(name, defects):
    cfg = configs.get(name, defects=defects)
    for st in _walk(cfg):
        here = durable(st)
        want = {(n, p, nxt) for n, p, nxt in M.successors(cfg, st) if n != "Tick" and durable(nxt) == here}
        got = set(silent_successors(cfg, st))
        assert got == want, (name, st)


def test_a_dropped_silent_step_is_caught():
    """The comparison above can fail: a silent step left out shows."""
    cfg = configs.get("ci")
    missing = 0
    for st in _walk(cfg):
        here = durable(st)
        want = {(n, p, nxt) for n, p, nxt in M.successors(cfg, st) if n != "Tick" and durable(nxt) == here}
        got = {x for x in silent_successors(cfg, st) if x[0] != "Supervise"}
        missing += got != want
    assert missing


@pytest.mark.parametrize("name", ["ci", "workers"])
def test_one_process_s_silent_steps_are_its_actors_own(name):
    """`only` (a line's view from its own process's reading) offers exactly the named actors' silent steps."""
    cfg = configs.get(name)
    for k, st in enumerate(_walk(cfg)):
        if k > 400:
            break
        everything = set(silent_successors(cfg, st))
        for only in ({cfg.nodes[0]}, {cfg.nodes[-1], cfg.recoverers[0]}):
            assert set(silent_successors(cfg, st, only=only)) == {x for x in everything if x[2] and x[1][0] in only}

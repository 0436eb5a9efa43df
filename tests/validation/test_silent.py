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


def _own_moves(cfg, st, only, nodes, recs, view_tick):
    """One process's moves from `st` (its actors' silent steps and its view of a tick), each successor with
    the other actors' memory set idle (what search.view_closure keeps)."""
    from harness.validation.search import _only
    out = {(n, p, _only(nxt, nodes, recs)) for n, p, nxt in silent_successors(cfg, st, only=only)}
    tick = view_tick(cfg, st, nodes)
    return out | ({("Tick", (), _only(tick, nodes, recs))} if tick is not None else set())


def _others(st, nodes, recs):
    return ([r for k, r in enumerate(st.run) if k not in nodes], [f for k, f in enumerate(st.fin) if k not in nodes],
            [w for k, w in enumerate(st.rec) if k not in recs])


@pytest.mark.parametrize("name", ["ci", "workers", "sessions", "wakes"])
def test_one_process_s_moves_read_no_other_actor_s_memory(name):
    """search.view_closure computes a process's view once for the states that differ only in the other actors'
    memory: its moves from a state and from that state with the others' memory idle are the same, and they
    leave the others' memory as it was."""
    from harness.validation.real_time import view_tick
    from harness.validation.search import _only
    cfg = configs.get(name)
    for k, st in enumerate(_walk(cfg)):
        if k > 600:
            break
        owners = ([(frozenset([n]), frozenset([n]) if n < len(cfg.recoverers) else frozenset())
                   for n in range(len(cfg.nodes))] + [(frozenset([n]), frozenset()) for n in range(len(cfg.nodes))]
                  + [(frozenset(), frozenset([r])) for r in range(len(cfg.recoverers))])
        for nodes, recs in owners:  # a node process with its worker, a node alone, a worker alone
            only = {cfg.nodes[n] for n in nodes} | {cfg.recoverers[r] for r in recs}
            assert (_own_moves(cfg, st, only, nodes, recs, view_tick)
                    == _own_moves(cfg, _only(st, nodes, recs), only, nodes, recs, view_tick)), (name, st)
            others = _others(st, nodes, recs)  # and they write no other actor's memory
            assert all(_others(nxt, nodes, recs) == others for _n, _p, nxt in silent_successors(cfg, st, only=only))


def test_a_move_that_reads_another_actor_s_memory_is_caught():
    """The comparison above can fail: every actor's steps (not one process's) differ once the others idle."""
    from harness.validation.search import _only
    cfg = configs.get("ci")
    differs = 0
    for k, st in enumerate(_walk(cfg)):
        if k > 600:
            break
        nodes, recs = frozenset([0]), frozenset()
        mine = {(n, p, _only(x, nodes, recs)) for n, p, x in silent_successors(cfg, st)}
        idle = {(n, p, _only(x, nodes, recs)) for n, p, x in silent_successors(cfg, _only(st, nodes, recs))}
        differs += mine != idle
    assert differs

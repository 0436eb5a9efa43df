"""The exact retry's identity check on the bundled server (issue 31 item 1): every id a caller can send, by
every Session, with either digest, is refused for the twin's reason (spec.input_actions.retry_refusal), the
reason the first word of the refusal, and taken exactly where the twin enables it."""

import json

from binding.world import Scheduler
from harness.conformance import lockstep as L
from harness.conformance import replay as RP
from harness.traces import trace as T
from impl import registry as R
from spec import input_actions as IA
from spec import model as M
from spec import names as N

TRACE = RP.TRACES / "collision-continuation-promoted.json"


def _states(defects=()):
    """Each state of the collision trace's path (two Sessions, Admission, a forged row, a takeover), the
    scheduler following it; under the collision defect s1's continuation exists with no row of its own."""
    tr = T.Trace.model_validate(json.loads(TRACE.read_text()))
    cfg = T.config_of(tr, list(defects), TRACE.name)
    sched, st = Scheduler(cfg), M.init(cfg)
    for step, params in zip(tr.steps, T.check_steps(tr, cfg, TRACE.name)):
        if step.refused:
            continue
        nxt = M.apply(cfg, st, step.action, params)
        if nxt is None:
            return
        sched.apply(step.action, params, nxt)
        st = nxt
        yield cfg, sched, st


def _check(defects=()):
    seen = set()
    for cfg, sched, st in _states(defects):
        for name, params in L.refusals(cfg, st, list(M.successors(cfg, st))):
            if name != R.EXACT_RETRY:
                continue
            want = IA.retry_refusal(cfg, st, *params)
            seen.add(want)
            got = sched.attempt(name, params)
            assert not got, (params, got)
            assert got.reason.split(":")[0] == want or (not want and "already" in got.reason), (params, got.reason)
            assert sched.state() == st
    return seen


def test_every_refusal_carries_the_twins_reason():
    assert _check() >= {N.UNKNOWN_INPUT, N.OTHER_SESSION, N.CONTENT_MISMATCH}


def test_a_row_less_continuation_is_refused_as_a_continuation():
    assert N.CONTINUATION in _check(["cross-session-recovery-collision"])

"""A Session's inputs in the history check (harness/stress/checker.py): which of them a commit is checked
on, what an admission must add, and which execution took each input.

The checker keeps a Session's waiting inputs (`records.live`) in its view, not the consumed prompts, so a
commit is checked on those plus the inputs it changed or names, whatever their state (a taken prompt an
exact retry names, the input an acquisition or a steer takes); the twin's state after it is compared on
the same inputs.
"""

from __future__ import annotations

from spec import model as M
from spec import names as N

from harness import registry as R
from harness.stress.records import Commit, SessionView, live

_NAMES_AN_INPUT = (R.ACQUIRE, R.PROMOTE_CONTINUATION, R.STEER, R.EXACT_RETRY)  # the input is parameter `i`


def seen_before(sv: SessionView | None, c: Commit, words) -> dict[str, M.Input]:
    """The focus Session's inputs the commit is checked on, as they were before it (`words`: the
    recording server's Vocabulary, which names the input a parameter stands for)."""
    if sv is None:
        return {}
    seen = dict(sv.live_inputs)
    named = [iid for iid, _ in c.inputs]
    if c.params and c.action in _NAMES_AN_INPUT:
        named.append(words.input_id(c.params[list(N.ACTIONS[c.action].params).index("i")]))
    for iid in named:
        if iid in sv.inputs:
            seen[iid] = sv.inputs[iid]
    return seen


def prompts_named(c: Commit) -> set[int]:
    """The prompts whose input events the commit's log view must hold: those it requests, the one it retries."""
    prompts = {e.asst for e in c.events if e.kind == N.REQUEST_KIND}
    if c.action == R.EXACT_RETRY:
        prompts.add(c.params[1].src)
    return prompts


def compared(twin_inputs: frozenset, post_inputs: frozenset) -> frozenset:
    """The twin's inputs after the commit that the recorded view shows: the waiting ones and the ones the
    view holds (those the commit touched)."""
    shown = {_identity(i) for i in post_inputs}
    return frozenset(i for i in twin_inputs if live(i) or _identity(i) in shown)


def admission_ok(checker, c: Commit, state: str) -> bool:
    """An admission adds the Session's next prompt (`state`: pending, its execution requested, or held, the
    twin's Admit) and changes nothing else; one that changed nothing was refused."""
    if not c.row["changed"]:
        return True
    i = c.inputs[0][1] if c.inputs else None
    return (len(c.inputs) == 1 and i.kind == "prompt" and i.state == state
            and c.inputs[0][0] not in checker._view(i.sess).inputs and i.src == checker.prompts[i.sess] + 1
            and c.claims == checker.claims and not c.events and not c.recovery and not c.cancelled
            and c.exec_mark == checker.exec_mark)


def takers(c: Commit, exec_mark: int):
    """(input id, execution) for each input the commit took: the execution it began with it (`exec_mark`:
    the execution sequence before the commit), or the steering runner's."""
    for iid, i in c.inputs:
        if i.state in ("ordinary", "recovery") and c.exec_mark > exec_mark:
            yield iid, c.exec_mark
        elif i.state == "steered" and c.action == R.STEER and c.params:
            r = c.memory["run"].get(c.params[0])
            if r is not None:
                yield iid, r.exec


def _identity(i: M.Input) -> tuple:
    return i.sess, i.kind, i.src, i.gen

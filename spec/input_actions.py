"""The twin's input actions (constants Admission and Steering): Admit, ExactRetry, Resume and Steer, each
mirroring the TLA+ operator of the same name in SessionExecution.tla ("Inputs"). `spec.model` re-exports
them and enumerates them in `successors`; they live here to keep that module short.
"""

from __future__ import annotations

from . import names as N
from .config import Config
from .state import (Event, Input, State, _acquire, _runner_at, _with_input, find_input, held_prompts, in_order, ordinary_ok,
                    prompt_count, request_id, si)


def Admit(cfg, st, s):
    """A caller admits Session s's next prompt, its execution not yet requested (held)."""
    k = prompt_count(st, s)
    if not (cfg.admission and k < cfg.prompts):
        return None
    return st._replace(inputs=st.inputs | {Input(s, "prompt", k + 1, "held")})


def retry_refusal(cfg, st, s, i, d) -> str:
    """TLA+ RetryRefusal: "" when the exact retry's identity check holds, else its reason (RETRY_REFUSALS)."""
    j = find_input(st, i)
    if j is None:
        return N.UNKNOWN_INPUT
    if j.sess != s:
        return N.OTHER_SESSION
    if cfg.hooks.retry_refuses_continuation(cfg, st, j):
        return N.CONTINUATION
    if j.state == "recovery":
        return N.RECOVERY_OWNED
    if not cfg.hooks.retry_content_matches(cfg, st, d):
        return N.CONTENT_MISMATCH
    return ""


def ExactRetry(cfg, st, s, i, d):
    """The identity check (Session, id, content), then one PromptExecutionRequested (deterministic: none if
    the input has one)."""
    if not cfg.admission:
        return None
    if retry_refusal(cfg, st, s, i, d):
        return None
    j = find_input(st, i)
    if not cfg.hooks.retry_appends(cfg, st, j):
        return None
    content = "" if d == N.ADMITTED else d
    return st._replace(log=st.log + (Event(j.sess, N.REQUEST_KIND, request_id(j), content),),
                       inputs=_with_input(st, j, "pending") if cfg.hooks.request_arms(cfg, st, j) else st.inputs)


def retry_ids(cfg, st):
    """The ids a caller sends in an exact retry that may name an input here (TLA+ RetryIds less those
    that name none now, which every check refuses alike): each input's, as an id (state pending)."""
    return sorted({Input(i.sess, i.kind, i.src, "pending", i.gen) for i in st.inputs})


def Resume(cfg, st, n, s):
    """One transaction requesting the Session's held prompts, before the drain it forces (Acquire)."""
    held = sorted(held_prompts(st, s))
    if not (cfg.admission and held):
        return None
    if cfg.hooks.resume_requests(cfg, st):
        return st._replace(inputs=(st.inputs - set(held)) | {j._replace(state="pending") for j in held})
    return _acquire(cfg, st, n, held[0], ordinary=True)  # the drain, forced with no durable request: the oldest


def Steer(cfg, st, n, i):
    """At a Step's start the runner steers a pending input of its Session into its execution (fenced)."""
    r = st.run[n]
    if not (cfg.steering and _runner_at(st, n, "acquired") and i in st.inputs and i.sess == r.sess
            and i.state == "pending"):
        return None
    if not cfg.hooks.steer_selects(cfg, st, i):
        return None
    if not (cfg.hooks.steer_takes_kind(cfg, st, i) and in_order(cfg, st, i)):
        return None
    if not ordinary_ok(st, si(cfg, r.sess), r.exec, cfg.nodes[n]):
        return None
    return st._replace(inputs=_with_input(st, i, "steered"))


def emit_inputs(cfg: Config, st: State, emit) -> None:
    """The input actions' instances for `spec.model.successors`, in Next's order."""
    if cfg.admission:
        for s in cfg.sessions:
            emit("Admit", (s,), Admit(cfg, st, s))
        for i in retry_ids(cfg, st):
            for s in cfg.sessions:
                for d in N.DIGESTS:
                    emit("ExactRetry", (s, i, d), ExactRetry(cfg, st, s, i, d))
        for n, node in enumerate(cfg.nodes):
            for s in cfg.sessions:
                emit("Resume", (node, s), Resume(cfg, st, n, s))
    if cfg.steering:
        for n, node in enumerate(cfg.nodes):
            if st.run[n].pc == "acquired":
                for i in sorted(st.inputs):
                    emit("Steer", (node, i), Steer(cfg, st, n, i))

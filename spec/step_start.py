"""The Step's start, after the provider dispatch: Step.Started's publication and its return, then (Hosted 1)
the runner's reconciliation of the Step's hosted call, each mirroring the TLA+ operator of the same name.
`spec.model` re-exports them and lists them in its Next.
"""

from __future__ import annotations

from .state import Event, _put, _runner_at, _stop, si, step_asst


def hosted_call(cfg) -> int:
    """TLA+ HostedCall: the hosted call's index, after the Step's local calls'."""
    return cfg.tools + 1


def PublishStepStarted(cfg, st, n):
    """One transaction: Step.Started (naming the Step's hosted call, Hosted 1), the claim's assistant (fenced)."""
    if not _runner_at(st, n, "streaming"):
        return None
    r = st.run[n]
    s = si(cfg, r.sess)
    a = step_asst(cfg, r)  # the current Step's assistant
    early = cfg.hooks.memory_at_commit(cfg, st)
    mem = dict(mem=a, active=True) if early else {}
    if not cfg.hooks.publish_ok(cfg, st, n):
        return _stop(st, n, **mem)
    c = st.claim[s]
    claim = st.claim if c.exec != r.exec else _put(st.claim, s, c._replace(asst=a))
    started = Event(r.sess, "Started", a, cfg.nodes[n], hosted_call(cfg) if cfg.hosted else 0)
    return st._replace(claim=claim, log=st.log + (started,), run=_put(st.run, n, r._replace(pc="started", **mem)))


def StepStartedReturn(cfg, st, n):
    """Step.Started's publish returns: memory names the assistant; a hosted call is reconciled next."""
    if not _runner_at(st, n, "started"):
        return None
    r = st.run[n]
    pc = "hosted" if cfg.hosted == 1 and cfg.hooks.reconciles_hosted(cfg, st) else "stepping"
    return st._replace(run=_put(st.run, n, r._replace(pc=pc, mem=step_asst(cfg, r), active=True)))


def HostedReconcile(cfg, st, n):
    """One transaction: the hosted call's outcome (Tool.Success with its index; fenced). No effect: the
    provider ran the tool inside the dispatch."""
    if not _runner_at(st, n, "hosted"):
        return None
    r = st.run[n]
    if not cfg.hooks.publish_ok(cfg, st, n):
        return _stop(st, n)
    return st._replace(log=st.log + (Event(r.sess, "ToolSucceeded", step_asst(cfg, r), cfg.nodes[n], hosted_call(cfg)),),
                       run=_put(st.run, n, r._replace(pc="stepping")))


def HostedReconcileFails(cfg, st, n):
    """The hosted call's publication fails (a fault): nothing durable changes, the call stays open, and the
    runner's error path follows (MarkUnknown)."""
    if not ("publication" in cfg.faults and n < len(cfg.nodes) and _runner_at(st, n, "hosted")):
        return None
    return st._replace(run=_put(st.run, n, st.run[n]._replace(pc="publish_failed")), faults=st.faults | {"publication"})

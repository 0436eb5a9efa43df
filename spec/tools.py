"""The runner's local tool actions (Tools 1 or 2: the Step's calls one after the other, call r.tool + 1 the
current one): the fenced tool start, the physical tool, the Tool.Success
publication, its failure (a fault), the failures of Step.Started and Step.Ended (the same fault kind), and the
runner's error path to `unknown` after any of them, each mirroring the TLA+ operator of the same name.
`spec.model` re-exports them and lists them in its Next.
"""

from __future__ import annotations

from .state import Event, _begin_effect, _put, _runner_at, _stop, ordinary_ok, si, step_asst


def ToolStart(cfg, st, n):
    """The fenced tool start: renew the lease and record the call (ToolStarted), one transaction."""
    if not (_runner_at(st, n, "stepping") and st.run[n].tool < cfg.tools):
        return None
    r = st.run[n]
    if not cfg.hooks.publish_ok(cfg, st, n):
        return _stop(st, n)
    s = si(cfg, r.sess)
    node = cfg.nodes[n]
    claim = (_put(st.claim, s, st.claim[s]._replace(ttl=cfg.lease)) if ordinary_ok(st, s, r.exec, node)
             else st.claim)
    return st._replace(claim=claim, log=st.log + (Event(r.sess, "ToolStarted", step_asst(cfg, r), node, r.tool + 1),),
                       run=_put(st.run, n, r._replace(pc="tool_started")))


def ToolRun(cfg, st, n):
    """The physical tool runs: an external effect, no transaction."""
    return _begin_effect(cfg, st, n, "tool", "tooling", st.run[n].tool + 1) if _runner_at(st, n, "tool_started") else None


def PublishToolSuccess(cfg, st, n):
    """Tool.Success, fenced; the settlement flag changes only once it committed."""
    if not _runner_at(st, n, "tooling"):
        return None
    r = st.run[n]
    if not cfg.hooks.publish_ok(cfg, st, n):
        return _stop(st, n, tool=r.tool + 1 if cfg.hooks.settlement_flag_early(cfg, st) else r.tool)
    return st._replace(log=st.log + (Event(r.sess, "ToolSucceeded", step_asst(cfg, r), cfg.nodes[n], r.tool + 1),),
                       run=_put(st.run, n, r._replace(pc="stepping", tool=r.tool + 1)))


def ToolSuccessFails(cfg, st, n):
    """The Tool.Success publication fails (a fault): nothing durable changes, the call stays unsettled. `n`
    indexes cfg.nodes then cfg.recoverers, as for every fault (a worker publishes no Tool.Success)."""
    if not ("publication" in cfg.faults and n < len(cfg.nodes) and _runner_at(st, n, "tooling")):
        return None
    r = st.run[n]
    if cfg.hooks.settlement_flag_early(cfg, st):
        r = r._replace(pc="stepping", tool=r.tool + 1)
    else:
        r = r._replace(pc="tool_failed")
    return st._replace(run=_put(st.run, n, r), faults=st.faults | {"publication"})


def StepStartedFails(cfg, st, n):
    """The Step.Started publication fails (a fault): nothing durable changes; the provider call was made, so
    the runner's error path follows (MarkUnknown). Publisher memory is as the commit's step leaves it."""
    if not ("publication" in cfg.faults and n < len(cfg.nodes) and _runner_at(st, n, "streaming")):
        return None
    r = st.run[n]
    mem = dict(mem=step_asst(cfg, r), active=True) if cfg.hooks.memory_at_commit(cfg, st) else {}
    return st._replace(run=_put(st.run, n, r._replace(pc="publish_failed", **mem)),
                       faults=st.faults | {"publication"})


def StepEndedFails(cfg, st, n):
    """The Step.Ended publication fails (a fault) once the Step's tools settled: nothing durable changes."""
    if not ("publication" in cfg.faults and n < len(cfg.nodes) and _runner_at(st, n, "stepping")
            and st.run[n].tool >= cfg.tools):
        return None
    return st._replace(run=_put(st.run, n, st.run[n]._replace(pc="publish_failed")),
                       faults=st.faults | {"publication"})


def MarkUnknown(cfg, st, n):
    """The error path after a failed publication (Tool.Success, Step.Started, Step.Ended): running -> unknown
    (fenced), and the runner stops."""
    if not (_runner_at(st, n, "tool_failed") or _runner_at(st, n, "publish_failed")):
        return None
    r = st.run[n]
    if r.pc == "tool_failed" and cfg.hooks.retries_failed_tool(cfg, st):  # runs the tool again, publishes again
        return st._replace(run=_put(st.run, n, r._replace(pc="tool_started")))
    s = si(cfg, r.sess)
    claim = st.claim
    if ordinary_ok(st, s, r.exec, cfg.nodes[n]):
        claim = _put(claim, s, claim[s]._replace(phase="unknown"))
    return _stop(st._replace(claim=claim), n)

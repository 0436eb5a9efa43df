"""The text a reader sees: the history check's report and a stress run's summary."""

from __future__ import annotations

import sqlalchemy as sa

from spec import names as N

from harness import registry as R
from harness.stress.findings import UNEVALUATED
from harness.stress.options import StressOptions, StressResult
from harness.stress.records import ENV_STEPS

_FATES = ["answered", "answered (failed)", "cancelled", "pending", "held", "pending continuation", "in flight",
          "quarantined (cancelled)", "quarantined", "lost"]


def render_history(checker, *, limit: int = 10) -> str:
    """The history check's report (a `checker.Checker` after `finish`)."""
    rep = checker.report
    c = rep.counts
    lines = [f"history check: {rep.commits:,} commits walked in order against the twin "
             f"({sum(v for k, v in c.items() if k in N.ACTIONS or k in ENV_STEPS):,} changed the state, "
             f"{c['stutter']:,} were empty fenced steps)",
             f"  violations: {c['violations']}" + ("" if not rep.violations else ":")]
    lines += [f"    - {f.line()}" for f in rep.violations[:limit]]
    if c["breaches"]:
        lines.append(f"  assumption breaches (pauses; the environment, not the protocol): {c['breaches']}")
        lines += [f"    - {f.line()}" for f in rep.breaches[:3]]
    if rep.clock_inversions:
        lines.append(f"  clock readings below an earlier commit's (concurrent steps): {rep.clock_inversions:,}")
    if rep.inputs:
        parts = [f"{k} {rep.inputs.get(k, 0)}" for k in _FATES if rep.inputs.get(k) or k == "lost"]
        lines.append(f"  inputs: {rep.inputs.get('admitted', 0)} prompts admitted: " + ", ".join(parts))
        lines += [f"    - lost: {x}" for x in rep.lost[:limit]]
    lines.append("  not evaluable on commits (see harness/README.md, Stress): " + ", ".join(UNEVALUATED))
    return "\n".join(lines)


def render_stress(res: StressResult, opts: StressOptions) -> str:
    """A stress run's summary, ending with the verdict line."""
    ch = res.checker
    rep = ch.report if ch else None
    c = res.counts
    backend = sa.engine.make_url(res.url).get_backend_name()
    lines = [f"claimcheck stress: {opts.nodes} nodes, {opts.sessions} sessions, {backend}, lease {opts.lease:g} s "
             f"({round(opts.lease / opts.tick)} ticks of {opts.tick * 1000:g} ms), {res.elapsed:.1f} s, "
             f"defects: {', '.join(opts.defects) or 'none'}",
             f"  executions    {res.executions:,}  (acquired {c[R.ACQUIRE]:,}, continuations promoted "
             f"{c[R.PROMOTE_CONTINUATION]:,})",
             f"  steps         Step.Started {c[R.PUBLISH_STEP_STARTED]:,}, Step.Ended {c[R.PUBLISH_STEP_ENDED]:,}, "
             f"Step.Failed {c[R.PUBLISH_STEP_FAILED]:,}, provider dispatches {res.effects['dispatch']:,}",
             f"  cancels       {c[R.CANCEL_REQUEST]:,} (finalizer settles {c[R.FINALIZER_SETTLE]:,}, clears "
             f"{c[R.FINALIZER_CLEAR]:,})",
             f"  inputs        admitted held {c[R.ADMIT]:,}, exact retries {c[R.EXACT_RETRY]:,}, resumes "
             f"{c[R.RESUME]:,}, steers {c[R.STEER]:,}",
             f"  wakes         arrivals {c[R.WAKE_ARRIVE]:,}, scans {c[R.WAKE_SCAN]:,} (racing wakers: reads "
             f"{c[R.WAKE_READ]:,}, reservations {c[R.WAKE_RESERVE]:,}), served {c[R.WAKE_SERVE]:,}, lost {c[R.WAKE_LOST]:,}",
             f"  crashes       {res.crashes} injected (SIGKILL)" + (f", {len(res.unexpected_exits)} unexpected exits"
                                                                  if res.unexpected_exits else ""),
             f"  takeovers     {c[R.RECOVERY_TAKEOVER]:,}  continuations {c[R.RECOVERY_CONVERT]:,}  quarantines "
             f"{c[R.RECOVERY_QUARANTINE]:,}",
             f"  commits       {c['commits']:,} recorded ({c['commits'] / max(res.elapsed, 1e-9):,.0f}/s)"]
    if rep is not None:
        lines.append(f"  history check {res.check_seconds:.1f} s:")
        lines += ["  " + x for x in render_history(ch).splitlines()]
    lines.append(f"  effects       {res.effects['dispatch']:,} dispatches, {res.effects['fin']:,} finalizer steps "
                 "checked physically")
    for v in res.effect_violations[:10]:
        lines.append(f"    - violation: {v}")
    if res.effect_breaches:
        lines.append("    accepted assumptions the environment broke (not protocol failures; docs/protocol.md):")
    for k, v in sorted(res.effect_breaches.items()):
        lines.append(f"    - {k}: {v}")
    for u in res.unexpected_exits[:5]:
        lines.append(f"    - {u}")
    if res.faultcheck is not None:
        lines += ["  " + x for x in res.faultcheck.lines()]
    lines.append(f"  invariant violations: {res.violations}    inputs lost: {res.lost}"
                 + (f"    Sessions stranded: {res.stranded}" if res.stranded else ""))
    for path, why in res.traces:
        lines.append(f"  trace: {path}" + (f"  ({why})" if why else ""))
        lines.append(f"    claimcheck replay {path}")
    if res.validation is not None:  # the one search `claimcheck validate` runs, on this run's own history
        lines += ["  trace validation of the run's history:"] + [f"  {x}" for x in res.validation]
    lines.append(verdict_line(res, opts))
    return "\n".join(lines)


def verdict_line(res: StressResult, opts: StressOptions) -> str:
    """`verdict: OK` or `verdict: FAIL`; with --until-violation also the seed and the counts the run
    needed: the executions and crashes before the first violation was seen, or the caps reached."""
    if res.ok and opts.defects:  # a defect switched on that nothing caught: never "OK"
        return (f"  verdict: NOT DETECTED: {', '.join(opts.defects)} switched on, and no violation in "
                f"{res.executions:,} executions and {res.crashes} crashes (seed {opts.seed}"
                + (f"; stopped by {res.stopped_by})" if opts.until_violation else ")"))
    word = "OK" if res.ok else "FAIL"
    if res.ok and res.not_validated:  # every check held, and validate could not decide: never "OK"
        word = f"NOT VALIDATED ({res.not_validated})"
    if not opts.until_violation:
        return f"  verdict: {word}"
    hit = res.first_violation
    if hit is not None:
        return (f"  verdict: {word}: violation caught after {hit.executions:,} executions and {hit.crashes} "
                f"crashes (seed {opts.seed}): {hit.line}")
    return (f"  verdict: {word}: no violation seen while running, in {res.executions:,} executions and "
            f"{res.crashes} crashes (seed {opts.seed}; stopped by {res.stopped_by})")

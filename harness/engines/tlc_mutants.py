"""A sample of the guard mutants cross-checked on TLC: the same conjunct dropped in SessionExecution.tla (a
generated variant of the module, in TLC's working folder only), TLC run on a configuration, and its verdict
compared with the explorer's on the twin's mutant there (killed or not).

Why a sample, kept by hand: the twin's mutants are derived from its code (guard_mutants); the TLA+ text
of a conjunct is not derivable from the Python one, so each sampled mutant names the TLA+ text it drops.
A text that no longer occurs exactly once in the module is reported stale (the spec moved), not skipped.
The properties checked are the twin's (every invariant and liveness property; not the refinement, which
only TLC checks), so the two engines answer the same question.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from spec import configs
from spec import names as N
from spec.source import SPEC

from harness.engines import tlc


@dataclass(frozen=True)
class Sampled:
    mutant: str  # the twin's mutant id (guard_mutants)
    config: str  # where both engines run it
    tla: str  # the TLA+ text of the conjunct's context, as SessionExecution.tla writes it
    dropped: str  # the same text with the conjunct dropped


SAMPLE = (
    Sampled("CancelRequest: c.ttl > 0", "rows",
            '/\\ fin[n].pc = "idle" /\\ c.phase = "running" /\\ c.ttl > 0',
            '/\\ fin[n].pc = "idle" /\\ c.phase = "running"'),
    Sampled("Renew/renew_accepts: c.ttl > 0", "heartbeat",
            "RenewAccepts(c, r, n) == c.exec = r.exec /\\ c.owner = n /\\ c.ttl > 0",
            "RenewAccepts(c, r, n) == c.exec = r.exec /\\ c.owner = n"),
    Sampled("RecoveryTakeover/takeover_matches: c.owner == w.seen", "rows",
            "TakeoverMatches(c, w) == c.exec = w.exec /\\ c.owner = w.seen /\\ c.ttl <= -Grace /\\ ~c.quar",
            "TakeoverMatches(c, w) == c.exec = w.exec /\\ c.ttl <= -Grace /\\ ~c.quar"),
    Sampled("Heartbeat: c.ttl < cfg.lease", "heartbeat",
            '/\\ c.phase # "none" /\\ c.owner = k /\\ c.ttl < Lease',
            '/\\ c.phase # "none" /\\ c.owner = k'),
    Sampled("FinalizerSettle/fenced: c.ttl > 0", "heartbeat",
            'IF ~(Fenced(f.sess, f.exec, f.owner) /\\ c.phase = "cancelling")',
            'IF ~(c.exec = f.exec /\\ c.owner = f.owner /\\ c.phase = "cancelling")'),
)


class StaleSample(ValueError):
    """A sampled mutant's TLA+ text does not occur exactly once in SessionExecution.tla."""


def variant(s: Sampled, text: str | None = None) -> str:
    """SessionExecution.tla with the sampled conjunct dropped."""
    text = SPEC.read_text() if text is None else text
    if text.count(s.tla) != 1:
        raise StaleSample(f"{s.mutant}: its TLA+ text occurs {text.count(s.tla)} times in {SPEC.name} "
                          f"(expected once): {s.tla}")
    return text.replace(s.tla, s.dropped)


def run(s: Sampled, *, workers: int = 1, timeout: float | None = None) -> tlc.TlcResult:
    """TLC on the variant module, the twin's checks only (no refinement)."""
    cfg = configs.get(s.config)
    only = set(N.STATE_INVARIANTS) | set(N.ACTION_INVARIANTS) | set(N.LIVENESS)
    with tempfile.TemporaryDirectory(prefix="claimcheck-tlc-mutant-") as tmp:
        work = Path(tmp)
        cmd = tlc.command(work, configs.to_tlc_cfg(cfg, liveness=True, only=only), workers)
        (work / SPEC.name).write_text(variant(s))
        return tlc.run_in(cfg, work, cmd, timeout=timeout)

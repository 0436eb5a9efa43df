"""What the history check reports: its findings, its report, and what a commit history cannot show."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from harness import registry as R

# What a commit history cannot show, and why (printed by the report).
UNEVALUATED = {
    R.NO_PHYSICAL_REPLAY: "a provider dispatch commits nothing: checked on the node's effect log instead "
                          "(each dispatch under the live lease its preceding renewal set)",
    R.NO_OVERLAPPING_EFFECTS: "on commits it holds by construction (a takeover needs an expired lease, and a "
                              "finalizer on an expired lease is stopped under SynchronizedClocks); what can "
                              "fail is the premise, checked as supervision on recorded memory, and the "
                              "physical effect intervals per Session in the effect logs",
    "liveness": "SessionsEventuallyAvailable, ExpiredClaimsEventuallyHandled, FreshWorkKeepsCapacity and "
                "RetryAdvances speak of infinite behaviours; a bounded run checks their bounded form (every "
                "Session with pending input served within K leases after the last fault, harness/stress/"
                "liveness.py), and a starved wake row shows as a scan breaking WakePlanShared",
}


@dataclass
class Finding:
    seq: int
    kind: str  # transition | memory | supervision | invariant | record | effect | inputs
    names: list[str]  # registry invariants broken (empty for a pure conformance failure)
    session: str | None
    actor: str
    action: str
    message: str

    def line(self) -> str:
        what = f" [{', '.join(self.names)}]" if self.names else ""
        where = f" Session {self.session}" if self.session else ""
        return f"commit {self.seq} {self.actor} {self.action}{where}: {self.kind}{what}: {self.message}"


@dataclass
class Report:
    commits: int = 0
    violations: list[Finding] = field(default_factory=list)
    breaches: list[Finding] = field(default_factory=list)  # environment assumptions broken (pauses)
    counts: Counter = field(default_factory=Counter)  # effective commits per action, stutters, ...
    inputs: dict = field(default_factory=dict)  # fate -> count
    lost: list[str] = field(default_factory=list)
    clock_inversions: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations and not self.lost

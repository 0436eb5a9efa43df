"""A faulted stress run's accounting: each breach of an accepted assumption by name, with its count and
the fault it came from; the history check's findings that follow only from a breach; bounded liveness.

- **SynchronizedClocks, from skew** (on the history): a RecoveryTakeover whose former owner's clock, read
  at the takeover's wall time with that node's offset, still held the lease live. Without skew this
  cannot happen (the worker read the clock before committing, the owner reads the same clock later), and
  within the bound recovery's Grace covers the disagreement; beyond it, each such takeover is one breach.
- **the effect logs' breaches** (harness/stress/effects.py: TimelyDispatch, SynchronizedClocks), each
  attributed to the fault under way near it (`_attribute`), else to the skew beyond the bound, else to a
  stall under load (no fault of this run's).
- **consequences**: once a Session's claim was taken while its owner still held it (the skew breach
  above), a finding of the history check on that Session that names no invariant outside the breached
  assumption's (the registry's `Assumption.invariants`) is the breach's consequence, reported under it
  and not counted as a protocol violation. Every other finding stays a violation.
- **liveness** (harness/stress/liveness.py), measured after the last fault ended.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from spec import names as N

from harness import registry as R
from harness.stress.liveness import Liveness, LivenessReport

# findings that speak of what an assumption's invariants rest on (NoOverlappingEffects: supervision, memory)
_PREMISE_KINDS = ("supervision", "memory")


@dataclass
class FaultCheck:
    breaches: Counter = field(default_factory=Counter)  # assumption name -> count
    causes: Counter = field(default_factory=Counter)  # (assumption name, cause) -> count
    skew_takeovers: list[tuple] = field(default_factory=list)  # (seq, Session, former owner, leases early)
    consequences: list = field(default_factory=list)  # checker Findings that follow from a breach
    liveness: LivenessReport | None = None
    faults: Counter = field(default_factory=Counter)  # fault kind -> episodes
    given_up: int = 0  # units the database refused or cut off (busy, lock timeout, dropped), rolled back

    @property
    def consequences_count(self) -> int:
        return len(self.consequences)

    def lines(self) -> list[str]:
        out = ["faults        " + (", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())) or "none")
               + f"; units the database refused, rolled back and given up: {self.given_up:,}"]
        if self.breaches:
            out.append("  assumption breaches by name (the environment's, not the protocol's):")
            for name, n in sorted(self.breaches.items()):
                why = ", ".join(f"{c} {k}" for (a, c), k in sorted(self.causes.items()) if a == name)
                out.append(f"    - {name}: {n} ({why})")
        else:
            out.append("  assumption breaches by name: none")
        if self.consequences:
            out.append(f"  consequences of a breach (not protocol violations): {len(self.consequences)}")
            out += [f"    - {f.line()}" for f in self.consequences[:3]]
        if self.liveness is not None:
            out += ["  " + x for x in self.liveness.lines()]
        return out


def node_of(meta: dict) -> dict[str, str]:
    """owner id -> its process's node (a recovery worker r<k> lives in node n<k>'s process)."""
    out = {n: n for n in meta["nodes"]}
    out.update(dict(zip(meta["workers"], meta["nodes"])))
    return out


class SkewTakeovers:
    """Takeovers of claims their owner's own clock still held live (fed history rows in seq order)."""

    def __init__(self, meta: dict, skew_ms: dict[str, float]):
        self.tick = float(meta.get("tick_seconds", 0.01))
        self.node = node_of(meta)
        self.skew = skew_ms
        self.claims: dict[str, list] = {}
        self.found: list[tuple] = []

    def feed(self, row: dict) -> None:
        claims = {c[0]: c for c in row["claims"]}
        if row["action"] == R.RECOVERY_TAKEOVER and row["changed"]:
            for s, c in claims.items():
                old = self.claims.get(s)
                if old is None or c[2] != row["actor"] or old[2] == row["actor"]:
                    continue
                offset = self.skew.get(self.node.get(old[2], ""), 0.0) / 1000
                owner_now = int((row["wall"] + offset) / self.tick)
                if owner_now < old[3]:
                    self.found.append((row["seq"], s, old[2], old[3] - owner_now))
        self.claims = claims


def check_faults(history, meta: dict, res, opts, skew_ms: dict[str, float], effects) -> FaultCheck:
    """The accounting above for a finished run (`history`: its rows, harness.port.history; `res`:
    StressResult with its checker and fault log, `effects`: the EffectReport)."""
    fc = FaultCheck()
    faults = res.faults
    fc.faults.update(f.kind for f in faults if f.kind != "skew")
    fc.given_up = sum(line.startswith("stress node ") for log in res.run_dir.glob("*.log")
                      for line in log.read_text(errors="replace").splitlines())
    if any(f.kind == "skew" for f in faults):
        fc.faults["skew (standing, ms)"] = int(opts.skew_ms)
    ends = [f.t1 for f in faults if f.t1 is not None and f.kind != "skew"]
    live = Liveness(opts.lease, opts.liveness_bound, max(ends) if ends else None, clock="wall")
    skew = SkewTakeovers(meta, skew_ms)
    after, last = 0, None
    while True:
        rows = history.rows(after, 5000)
        if not rows:
            break
        for row in rows:
            live.feed(row)
            skew.feed(row)
            last = row["wall"]
        after = rows[-1]["seq"]
    fc.liveness = live.finish(max(x for x in (last, res.ended_wall) if x is not None) if last else None)
    beyond = opts.skew_ms > opts.skew_bound_ms
    fc.skew_takeovers = skew.found
    for _ in skew.found:
        fc.breaches[R.SYNCHRONIZED_CLOCKS] += 1
        fc.causes[(R.SYNCHRONIZED_CLOCKS, "takeovers of a claim its owner's clock held live, skew "
                   + ("beyond the bound" if beyond else "within the bound"))] += 1
    _attribute(fc, effects, faults, node_of(meta), opts.lease, beyond)
    if res.checker is not None:
        fc.consequences = consequences(res.checker.report.violations, skew.found)
    return fc


def _attribute(fc: FaultCheck, effects, faults, node: dict, lease: float, beyond: bool) -> None:
    """Each effect-log breach under its name, with the fault under way near it (within two leases before
    it): a pause of its own node, a pause of another (a paused node may hold the write lock: every
    writer stalls), a BUSY storm (the same), else the skew beyond the bound, else a stall under load."""
    episodes = [f for f in faults if f.kind in ("pause", "storm")]
    for key, owners, t0, t1 in effects.where:
        name = key.split(" ", 1)[0]
        nodes = {node.get(o, o) for o in owners}
        near = [f for f in episodes if f.t0 <= t1 and (f.t1 if f.t1 is not None else t1) >= t0 - 2 * lease]
        if any(f.kind == "pause" and f.node in nodes for f in near):
            cause = "a pause (SIGSTOP) of its node"
        elif any(f.kind == "pause" for f in near):
            cause = "a pause (SIGSTOP) of another node"
        elif near:
            cause = "a BUSY storm"
        else:
            # (a node's own renewal and dispatch read one clock: skew cannot break TimelyDispatch)
            cause = "skew beyond the bound" if beyond and name == R.SYNCHRONIZED_CLOCKS else "a stall under load"
        fc.breaches[name] += 1
        fc.causes[(name, cause)] += 1


def consequences(violations, takeovers) -> list:
    """The findings that follow only from a takeover of a claim its owner still held (see the module doc)."""
    first: dict[str, int] = {}
    for seq, s, _owner, _early in takeovers:
        first.setdefault(s, seq)
    allowed = set(N.ASSUMPTIONS[R.SYNCHRONIZED_CLOCKS].protects)
    out = []
    for f in violations:
        if f.session in first and f.seq >= first[f.session] and \
                (set(f.names) <= allowed if f.names else f.kind in _PREMISE_KINDS):
            out.append(f)
    return out

"""Guard mutation's verdicts as users see them: the equivalent mutants spec/README.md explains, the summary
line, and the committed map (spec/mutants.json) that the reviewer's map reads.

Why the explanations live in spec/README.md: a mutant that survives is either a check missing or a guard
the protocol does not need (an equivalent mutant), and which one it is, is a claim about the protocol that
a reader of the spec should see next to its decisions. The section "Equivalent guard mutants" holds a
table, one row per mutant: its id in backticks, then the reason. A reason that begins with UNREACHED
says the mutant is not equivalent, only not reached on the gate's configurations (it names where it is
killed): counted apart, so a gap in the configurations stays visible. A surviving mutant without a row is
unexplained; a row whose mutant was killed, or no longer exists, is stale.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.engines.mutate import INCOMPLETE, KILLED, Verdict

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "spec" / "README.md"
MAP = ROOT / "spec" / "mutants.json"
SECTION = "### Equivalent guard mutants"
FORMAT = "claimcheck-guard-mutants"
UNREACHED = "not reached on the gate's configurations"


def equivalents(path: Path = README) -> dict[str, str]:
    """Mutant id -> the reason it is equivalent, from the README's section (its table's rows)."""
    out: dict[str, str] = {}
    inside = False
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            inside = line.strip() == SECTION
            continue
        m = re.match(r"\|\s*`(.+?)`\s*\|\s*(.+?)\s*\|\s*$", line) if inside else None
        if m:
            out[m.group(1)] = m.group(2)
    return out


@dataclass
class Summary:
    verdicts: list[Verdict]
    explained: dict[str, str] = field(default_factory=dict)  # the README's rows

    @property
    def killed(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict == KILLED]

    @property
    def equivalent(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict != KILLED and v.id in self.explained]

    @property
    def unreached(self) -> list[Verdict]:
        return [v for v in self.equivalent if self.explained[v.id].startswith(UNREACHED)]

    @property
    def unexplained(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict != KILLED and v.id not in self.explained]

    def stale(self, every: list[str] | None = None) -> list[str]:
        """README rows for mutants that were killed, or (given every mutant's id) no longer exist."""
        killed = {v.id for v in self.killed}
        gone = [] if every is None else [i for i in self.explained if i not in set(every)]
        return [i for i in self.explained if i in killed] + gone

    def line(self) -> str:
        return f"killed {len(self.killed)} of {len(self.verdicts)} guard mutants; {len(self.unexplained)} unexplained"

    def detail(self) -> str:
        """What the survivors are, as spec/README.md explains them."""
        unreached = len(self.unreached)
        return (f"{len(self.equivalent) - unreached} equivalent, {unreached} {UNREACHED}: spec/README.md, "
                "\"Equivalent guard mutants\"")


def describe(v: Verdict, explained: dict[str, str]) -> str:
    """One line per mutant: its verdict and who noticed, or why nothing can."""
    if v.verdict == KILLED:
        return f"killed      {v.id}  by {', '.join(v.by)} on {v.config}"
    if v.id in explained:
        return f"equivalent  {v.id}  ({explained[v.id]})"
    grew = f" (its state space outgrew {v.config}'s: stopped at {v.states:,} states)" if v.verdict == INCOMPLETE else ""
    return f"UNEXPLAINED {v.id}  at {v.where}: no check noticed{grew}"


def write_map(verdicts: list[Verdict], configs: tuple[str, ...], path: Path = MAP) -> None:
    """spec/mutants.json: every mutant, its verdict and who killed it, for the reviewer's map (no line numbers,
    times or state counts: the file changes only when a verdict does)."""
    doc = {"format": FORMAT, "version": 1, "configurations": list(configs),
           "mutants": [{k: v for k, v in vd.to_json().items() if k not in ("seconds", "where", "states")}
                       for vd in verdicts]}
    path.write_text(json.dumps(doc, indent=1) + "\n")


def read_map(path: Path = MAP) -> list[dict]:
    """The committed mutants (empty when there is no map yet)."""
    if not path.exists():
        return []
    return json.loads(path.read_text()).get("mutants", [])


def breakers(invariant: str, path: Path = MAP) -> list[str]:
    """The guard mutants the committed map says break `invariant` (for `claimcheck invariants`)."""
    return [f"guard mutant {m['id']} on {m['config']}" for m in read_map(path)
            if m["verdict"] == KILLED and invariant in m["by"]]


def map_problems(committed: list[dict], ids: list[str], explained: dict[str, str]) -> list[str]:
    """Why the committed map is not current for the twin's mutants `ids` and the README's reasons, or []."""
    out = []
    if [m["id"] for m in committed] != ids:
        new = [i for i in ids if i not in {m["id"] for m in committed}]
        gone = [m["id"] for m in committed if m["id"] not in set(ids)]
        out.append(f"spec/mutants.json is stale (run `claimcheck mutate-spec --write`): new {new[:3]}, gone {gone[:3]}")
    out += [f"survivor without a reason in spec/README.md: {m['id']}" for m in committed
            if m["verdict"] != KILLED and m["id"] not in explained]
    out += [f"killed, yet listed as equivalent in spec/README.md: {m['id']}" for m in committed
            if m["verdict"] == KILLED and m["id"] in explained]
    out += [f"listed in spec/README.md, no such mutant: {i}" for i in explained if i not in set(ids)]
    return out

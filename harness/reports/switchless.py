"""The gate for a server without defect switches: its kill matrix is not applicable, and says so.

The kill matrix switches each registry defect on in the server under test and wants a check to catch it.
A third party's server ships no such switches (nor should it), so for it the stage is skipped with the
reason, never passed; a skip of this kind (`NOT_APPLICABLE`) does not fail the gate even under
`--strict`, which guards against checks that could run and did not (no TLC, no Apalache), not against a
capability the server lacks by design: a user's CI runs `--strict`, and a gate red for every correct
third-party server could not be adopted. What the gate can say instead of the kill matrix's figure is
what it measured without switches (the coverage of the registry's actions, boundaries and refusal
probes by the stages that ran on the server) and where the server's own strength figure comes from: the
mutation score of its code with claimcheck as the oracle (docs/mutation.md).
"""

from __future__ import annotations

from spec import names as N

from harness.port import switches
from harness.reports.results import SKIP, StageResult

NOT_APPLICABLE = "NotApplicable"  # a StageResult.kind: skipped because the server lacks the capability by design
MUTATION_DOC = "docs/mutation.md"
SUMMARY = "not applicable: the server has no defect switches (a skip, not a pass; --strict allows it)"


def mutation_hint(command: str | None) -> str:
    """How the server's own strength figure is measured: the mutation tool's test command is claimcheck."""
    sut = f" --sut '{command}'" if command else ""
    return (f"its strength figure is the mutation score of its own code with `claimcheck replay{sut}` and "
            f"`claimcheck conform{sut} --config C` as the test command ({MUTATION_DOC})")


def coverage(results, cov: dict) -> str:
    """What the stages that ran measured on the server, without switches: traces replayed, and the
    registry's actions and boundaries the exhaustive walk took, with its edges and refusal probes (`cov`:
    the gate's record of the conformance stage)."""
    parts = []
    for r in results:
        if r.name == "traces" and r.status != SKIP:
            parts.append(f"traces {r.status}: {len(r.checks)} committed traces")
        if r.name == "conformance" and r.status != SKIP:
            if cov:
                parts.append(f"conformance {r.status}: {len(cov['actions'])}/{len(N.ACTIONS)} actions, "
                             f"{len(cov['boundaries'])}/{len(N.BOUNDARIES)} boundaries, {cov['edges']:,} edges, "
                             f"{cov['probes']:,} refusal probes")
    return "; ".join(parts) or "no replay or conformance stage ran"


def not_applicable(g, whom: str) -> StageResult | None:
    """The kill matrix's result when the server has no defect switch (None: it has some, so it runs)."""
    if switches(g.server):
        return None
    detail = (f"not applicable: {whom} declares no defect switches (its driver's hello `defects`), so no registry "
              f"defect can be switched on in it (a skip, not a pass). Measured without switches: "
              f"{coverage(g.results, g.coverage)}; {mutation_hint(g.server.command)}")
    return StageResult("kill matrix", SKIP, detail, kind=NOT_APPLICABLE)


def partial(g) -> list[str]:
    """The registry defects the server has switches for, in the registry's order (all of them: nothing changes)."""
    have = switches(g.server)
    return [d for d in N.DEFECTS if d in have]

"""`claimcheck invariants`: the reviewer's map. For each invariant: its TLA+ text, its Python
definition, the checks that enforce it, the defects (and switched-off assumptions) that break it, and the
guard mutants that break it (`claimcheck mutate-spec`'s committed map, spec/mutants.json)."""

from __future__ import annotations

import inspect
from pathlib import Path

from spec import invariants as I
from spec import names as N

from spec.source import MODULES, REFINEMENT, SPEC, tla_parser

from harness.reports.mutation import breakers as mutant_breakers

CHECKS = {
    "state": ["explorer: every reachable state (claimcheck check)",
              "TLC: INVARIANTS in every MC_*.cfg",
              "Apalache: --inv (when installed)",
              "replay: every implementation state of every trace (claimcheck replay)",
              "lockstep: every implementation state Hypothesis reaches (claimcheck fuzz)"],
    "action": ["explorer: every edge of the state graph",
               "TLC: PROPERTIES, as [][P]_vars",
               "Apalache: --inv on its Step predicate (when installed)",
               "replay: every implementation step of every trace",
               "lockstep: every implementation step"],
    "liveness": ["explorer: weakly fair strongly connected components (harness/engines/liveness.py)",
                 "TLC: PROPERTIES under Spec's fairness",
                 "replay: lasso traces end in a state where the premise holds without the goal"],
    "refinement": ["TLC: PROPERTIES (Refinement == Lifecycle!Spec) on ci and sessions, in the gate's TLC stage",
                   "TLC: SessionLifecycle's own invariants on spec/MCSessionLifecycle.cfg "
                   "(tests/engines/test_refinement.py)"],
}
NONE = "none: no registry defect breaks it and no assumption protects it (a check no defect kills)"
NO_MUTANT = "none noticed first (claimcheck mutate-spec: each mutant is shown with the check that noticed it first)"


def breakers(name: str, *, invariants=None, defects=None, assumptions=None, refinement_broken_by=None) -> list[str]:
    """Who breaks invariant `name`, from the registry alone: each defect whose `violates` names it, each
    assumption whose `protects` names it (switched off); for the refinement, each defect or assumption in
    REFINEMENT_BROKEN_BY. The keyword arguments stand in for the registry's tables (a sample registry)."""
    invariants = N.INVARIANTS if invariants is None else invariants
    defects = N.DEFECTS if defects is None else defects
    assumptions = N.ASSUMPTIONS if assumptions is None else assumptions
    by_refinement = N.REFINEMENT_BROKEN_BY if refinement_broken_by is None else refinement_broken_by
    refinement = invariants[name].kind == "refinement"
    out = [f"defect {d.name} on {d.config}: {d.source}" for d in defects.values()
           if name in d.violates or (refinement and d.name in by_refinement)]
    out += [f"assumption {a.name} off, on {a.config}" for a in assumptions.values()
            if name in a.protects or (refinement and a.name in by_refinement)]
    return out


def unbroken(**registry) -> list[str]:
    """The invariants of the registry (state, action, liveness, refinement) that none of its defects or
    switched-off assumptions breaks: there must be none (tests/reports/test_reviewer.py)."""
    invariants = registry.get("invariants") or N.INVARIANTS
    return [n for n in invariants if not breakers(n, **registry)]


def tla_definitions(path: Path | None = None) -> dict[str, str]:
    """Operator name -> its full TLA+ definition text: of `path`, or of every module in spec/ with the
    protocol's (SessionExecution.tla) first, so SessionLifecycle's namesakes never hide them."""
    out: dict[str, str] = {}
    for module in [path] if path is not None else [SPEC] + [m for m in MODULES if m != SPEC]:
        tree = tla_parser().parse(module.read_bytes())
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "operator_definition":
                name = node.child_by_field_name("name")
                if name is not None:
                    out.setdefault(name.text.decode(), node.text.decode())
            stack.extend(node.children)
    return out


def refinement_mapping(path: Path = REFINEMENT) -> str:
    """The marked section of the refinement module: each abstract variable as a concrete expression."""
    lines = path.read_text().splitlines()
    start = next(k for k, line in enumerate(lines) if "THE REFINEMENT MAPPING" in line)
    end = next(k for k, line in enumerate(lines) if "end of the mapping" in line)
    return "\n".join(lines[start:end + 1]).strip()


def python_definition(name: str) -> str:
    if N.INVARIANTS[name].kind == "refinement":
        return f"(no Python twin: TLC checks it; the mapping is {REFINEMENT.relative_to(REFINEMENT.parents[1])})"
    fn = I.STATE_CHECKS.get(name) or I.ACTION_CHECKS.get(name)
    if fn is not None:
        return inspect.getsource(fn).rstrip()
    lines = inspect.getsource(I.leads_to).splitlines()
    start = next(k for k, line in enumerate(lines) if f'"{name}"' in line)
    premise = [line for line in lines if name in I.RESIDUAL_PREMISES  # its residuals' premises (R1, R2)
               and line.strip().startswith(("for premise in RESIDUAL_PREMISES", "q = lambda st, s=s, q=q"))]
    return "\n".join(lines[start:start + 3] + premise)


def entry(name: str, tla: dict[str, str]) -> dict:
    inv = N.INVARIANTS[name]
    text = tla.get(name, "")
    if inv.kind == "action" and f"{name}Step" in tla:
        text = tla[f"{name}Step"] + "\n" + text
    if inv.kind == "refinement":
        text = refinement_mapping() + "\n\n" + tla.get(name, "")
    return {"name": name, "kind": inv.kind, "statement": inv.doc, "tla": text,
            "python": python_definition(name), "checks": CHECKS[inv.kind], "broken_by": breakers(name) or [NONE],
            "mutants": mutant_breakers(name) or [NO_MUTANT]}


def render(names=None, fmt: str = "text") -> str:
    tla = tla_definitions()
    chosen = names or list(N.INVARIANTS)
    for n in chosen:
        if n not in N.INVARIANTS:
            raise N.UnknownName(f"unknown invariant {n!r}; known: {', '.join(N.INVARIANTS)}")
    out = []
    for n in chosen:
        e = entry(n, tla)
        if fmt == "markdown":
            out += [f"## `{n}` ({e['kind']})", "", e["statement"], "", "```tla", e["tla"], "```", "",
                    "```python", e["python"], "```", "", "Enforced by:", *[f"- {c}" for c in e["checks"]], "",
                    "Broken by:", *[f"- {b}" for b in e["broken_by"]], "",
                    "Guard mutants that break it:", *[f"- {b}" for b in e["mutants"]], ""]
        else:
            out += [f"=== {n} ({e['kind']}): {e['statement']}", "--- TLA+", e["tla"], "--- Python", e["python"],
                    "--- enforced by", *[f"  {c}" for c in e["checks"]], "--- broken by",
                    *[f"  {b}" for b in e["broken_by"]], "--- guard mutants that break it",
                    *[f"  {b}" for b in e["mutants"]], ""]
    return "\n".join(out)

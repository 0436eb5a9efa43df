"""`claimcheck invariants`: the reviewer's map. For each invariant: its TLA+ text, its Python
definition, the checks that enforce it, and the defects (and switched-off assumptions) that break it."""

from __future__ import annotations

import inspect
from pathlib import Path

from spec import invariants as I
from spec import names as N

from spec.source import MODULES, REFINEMENT, SPEC, tla_parser

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
MUTANT_TEST = "tests/spec/test_invariant_mutants.py"


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
    return "\n".join(lines[start:start + 3])


def entry(name: str, tla: dict[str, str]) -> dict:
    inv = N.INVARIANTS[name]
    text = tla.get(name, "")
    if inv.kind == "action" and f"{name}Step" in tla:
        text = tla[f"{name}Step"] + "\n" + text
    breakers = [f"defect {d.name} ({d.config})" for d in N.DEFECTS.values()
                if name in d.violates or (inv.kind == "refinement" and d.name in N.REFINEMENT_BROKEN_BY)]
    breakers += [f"assumption {a.name} off ({a.config})" for a in N.ASSUMPTIONS.values()
                 if name in a.protects or (inv.kind == "refinement" and a.name in N.REFINEMENT_BROKEN_BY)]
    if inv.kind == "refinement":
        text = refinement_mapping() + "\n\n" + tla.get(name, "")
    if not breakers:
        breakers = [f"no registry defect: a mutant twin in {MUTANT_TEST}"]
    return {"name": name, "kind": inv.kind, "statement": inv.doc, "tla": text,
            "python": python_definition(name), "checks": CHECKS[inv.kind], "broken_by": breakers}


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
                    "Broken by:", *[f"- {b}" for b in e["broken_by"]], ""]
        else:
            out += [f"=== {n} ({e['kind']}): {e['statement']}", "--- TLA+", e["tla"], "--- Python", e["python"],
                    "--- enforced by", *[f"  {c}" for c in e["checks"]], "--- broken by",
                    *[f"  {b}" for b in e["broken_by"]], ""]
    return "\n".join(out)

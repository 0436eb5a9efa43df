"""The TLA+ source: where the specification is, and tree-sitter's parser for reading its declarations.

One place for both, so that the engines (TLC, Apalache) and the reviewer's map read the same file.
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPEC = HERE / "SessionExecution.tla"  # the protocol (what the reviewer's map and Apalache read)
LIFECYCLE = HERE / "SessionLifecycle.tla"  # the abstract protocol a reviewer reads first
REFINEMENT = HERE / "SessionExecutionRefinesLifecycle.tla"  # the refinement mapping, in one place
MC_SPEC = HERE / "MCSessionExecution.tla"  # what TLC checks: the protocol, its refinement, model checking
MC_LIFECYCLE = HERE / "MCSessionLifecycle.tla"  # the abstract protocol alone, with its own invariants
MODULES = (SPEC, LIFECYCLE, REFINEMENT, MC_SPEC, MC_LIFECYCLE)  # every .tla file (tests check the list)


def declarations(path: Path = SPEC) -> dict[str, dict[str, str | None]]:
    """{'VARIABLES': {name: type or None}, 'CONSTANTS': {...}} from the spec, with each declaration's
    `@type:` annotation (the comment that precedes it), parsed with tree-sitter's TLA+ grammar."""
    tree = tla_parser().parse(path.read_bytes())
    if tree.root_node.has_error:
        raise ValueError(f"{path}: the TLA+ parser reports a syntax error")
    out: dict[str, dict[str, str | None]] = {"VARIABLES": {}, "CONSTANTS": {}}
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        kind = {"variable_declaration": "VARIABLES", "constant_declaration": "CONSTANTS"}.get(node.type)
        if kind:
            pending = None
            for child in node.children:
                text = child.text.decode()
                if child.type in ("comment", "block_comment") and "@type:" in text:
                    pending = text.split("@type:", 1)[1].strip().rstrip("*)").strip().rstrip(";").strip()
                elif child.type == "identifier":
                    out[kind][text] = pending
                    pending = None
        stack.extend(node.children)
    return out


def tla_parser():
    """tree-sitter's TLA+ grammar (the tree-sitter-tlaplus wheel)."""
    import warnings

    import tree_sitter_tlaplus
    from tree_sitter import Language, Parser
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # older grammars hand over an int pointer
        return Parser(Language(tree_sitter_tlaplus.language()))


def untyped_variables(path: Path = SPEC) -> list[str]:
    return [v for v, t in declarations(path)["VARIABLES"].items() if not t]


HOOKS_SECTION = "(* Hooks:"  # the comment that opens the protocol module's section of hooks


def hooks(text: str | None = None) -> tuple[str, ...]:
    """The protocol's hooks, in order: every operator defined in SessionExecution.tla's section Hooks (from
    its opening comment to the next `----` line). The section is where the list is stated: spec/names.py's
    HOOKS is read from it, so a hook defined there reaches the generated `Hook <- MCHook` overrides with no
    second list to keep."""
    text = SPEC.read_text(encoding="utf-8") if text is None else text
    start = text.find(HOOKS_SECTION)
    if start < 0:
        raise ValueError(f"{SPEC.name}: no section of hooks (a comment opening {HOOKS_SECTION!r})")
    end = text.find("\n----", start)
    section = text[start:end if end >= 0 else len(text)]
    return tuple(re.findall(r"^(\w+)(?:\(.*?\))? ==", section, re.M))


# The protocol's hooks: the operators of SessionExecution.tla where a known defect decides differently, each
# overridden by the MC module's MC<Hook> in every TLC configuration (spec/configs.py); part of the registry
# (spec/names.py re-exports them).
HOOKS = hooks()

"""The mutation table, from the tools' own result files: per module, mutants generated, killed, timed out,
survived and the score, for the bundled server (mutmut's `mutants/**/*.py.meta`) and the TypeScript
example (StrykerJS's JSON report), then every survivor against the committed triage (ci/mutation/triage.json).

    python ci/mutation/report.py [--mutmut DIR] [--stryker FILE] [--survivors] [--check]

Killed counts a crash of the server (a check failing any way; mutmut's signal deaths); timed out is the
tool's own timeout; survived counts the mutants no check reached (mutmut's "no tests", Stryker's
NoCoverage, or none the oracle's coverage map of the run has) too, as a mutant no check runs is one
no check kills. Score: (killed + timed out) / (generated -
not run), where not run is what the tool did not test (skipped, not checked yet, a mutant that does not
compile). The goal (issue 33): >= 90% of the non-equivalent mutants killed per server; `--check` exits 1
when a server misses it or a survivor has no triage entry.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import fnmatch
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRIAGE = Path(__file__).with_name("triage.json")
GOAL = 0.90
STATUSES = ("killed", "timeout", "survived", "not run")
SERVERS = ("python", "typescript")

# mutmut 3.8.1's exit codes (mutmut/stats.py, status_by_exit_code): 1 and 3 a failing test, 0 every test
# passing, 5 and 33 no test reaching the mutant, 34 skipped, 36 and the SIGXCPU codes its timeout, 37 caught
# by the type checker (not configured here), -11 and -9 a crash; None not checked yet, 2 interrupted
MUTMUT = {1: "killed", 3: "killed", -11: "killed", -9: "killed",
          0: "survived", 5: "survived", 33: "survived",
          36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout"}
# StrykerJS's mutant statuses (mutation-testing-report-schema); a RuntimeError is a test run that errored
STRYKER = {"Killed": "killed", "RuntimeError": "killed", "Timeout": "timeout",
           "Survived": "survived", "NoCoverage": "survived"}
# mutmut's "no tests" and "skipped"; Stryker's NoCoverage, and a survivor no check reached by the oracle's map
UNREACHED = {5, 33, "NoCoverage", "Unreached"}


@dataclass(frozen=True)
class Mutant:
    server: str  # "python" or "typescript"
    module: str  # the mutated file, relative to its server's root
    name: str  # the tool's id
    status: str  # one of STATUSES
    raw: object  # the tool's own code or status
    before: str = ""  # the changed code, before and after (filled for survivors)
    after: str = ""

    @property
    def unreached(self) -> bool:
        return self.raw in UNREACHED


# ---------------------------------------------------------------- mutmut

def mutmut_results(mutants_dir: Path) -> list[Mutant]:
    """Every mutant of every `.py.meta` file under `mutants_dir` (mutmut's working copy)."""
    out = []
    for meta in sorted(mutants_dir.rglob("*.py.meta")):
        module = meta.relative_to(mutants_dir).as_posix()[:-len(".meta")]
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        functions = None
        for name, code in sorted(codes.items()):
            status = MUTMUT.get(code, "not run")
            before = after = ""
            if status == "survived":
                functions = functions or _functions((mutants_dir / module).read_text(encoding="utf-8"))
                before, after = mutmut_change(functions, name)
            out.append(Mutant("python", module, name, status, code, before, after))
    return out


def _functions(source: str) -> dict[str, list[str]]:
    """The top-level functions and methods of a mutated file by name, each as its stripped lines with
    the `def` line's name left out (the original and its mutants differ there)."""
    lines = source.splitlines()
    out = {}
    for node in ast.parse(source).body:
        for f in (node.body if isinstance(node, ast.ClassDef) else [node]):
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = f.decorator_list[0].lineno if f.decorator_list else f.lineno
                text = [line.strip() for line in lines[first - 1:f.end_lineno]]
                out[f.name] = [line.replace(f.name, "", 1) for line in text]
    return out


def mutmut_change(functions: dict[str, list[str]], name: str) -> tuple[str, str]:
    """The lines a mutant changes, before and after: mutmut writes the original function
    (`x_f__mutmut_orig`) and each mutant (`x_f__mutmut_N`) into the mutated file side by side."""
    fn = name.rpartition(".")[2]
    orig = functions.get(fn.partition("__mutmut_")[0] + "__mutmut_orig")
    mutant = functions.get(fn)
    if orig is None or mutant is None:
        return "", ""
    before, after = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, orig, mutant, autojunk=False).get_opcodes():
        if tag != "equal":
            before += orig[i1:i2]
            after += mutant[j1:j2]
    return " ".join(before), " ".join(after)


# ---------------------------------------------------------------- StrykerJS

def stryker_results(report: Path) -> list[Mutant]:
    """Every mutant of a StrykerJS JSON report (mutation-testing-report-schema)."""
    data = json.loads(report.read_text(encoding="utf-8"))
    reached = reached_by_checks(report)
    out = []
    for module, f in sorted(data["files"].items()):
        lines = f["source"].splitlines(keepends=True)
        for m in f["mutants"]:
            status = STRYKER.get(m["status"], "not run")
            before = after = ""
            if status == "survived":
                before, after = " ".join(_span(lines, m["location"]).split()), " ".join(m.get("replacement", "").split())
            raw = "Unreached" if status == "survived" and reached is not None and m["id"] not in reached \
                else m["status"]
            out.append(Mutant("typescript", module, m["id"], status, raw, before, after))
    return out


def reached_by_checks(report: Path) -> set[str] | None:
    """The mutants some check reached, from the oracle's map of the same run (ci/mutation/oracle.py
    `--coverage`): `coverage.json` beside `mutation.json`, `NAME.coverage.json` beside `NAME.json` (a
    renamed run's pair); None without one."""
    name = "coverage.json" if report.name == "mutation.json" else f"{report.stem}.coverage.json"
    path = report.with_name(name)
    if not path.exists():
        return None
    return {m for ids in json.loads(path.read_text(encoding="utf-8"))["checks"].values() for m in ids}


def _span(lines: list[str], location: dict) -> str:
    """The source text of a location (lines and columns from 1, the end exclusive)."""
    (l1, c1), (l2, c2) = ((location[k]["line"], location[k]["column"]) for k in ("start", "end"))
    if l1 == l2:
        return lines[l1 - 1][c1 - 1:c2 - 1]
    return lines[l1 - 1][c1 - 1:] + "".join(lines[l1:l2 - 1]) + lines[l2 - 1][:c2 - 1]


# ---------------------------------------------------------------- triage

def load_triage(path: Path = TRIAGE) -> list[dict]:
    """The committed triage: a list of entries, each `server`, `verdict` ("equivalent" or "gap"), `why`,
    and what it covers, every field given having to match: `module` and `name` (shell patterns on the
    file and the tool's id), `before` and `after` (the changed code, whitespace aside), `match` (a regular
    expression searched in "before -> after"). A mutant's id is the tool's numbering and moves when the
    code does; the change it makes does not, so most entries name the change."""
    entries = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    for k, e in enumerate(entries):
        if e.get("verdict") not in ("equivalent", "gap") or not e.get("why") or e.get("server") not in SERVERS:
            raise ValueError(f"{path}: entry {k}: needs server ({' or '.join(SERVERS)}), verdict (equivalent or gap) and why")
        try:
            re.compile(e.get("match", ""))
        except re.error as exc:
            raise ValueError(f"{path}: entry {k}: match: {exc}") from None
    return entries


def _norm(code: str) -> str:
    return " ".join(code.split())


def verdict_of(m: Mutant, triage: list[dict]) -> dict | None:
    """The first entry that covers `m`."""
    change = f"{_norm(m.before)} -> {_norm(m.after)}"
    for e in triage:
        if e["server"] == m.server \
                and fnmatch.fnmatchcase(m.module, e.get("module", "*")) \
                and fnmatch.fnmatchcase(m.name, e.get("name", "*")) \
                and ("before" not in e or _norm(e["before"]) == _norm(m.before)) \
                and ("after" not in e or _norm(e["after"]) == _norm(m.after)) \
                and ("match" not in e or re.search(e["match"], change)):
            return e
    return None


# ---------------------------------------------------------------- the table

def score(counts: Counter, equivalent: int = 0) -> float | None:
    run = sum(counts[s] for s in ("killed", "timeout", "survived")) - equivalent
    return (counts["killed"] + counts["timeout"]) / run if run > 0 else None


def percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def table(mutants: list[Mutant], triage: list[dict]) -> tuple[list[str], dict[str, float | None]]:
    """The table's lines, and each server's score over its non-equivalent mutants."""
    head = ("server", "module", "generated", "killed", "timed out", "survived", "unreached", "not run",
            "equivalent", "score", "non-equiv.")
    rows, goal = [head], {}
    for server in sorted({m.server for m in mutants}):
        mine = [m for m in mutants if m.server == server]
        for module in sorted({m.module for m in mine}) + [None]:
            part = [m for m in mine if module is None or m.module == module]
            counts = Counter(m.status for m in part)
            equivalent = sum(1 for m in part if m.status == "survived"
                             and (verdict_of(m, triage) or {}).get("verdict") == "equivalent")
            rows.append((server, module or "all", len(part), counts["killed"], counts["timeout"],
                         counts["survived"], sum(1 for m in part if m.unreached), counts["not run"], equivalent,
                         percent(score(counts)), percent(score(counts, equivalent))))
            if module is None:
                goal[server] = score(counts, equivalent)
    widths = [max(len(str(r[k])) for r in rows) for k in range(len(head))]
    lines = ["  ".join(str(v).ljust(w) if k < 2 else str(v).rjust(w) for k, (v, w) in enumerate(zip(r, widths)))
             for r in rows]
    return lines, goal


def survivor_lines(mutants: list[Mutant], triage: list[dict]) -> tuple[list[str], int]:
    """One line per survivor with its verdict (or UNTRIAGED), and how many have none."""
    out, untriaged = [], 0
    for m in mutants:
        if m.status != "survived":
            continue
        v = verdict_of(m, triage)
        untriaged += v is None
        label = f"{v['verdict']}: {v['why']}" if v else "UNTRIAGED"
        out.append(f"{m.server} {m.module} {m.name}: `{m.before}` -> `{m.after}`  [{label}]")
    return out, untriaged


BAD = (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, SyntaxError)  # a missing or malformed file


def collect(mutmut_dir: Path, stryker: list[Path]) -> list[Mutant]:
    """Every mutant of both tools' result files; a bad one is a ValueError naming the file."""
    mutants = []
    for read, path in ([(mutmut_results, mutmut_dir)] if mutmut_dir.is_dir() else []) + \
            [(stryker_results, p) for p in stryker]:
        try:
            mutants += read(path)
        except BAD as exc:
            raise ValueError(f"{path}: {type(exc).__name__}: {exc}") from None
    return mutants


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutmut", type=Path, default=ROOT / "mutants", help="mutmut's working copy (default mutants/)")
    parser.add_argument("--stryker", type=Path, action="append",
                        help="a StrykerJS JSON report (repeatable; default examples/typescript/reports/mutation/mutation.json)")
    parser.add_argument("--triage", type=Path, default=TRIAGE, help="the committed triage (default ci/mutation/triage.json)")
    parser.add_argument("--survivors", action="store_true", help="list every survivor with its triage")
    parser.add_argument("--check", action="store_true", help="exit 1 when a server misses the goal or a survivor is untriaged")
    args = parser.parse_args(argv)
    default = ROOT / "examples/typescript/reports/mutation/mutation.json"
    stryker = args.stryker or ([default] if default.is_file() else [])
    try:
        mutants = collect(args.mutmut, stryker)
        triage = load_triage(args.triage)
    except BAD as exc:
        print(f"mutation report: {exc}", file=sys.stderr)
        return 2
    if not mutants:
        print(f"mutation report: no results (mutmut: {args.mutmut}, StrykerJS: {', '.join(map(str, stryker)) or 'none'})",
              file=sys.stderr)
        return 2
    lines, goal = table(mutants, triage)
    print("\n".join(lines))
    missed = [s for s, x in goal.items() if x is None or x < GOAL]
    listed, untriaged = survivor_lines(mutants, triage)
    if args.survivors:
        print("\n".join(listed))
    print(f"goal {100 * GOAL:.0f}% of non-equivalent mutants killed: "
          + ", ".join(f"{s} {percent(x)} {'met' if s not in missed else 'missed'}" for s, x in goal.items())
          + f"; {untriaged} survivor(s) untriaged")
    return 1 if args.check and (missed or untriaged) else 0


if __name__ == "__main__":
    sys.exit(main())

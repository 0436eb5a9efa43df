"""The mutation oracle: claimcheck's own checks, cheapest first, as the test command of a mutation tool.

A mutant is killed when a check exits non-zero: 1 is a divergence or a violated invariant, and a server
that crashes (a driver that dies, an exception out of the bundled server) fails the check too; the
mutation tool's own clock makes a hang a timeout. Not the project's unit tests: a mutant survives only
when claimcheck itself cannot tell the server from a correct one.

    python ci/mutation/oracle.py --sut CMD      # StrykerJS's command runner (examples/typescript)
    python ci/mutation/oracle.py --sut CMD --coverage FILE   # the same, each mutant only where it is reached

The checks are `claimcheck replay` of the committed traces and `claimcheck conform` on each of the `ci`
profile's small configurations (every registry action and named boundary among them), fewest edges
first, so most mutants die in the first seconds; then, for the bundled server, `claimcheck stress
--simulate` (its production loops, deterministic, the history checked); the first failure ends the run. They are called through
the `claimcheck` command's entry point in this one process (an interpreter start saved per check);
ci/mutation/oracle_pytest.py calls the same list for mutmut.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from importlib.metadata import entry_points

from harness.conformance import exhaustive as X

# (id, argv): the traces, then the `ci` profile's configurations in its order, fewest edges first
# (harness.conformance.exhaustive.SMALL: the one list; `conform` also gets `--out DIR`, its failure traces,
# kept out of the checkout)
CHECKS = (("replay", ["replay"]),
          *((X.SMALL[label][0], ["conform", "--config", label]) for label in X.PROFILES["ci"]),
          ("simulate", ["stress", "--simulate", "--seconds", "2", "--seed", "3", "--crash-every", "0.15"]))
# the production loops (harness/stress/simulation.py) run only in the bundled server's process: with --sut,
# a server's own loops are its driver's business, and the check is left out
BUNDLED_ONLY = {"simulate"}


def claimcheck():
    """The `claimcheck` console script's function, as installed (pyproject's [project.scripts])."""
    (script,) = entry_points(group="console_scripts", name="claimcheck")
    return script.load()


def argv_of(argv: list[str], out_dir: str, sut: str | None) -> list[str]:
    out = ["--out", out_dir] if argv[0] in ("conform", "stress") else []
    return [*argv, *out, *(["--sut", sut] if sut else [])]


# StrykerJS's command runner names the mutant a run tests in this variable, and runs its dry run without it
ACTIVE = "__STRYKER_ACTIVE_MUTANT__"
# the driver appends the mutants its process reached to this file at exit (examples/typescript/src/main.js)
REACHED = "CLAIMCHECK_MUTANT_COVERAGE"


def run(sut: str | None, checks=CHECKS, say=print, coverage: str | None = None) -> int:
    """Each check in order; the first non-zero exit code, or 0 when every check passes.

    With `coverage` (a file), StrykerJS's runs share a map of which mutants each check reaches. The dry run
    (no active mutant) runs every check and writes the map from what the driver's processes record; a
    mutant's run then runs only the checks that reach it, since a check whose run never executes the
    mutated code runs exactly as on the original server (every check is deterministic) and passes, as it
    did in the dry run. A mutant no check reaches survives at once, said so. Stryker's command runner has
    no coverage of its own: without this every survivor ran every check."""
    checks = [c for c in checks if not (sut and c[0] in BUNDLED_ONLY)]
    record = coverage is not None and ACTIVE not in os.environ
    if coverage is not None and not record:
        checks = reaching(checks, coverage, os.environ[ACTIVE])
        if not checks:
            say(f"oracle: no check reaches mutant {os.environ[ACTIVE]}: survived (unreached)")
            return 0
    if record and os.path.exists(coverage):
        os.remove(coverage)  # an earlier run's map must not outlive a dry run that fails
    main = claimcheck()
    reached: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="claimcheck-oracle-") as out_dir:
        for name, argv in checks:
            if record:
                os.environ[REACHED] = os.path.join(out_dir, f"{name}.reached")
            code = main(argv_of(argv, out_dir, sut))
            if code != 0:
                say(f"oracle: {name} exits {code}: killed")
                return code
            if record and (got := read_reached(os.environ.pop(REACHED))) is not None:
                reached[name] = sorted(got)
                say(f"oracle: {name} reaches {len(got)} mutants")
    if record:
        write_map(coverage, reached, say)
    say("oracle: every check passes: survived")
    return 0


def read_reached(path: str) -> set[str] | None:
    """The union of the JSON lines the driver's processes appended; None when no process recorded (the
    check is then left out of the map, so it runs on every mutant)."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return {m for line in f if line.strip() for m in json.loads(line)}


def write_map(path: str, reached: dict[str, list[str]], say) -> None:
    """The dry run's map; none when nothing was recorded (the code is not instrumented, or the driver does
    not record), so that no mutant is ever called unreached on an empty map: every check then runs."""
    if not any(reached.values()):
        say("oracle: no process recorded a reached mutant (the server is not instrumented, or its driver does "
            "not honour $CLAIMCHECK_MUTANT_COVERAGE): every mutant runs every check")
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"checks": reached}, f, indent=0)


def reaching(checks, path: str, mutant: str):
    """The checks whose dry run reached `mutant`, in order; every check when there is no map, and a check
    the map leaves out (no process of it recorded) too."""
    if not os.path.exists(path):
        return list(checks)
    with open(path, encoding="utf-8") as f:
        known = {name: set(ids) for name, ids in json.load(f)["checks"].items()}
    return [c for c in checks if c[0] not in known or mutant in known[c[0]]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sut", help="the driver command of the server under test (default: the bundled one)")
    parser.add_argument("--check", action="append", choices=[name for name, _ in CHECKS],
                        help="only this check (repeatable; default every one, in order)")
    parser.add_argument("--coverage", metavar="FILE",
                        help="under StrykerJS: the dry run writes which mutants each check reaches to FILE, a "
                             "mutant's run runs only those checks (docs/mutation.md)")
    args = parser.parse_args(argv)
    return run(args.sut, [c for c in CHECKS if not args.check or c[0] in args.check], coverage=args.coverage)


if __name__ == "__main__":
    sys.exit(main())

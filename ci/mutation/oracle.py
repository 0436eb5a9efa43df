"""The mutation oracle: claimcheck's own checks, cheapest first, as the test command of a mutation tool.

A mutant is killed when a check exits non-zero: 1 is a divergence or a violated invariant, and a server
that crashes (a driver that dies, an exception out of the bundled server) fails the check too; the
mutation tool's own clock makes a hang a timeout. Not the project's unit tests: a mutant survives only
when claimcheck itself cannot tell the server from a correct one.

    python ci/mutation/oracle.py --sut CMD      # StrykerJS's command runner (examples/typescript)

The checks are `claimcheck replay` of the committed traces and `claimcheck conform` on each of the `ci`
profile's small configurations (every registry action and named boundary among them), fewest edges
first, so most mutants die in the first seconds; then, for the bundled server, `claimcheck stress
--simulate` (its production loops, deterministic, the history checked); the first failure ends the run. They are called through
the `claimcheck` command's entry point in this one process (an interpreter start saved per check);
ci/mutation/oracle_pytest.py calls the same list for mutmut.
"""

from __future__ import annotations

import argparse
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


def run(sut: str | None, checks=CHECKS, say=print) -> int:
    """Each check in order; the first non-zero exit code, or 0 when every check passes."""
    main = claimcheck()
    with tempfile.TemporaryDirectory(prefix="claimcheck-oracle-") as out_dir:
        for name, argv in checks:
            if sut and name in BUNDLED_ONLY:
                continue
            code = main(argv_of(argv, out_dir, sut))
            if code != 0:
                say(f"oracle: {name} exits {code}: killed")
                return code
    say("oracle: every check passes: survived")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sut", help="the driver command of the server under test (default: the bundled one)")
    parser.add_argument("--check", action="append", choices=[name for name, _ in CHECKS],
                        help="only this check (repeatable; default every one, in order)")
    args = parser.parse_args(argv)
    return run(args.sut, [c for c in CHECKS if not args.check or c[0] in args.check])


if __name__ == "__main__":
    sys.exit(main())

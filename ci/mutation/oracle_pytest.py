"""mutmut's oracle for the bundled server: each of ci/mutation/oracle.py's checks as one pytest test.

Why pytest and in process: mutmut 3 runs pytest and picks a mutant's tests from the calls its trampolines
record in its own process, so claimcheck runs where mutmut forks: each test calls the `claimcheck`
command's entry point, `conform` without `--sut` driving the bundled server in this process (a driver
subprocess would record no call: every mutant "no tests"). conftest.py keeps the checks in
oracle.CHECKS's order, cheapest first; mutmut stops a mutant at its first failing test (`-x`).
"""

from __future__ import annotations

import pytest

import oracle


@pytest.mark.parametrize("argv", [argv for _, argv in oracle.CHECKS], ids=[name for name, _ in oracle.CHECKS])
def test_claimcheck(argv, tmp_path):
    assert oracle.claimcheck()(oracle.argv_of(argv, str(tmp_path), None)) == 0

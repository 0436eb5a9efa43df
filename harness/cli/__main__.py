"""`python -m harness.cli`: the `claimcheck` command without its console script."""

import sys

from harness.cli import main

sys.exit(main())

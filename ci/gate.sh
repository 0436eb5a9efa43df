#!/usr/bin/env bash
# The claimcheck gate as a CI job: set up Python deps, run every check, leave JUnit and JSON reports.
# Copy into your repository's CI; needs Python 3.11+ and Java 17 on the runner. Runs with --strict: a
# skipped stage fails the job, except Apalache, used when APALACHE_HOME is set or apalache-mc is on PATH
# and otherwise reported as skipped by name (--allow-skip apalache).
set -euo pipefail
cd "$(dirname "$0")/.."
REPORTS="${CLAIMCHECK_REPORTS:-reports}"
mkdir -p "$REPORTS"
command -v java >/dev/null || { echo "ci/gate.sh: java not found (TLC needs Java 17)" >&2; exit 2; }
python3 -m venv .venv
.venv/bin/pip install -q -e .
.venv/bin/claimcheck gate --strict --allow-skip apalache --junit "$REPORTS/claimcheck.xml" --json "$REPORTS/claimcheck.json" "$@"

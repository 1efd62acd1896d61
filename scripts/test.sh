#!/usr/bin/env bash
# The test suite on a fresh machine: install with the test extras, lint, then run
# the unit and integration tests (real sockets, a real IPython shell) and the
# example notebooks under nbval in a real kernel of this environment.
set -euo pipefail
EXTRAS=test source "$(dirname "$0")/setup.sh"
.venv/bin/ruff check zmqbench_magic bench
.venv/bin/python -m pytest tests examples --nbval-lax --nbval-current-env \
    --nbval-cell-timeout=600 "$@"

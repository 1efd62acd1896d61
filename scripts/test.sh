#!/usr/bin/env bash
# The test suite on a fresh machine: install with the test extras (and Debian's
# chromium for the browser test), lint, then run the unit and integration tests
# (real sockets, a real IPython shell, a real cluster, a real browser) and the
# example notebooks under nbval in a real kernel of this environment.
set -euo pipefail
EXTRAS=test source "$(dirname "$0")/setup.sh"
if [ ! -x /usr/bin/chromium ]; then
    # playwright cannot download its own browser offline; Debian's package works.
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium > /dev/null
fi
LINTED="zmqbench_magic tests bench"
.venv/bin/ruff check $LINTED
.venv/bin/ruff format --check $LINTED
.venv/bin/python -m pytest tests examples --nbval-lax --nbval-current-env \
    --nbval-cell-timeout=600 "$@"

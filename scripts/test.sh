#!/usr/bin/env bash
# On a fresh machine: install with the test extras (and Debian's chromium for the
# browser tests), then
#   bash scripts/test.sh [PYTEST ARGS]           lint, types, and the unit and integration
#       tests (real sockets, a real IPython shell, a real cluster, a real browser, test
#       hosts of their own in network namespaces with an sshd);
#   bash scripts/test.sh examples [PYTEST ARGS]  the example notebooks, each run in a
#       real kernel of this environment and its checked outputs compared by nbval.
# CI runs both.
set -euo pipefail
SUITE=tests
if [ "${1:-}" = examples ]; then
    SUITE=examples
    shift
fi
EXTRAS=test source "$(dirname "$0")/setup.sh"
# Debian packages the tests need: chromium (playwright cannot download its own
# browser offline), and for the test hosts (network namespaces) iproute2 and an sshd.
MISSING=""
[ -x /usr/bin/chromium ] || MISSING="$MISSING chromium"
command -v ip > /dev/null && command -v tc > /dev/null || MISSING="$MISSING iproute2"
[ -x /usr/sbin/sshd ] || MISSING="$MISSING openssh-server"
command -v ssh > /dev/null || MISSING="$MISSING openssh-client"
if [ -n "$MISSING" ]; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086 - one word per package
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $MISSING > /dev/null
fi
# Wheels for the test that compares a second pyzmq release side by side: fetched here
# with the other packages, so the tests themselves reach no package index.
NUMPY=$(.venv/bin/python -c "import numpy; print(numpy.__version__)")
.venv/bin/python -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --no-deps -d .wheelhouse pyzmq==26.4.0 "numpy==$NUMPY"
# In several processes (pytest-xdist): tests/conftest.py deals the work out a file (or
# a group that must stay together) at a time, the longest first. The tests run in three
# on two cores: about a third of their time is spent waiting (on far ends, clusters and
# a browser starting, on timeouts they provoke), which a third process fills (9:17 to
# 9:52 for the whole command over six runs here, against 11:39 to 14:09 in two). The
# notebooks run in two, one a core: their figures are measured, and a third process
# would be a load of its own.
if [ "$SUITE" = examples ]; then
    # The upgrade notebook builds its environment from those wheels (pip reads these).
    # The tests' conftest is the notebooks' too (-p): this run's own temp folder and
    # process mark, and its dealing of the work (a notebook's cells in one kernel).
    # fresh_review: after each notebook's cells, tests/notebook_review.py's review of the
    # outputs this run printed (nbval masks the verdicts and numbers it compares).
    PYTHONPATH=tests PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/.wheelhouse" \
        .venv/bin/python -m pytest examples -p conftest -p fresh_review \
        --nbval-lax --nbval-current-env --nbval-sanitize-with examples/sanitize.cfg \
        --nbval-cell-timeout=600 --durations=25 -n 2 "$@"
    exit
fi
LINTED="zmqbench_magic tests bench docs/conf.py docs/_ext"
.venv/bin/ruff check $LINTED
.venv/bin/ruff format --check $LINTED
# Types: the package, with the settings in pyproject.toml.
.venv/bin/mypy
PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/.wheelhouse" .venv/bin/python -m pytest tests \
    --durations=25 -n 3 "$@"

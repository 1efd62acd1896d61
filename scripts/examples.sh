#!/usr/bin/env bash
# Regenerates every example notebook and the README's figure on this machine, with
# the project as committed: each notebook run top to bottom in a fresh kernel of the
# project's environment, one after the other, and saved with its outputs (each opens
# with a stamp naming the commit, the date and the machine). Run it after a change to
# what the magics print, measure or draw, on a machine with nothing else running, then
# commit the notebooks. Arguments: the notebooks to run (default: all of them).
set -euo pipefail
EXTRAS=test source "$(dirname "$0")/setup.sh"
if [ -n "$(git status --porcelain -- zmqbench_magic 2> /dev/null)" ]; then
    echo "examples.sh: zmqbench_magic/ has uncommitted changes: the stamps will say so" >&2
fi
# The upgrade notebook builds its candidate environment from these wheels, offline.
NUMPY=$(.venv/bin/python -c "import numpy; print(numpy.__version__)")
.venv/bin/python -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --no-deps -d .wheelhouse pyzmq==26.4.0 "numpy==$NUMPY"
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/.wheelhouse"
NOTEBOOKS=("$@")
[ ${#NOTEBOOKS[@]} -gt 0 ] || NOTEBOOKS=(examples/*.ipynb)
for notebook in "${NOTEBOOKS[@]}"; do
    echo "examples.sh: running $notebook"
    # Run from its own folder, as a user opening it would.
    .venv/bin/jupyter nbconvert --to notebook --execute --inplace \
        --ExecutePreprocessor.timeout=1200 --ExecutePreprocessor.kernel_name=python3 \
        "$notebook"
done
if [ $# -eq 0 ]; then
    (cd bench && ../.venv/bin/python readme_figure.py)
fi
# What the test command checks of the saved outputs: a stamp, no machine path, no
# summary line over 100 columns, no old format.
.venv/bin/python -m pytest -q -p no:cacheprovider tests/test_examples.py -m "not slow"

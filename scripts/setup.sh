# Sourced by the other scripts: a virtual environment in .venv with the package
# (editable) and, when EXTRAS is set, its optional dependencies.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".${EXTRAS:+[$EXTRAS]}"
# The package's bytecode, written once here: where PYTHONDONTWRITEBYTECODE is set (as
# in many containers), every process a test or a benchmark starts (a far end, an
# engine, a kernel) would otherwise compile each module it imports again.
.venv/bin/python -m compileall -q zmqbench_magic

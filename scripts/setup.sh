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

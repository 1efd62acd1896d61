"""How the project starts its helper processes (the far ends and the reapers)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def module_command(module: str, *args: str) -> list[str]:
    """``python -m MODULE ARGS`` with this very interpreter."""
    return [sys.executable, "-m", module, *args]


def child_env() -> dict[str, str]:
    """This environment, with this package importable wherever the parent found it
    (a kernel may have it on a ``sys.path`` entry the child would not have)."""
    package_root = str(Path(__file__).resolve().parent.parent)
    paths = filter(None, [package_root, os.environ.get("PYTHONPATH")])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}

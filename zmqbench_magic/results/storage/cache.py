"""Where this environment keeps what the project measures or builds for it: the noise
floor's store, the native loops, the interpreters of ``zmqbench env``, and a copy of
this package for another interpreter.

Standard library only: a far end and a driver process import it (for the native
loops), and each starts a fresh interpreter that has no use for pandas.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The project's cache folder: ``$XDG_CACHE_HOME/zmqbench_magic`` (default
    ``~/.cache/zmqbench_magic``)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(root) / "zmqbench_magic"

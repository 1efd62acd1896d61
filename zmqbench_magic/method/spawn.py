"""How the project starts its helper processes (the far ends, the driver processes and
the reapers), and where it keeps what it builds for them."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..results.storage.cache import cache_dir

# This package's folder. Not resolved through links: a driver process of another
# environment imports it through a link (:func:`importable_alone`), and what it starts
# must find it the same way.
PACKAGE = Path(os.path.abspath(__file__)).parent.parent


def module_command(module: str, *args: str, python: str | None = None) -> list[str]:
    """``python -m MODULE ARGS`` with this very interpreter (or ``python``)."""
    return [python or sys.executable, "-m", module, *args]


@contextlib.contextmanager
def interrupt_after() -> Iterator[None]:
    """Hold a Ctrl-C (a kernel's Interrupt) that lands while a helper process starts,
    and raise it once the block is done: ``subprocess.Popen`` interrupted midway can
    leave the child running, untracked, or its ``/dev/null`` open, where the caller's
    clean-up cannot reach them. Only the main thread receives signals; elsewhere, and
    where Ctrl-C is ignored or handled by C, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        yield
        return
    held: list[tuple[int, Any]] = []
    signal.signal(signal.SIGINT, lambda number, frame: held.append((number, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            previous(*held[0])


def child_env() -> dict[str, str]:
    """This environment, with this package importable wherever the parent found it
    (a kernel may have it on a ``sys.path`` entry the child would not have)."""
    paths = filter(None, [str(PACKAGE.parent), os.environ.get("PYTHONPATH")])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def foreign_env() -> dict[str, str]:
    """This environment for another interpreter: this package importable, and nothing
    else of this one's (its pyzmq would shadow the other environment's own)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return {**env, "PYTHONPATH": str(importable_alone())}


def importable_alone() -> Path:
    """A folder holding only a link to this package (made once, in the cache)."""
    key = hashlib.sha256(str(PACKAGE).encode()).hexdigest()[:16]
    folder = cache_dir() / "import" / key
    link = folder / PACKAGE.name
    if not link.is_symlink():
        folder.mkdir(parents=True, exist_ok=True)
        staged = folder / f".{PACKAGE.name}-{os.getpid()}"
        staged.unlink(missing_ok=True)
        staged.symlink_to(PACKAGE, target_is_directory=True)
        # Renamed into place: two kernels making it at once both see a whole link.
        os.replace(staged, link)
    return folder

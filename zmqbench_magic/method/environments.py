"""Environments to compare side by side (``zmqbench env``): cached virtual
environments built from requirement strings, each with numpy beside them (a driver
process needs it), whose interpreters ``--python`` takes.

``build("pyzmq==25.1.2")`` makes (once) ``.../envs/py3.11/pyzmq==25.1.2/bin/python``;
the folder's name is the arm's name in a result's ``python`` column. Nothing is
fetched but by pip, with the pip options given (``--no-index --find-links DIR`` for a
machine with no package index).
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..results.storage.cache import cache_dir

_BUILT = ".zmqbench-complete"  # written last: a folder without it is rebuilt
_NAME = re.compile(r"[^A-Za-z0-9._=+<>!~,-]")
_TIMEOUT_S = 600.0


def build(
    requirements: str, *, base_python: str = sys.executable, pip_args: Sequence[str] = ()
) -> Path:
    """The interpreter of a cached environment with ``requirements`` (pip's syntax,
    several separated by spaces) and numpy; built on first use.

    Raises ``ValueError`` saying what failed (pip's last lines)."""
    wanted = shlex.split(requirements)
    if not wanted:
        msg = "an environment needs at least one requirement, e.g. pyzmq==26.4.0"
        raise ValueError(msg)
    version = _run([base_python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
    folder = cache_dir() / "envs" / f"py{version.strip()}" / _NAME.sub("_", "+".join(wanted))
    python = folder / "bin" / "python"
    if (folder / _BUILT).exists():
        return python
    # Two kernels (or a notebook and a test) asking for the same environment at once:
    # the second waits for the first's build rather than removing it half-made.
    with _held(folder.with_name(folder.name + ".lock")):
        if not (folder / _BUILT).exists():
            _make(folder, python, wanted, base_python, pip_args)
    return python


@contextlib.contextmanager
def _held(lock: Path) -> Iterator[None]:
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def _make(
    folder: Path, python: Path, wanted: list[str], base_python: str, pip_args: Sequence[str]
) -> None:
    shutil.rmtree(folder, ignore_errors=True)  # a build that did not finish
    try:
        _run([base_python, "-m", "venv", str(folder)])
        extra = [] if any(w.split("=")[0].startswith("numpy") for w in wanted) else ["numpy"]
        _run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                *pip_args,
                *wanted,
                *extra,
            ]
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    (folder / _BUILT).write_text(" ".join(wanted) + "\n")


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        msg = f"{shlex.join(command)} failed: {exc}"
        raise ValueError(msg) from None
    if done.returncode != 0:
        said = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        msg = f"{shlex.join(command)} failed (exit code {done.returncode}):\n{said}"
        raise ValueError(msg)
    return done.stdout


__all__ = ["build"]

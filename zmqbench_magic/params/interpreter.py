"""``--python`` values: each names an interpreter, with its own pyzmq and libzmq, that
runs both ends of one arm of a run; ``kernel`` is the kernel's own."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from collections.abc import Iterable

import zmq

KERNEL = "kernel"
ALLOWED = (
    f"{KERNEL} (this process's own interpreter), or [NAME=]PATH of a Python with pyzmq "
    "and numpy (a bare name is looked up on PATH)"
)


def parse_interpreter(text: object) -> str:
    """``[NAME=]PATH`` checked, its path made absolute: ``old=/envs/a/bin/python``.

    The path is not resolved through symbolic links: a virtual environment's
    ``python`` is one, and only through it does the interpreter find that
    environment's packages."""
    spec = str(text).strip()
    name, path = split(spec)
    if name and ("/" in name or not name.strip()):
        msg = f"{spec!r}: an arm's name has no '/' (NAME=PATH)"
        raise ValueError(msg)
    if path == KERNEL:
        return spec
    found = path if "/" in path else shutil.which(path)
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        msg = f"{path!r} is not an executable file"
        raise ValueError(msg)
    absolute = os.path.abspath(os.path.expanduser(found))
    return f"{name}={absolute}" if name else absolute


def check_arms(name: str, specs: list[str]) -> None:
    """One interpreter given twice would be one arm: say how to make it two."""
    twice = next((spec for spec in specs if specs.count(spec) > 1), None)
    if twice is not None:
        msg = (
            f"{name}: {twice} given twice; to measure an interpreter against itself "
            f"(an A/A run), name the arms: a={twice} b={twice}"
        )
        raise ValueError(msg)


def split(spec: str) -> tuple[str, str]:
    """``(NAME, PATH)`` of a value; NAME is "" when none was given."""
    name, equals, path = spec.partition("=")
    if equals and "/" not in name:
        return name, path
    return "", spec


def executable(spec: str) -> str:
    """The interpreter a value runs: its path, or this process's for ``kernel``."""
    path = split(spec)[1]
    return sys.executable if path == KERNEL else path


def arm_names(specs: Iterable[str]) -> dict[str, str]:
    """What each value is called in the ``python`` column: its NAME; else ``kernel``;
    else its environment's folder (``.../pyzmq==26.4.0/bin/python`` reads
    ``pyzmq==26.4.0``); where two arms would share a name, their paths."""
    specs = list(specs)
    names = {spec: _short_name(spec) for spec in specs}
    taken = list(names.values())
    return {
        spec: name if taken.count(name) == 1 or split(spec)[0] else split(spec)[1]
        for spec, name in names.items()
    }


def _short_name(spec: str) -> str:
    name, path = split(spec)
    if name or path == KERNEL:
        return name or KERNEL
    folder, _ = os.path.split(path)
    environment, bin_folder = os.path.split(folder)
    if bin_folder == "bin" and os.path.basename(environment):
        return os.path.basename(environment)
    return path


__all__ = [
    "ALLOWED",
    "KERNEL",
    "arm_names",
    "check_arms",
    "executable",
    "parse_interpreter",
    "split",
]


def this_interpreter() -> dict[str, str]:
    """This interpreter and the pyzmq and libzmq it loaded: what an arm of a run ran
    (a driver process reports it from its own interpreter; a saved run's metadata
    keeps the kernel's)."""
    return {
        "executable": sys.executable,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "pyzmq": zmq.pyzmq_version(),
        "libzmq": zmq.zmq_version(),
    }


def interpreter_words(facts: dict[str, str]) -> str:
    """``CPython 3.11.2, pyzmq 26.4.0, libzmq 4.3.5``."""
    return (
        f"{facts['implementation']} {facts['python']}, pyzmq {facts['pyzmq']}, "
        f"libzmq {facts['libzmq']}"
    )

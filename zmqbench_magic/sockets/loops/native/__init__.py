"""The native loop (``--loop native``): the hot loops of :mod:`..pair` in C
(``loops.c``), built once with the machine's C compiler against the very libzmq that
pyzmq loaded, and called through ctypes, which releases the GIL for the call.

Python and native figures then differ only by the language of the loop: same
library, same sockets (pyzmq makes them, with the same options), same timing rules.
Where no compiler exists, :func:`library` raises a ``ValueError`` saying what to
install; everything else works without it.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import zmq

from ....params.socket_point import LOOP
from ....results.storage.cache import cache_dir

SOURCE = Path(__file__).with_name("loops.c")
_INT64, _DOUBLE_P = ctypes.c_int64, ctypes.POINTER(ctypes.c_double)
_INT64_P = ctypes.POINTER(_INT64)
# A receiver's tally as zb_sink_numbered reads and writes it (numbering.Tally).
_TALLY: list[Any] = [
    ctypes.POINTER(ctypes.c_int32),
    _INT64,
    _INT64,
    ctypes.POINTER(ctypes.c_ubyte),
    _INT64_P,
    _INT64_P,
]


def libzmq_path() -> Path:
    """The libzmq file this process loaded for pyzmq (its wheel bundles its own)."""
    zmq.Context  # noqa: B018 - the backend, and so libzmq, is loaded by now
    with open("/proc/self/maps") as maps:
        for line in maps:
            match = re.search(r"(/\S*libzmq[^/\s]*\.so[^/\s]*)$", line.strip())
            if match:
                return Path(match.group(1))
    msg = "could not find the libzmq pyzmq loaded (the native loop needs Linux /proc)"
    raise ValueError(msg)


@cache
def library() -> ctypes.CDLL:
    """The compiled loops, built on first use (a few seconds) and cached per source,
    libzmq and interpreter; a ``ValueError`` naming what to install if that fails."""
    libzmq = libzmq_path()
    key = hashlib.sha256(
        SOURCE.read_bytes() + str(libzmq).encode() + sys.version.encode()
    ).hexdigest()[:16]
    target = cache_dir() / f"loops-{key}.so"
    if not target.exists():
        _build(libzmq, target)
    lib = ctypes.CDLL(str(target))
    _declare(lib)
    return lib


def _build(libzmq: Path, target: Path) -> None:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        msg = (
            f"{LOOP.option} native needs a C compiler to build its loops once, and none was "
            "found (cc, gcc or $CC): install one (Debian/Ubuntu: apt-get install gcc; "
            f"conda: conda install c-compiler), or use {LOOP.option} python"
        )
        raise ValueError(msg)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built beside the target and renamed into place: two kernels building at once
    # never load a half-written file.
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        built = Path(work) / target.name
        command = [
            compiler,
            "-O2",
            "-shared",
            "-fPIC",
            "-o",
            str(built),
            str(SOURCE),
            str(libzmq),
            f"-Wl,-rpath,{libzmq.parent}",
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            msg = f"building the native loop failed ({' '.join(command)}):\n{done.stderr}"
            raise ValueError(msg)
        os.replace(built, target)


def _declare(lib: ctypes.CDLL) -> None:
    p, size = ctypes.c_void_p, ctypes.c_size_t
    lib.zb_send.argtypes = [p, ctypes.c_char_p, size, _INT64, ctypes.c_int]
    lib.zb_sink.argtypes = [p, _INT64, _DOUBLE_P, _DOUBLE_P]
    lib.zb_ping.argtypes = [
        p,
        ctypes.c_char_p,
        size,
        _INT64,
        _INT64,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_int),
        _DOUBLE_P,
    ]
    lib.zb_send_numbered.argtypes = [p, ctypes.c_char_p, size, _INT64, _INT64, _INT64]
    lib.zb_sink_numbered.argtypes = [p, _INT64, _DOUBLE_P, _DOUBLE_P, *_TALLY]
    lib.zb_echo.argtypes = [p, _INT64, ctypes.c_int]
    lib.zb_route.argtypes = [p, _INT64, ctypes.c_int]
    int64_p, double = ctypes.POINTER(_INT64), ctypes.c_double
    lib.zb_pace.argtypes = [
        p,
        ctypes.c_char_p,
        size,
        _INT64,
        ctypes.c_int,
        double,
        double,
        _INT64,
        double,
        int64_p,
        int64_p,
        _DOUBLE_P,
        _DOUBLE_P,
    ]
    lib.zb_send_paced.argtypes = [
        p,
        ctypes.c_char_p,
        size,
        _INT64,
        _INT64,
        ctypes.c_int,
        double,
        double,
        _DOUBLE_P,
        _DOUBLE_P,
    ]
    loops = ("zb_send", "zb_send_paced", "zb_sink", "zb_ping", "zb_echo", "zb_route", "zb_pace")
    for name in (*loops, "zb_send_numbered", "zb_sink_numbered"):
        getattr(lib, name).restype = _INT64
    lib.zb_errno.restype = ctypes.c_int


def check(lib: ctypes.CDLL, result: int) -> int:
    """``result`` of a loop, or the libzmq error it ended on, raised as pyzmq would."""
    if result < 0:
        number = lib.zb_errno()
        raise zmq.ZMQError(number, os.strerror(number) if number != errno.EAGAIN else None)
    return result


def zero_copy(copy: bool, message: bytes, sock: zmq.Socket) -> int:
    """Whether the C loop sends ``message`` on ``sock`` without a copy, by pyzmq's own
    rule, so the two loops send alike: ``copy=False`` copies a message shorter than
    the socket's ``copy_threshold`` (pyzmq's ``COPY_THRESHOLD``, 64 kB) all the same,
    since tracking its buffer costs more than copying it; longer ones go as they are."""
    return int(not copy and len(message) >= sock.copy_threshold)

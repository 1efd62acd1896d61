"""This process's heap: the bytes its objects hold now, and handing freed memory back.

A flood's memory per task cannot be read from resident memory alone after an earlier
flood. Freed memory mostly stays resident (Python's small-object arenas free a whole
arena only when every object in it is gone, and glibc keeps what its arenas cannot
trim), and the next flood reuses it before the process grows. So a flood that follows
one as large shows its peak rising by a fraction of what it holds
(``bench/bench_flood_soak.py`` prints both a task, flood size by flood size).

:func:`held_bytes` counts the bytes allocated and not yet freed, whatever pages they
sit on: glibc's bytes in use (``mallinfo2``: the heap's chunks and its own mmaps; what
libzmq, NumPy and Python's objects over 512 bytes take) plus the bytes of the blocks
Python's small-object allocator has handed out, which live in arenas it maps itself,
outside glibc's count. Python has no call that returns that figure: it is read from
the line ``# bytes in allocated blocks`` that ``sys._debugmallocstats()`` writes to
file descriptor 2, caught in a temporary file. Where either part is unknown (no glibc,
another allocator, a Python that prints otherwise) the figure is NaN, never a part.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import math
import os
import sys
import tempfile
from typing import Any

_ALLOCATED_LINE = "# bytes in allocated blocks"


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (2.33 on), every field a ``size_t``."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


@functools.cache
def libc() -> Any:
    """The C library, looked up once (its ``mallinfo2`` made to return its struct);
    None where there is none."""
    name = ctypes.util.find_library("c")
    try:
        found = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    if found is not None and hasattr(found, "mallinfo2"):
        found.mallinfo2.restype = _MallInfo2
    return found


def malloc_in_use() -> float:
    """Bytes glibc's allocator has handed out and not had back (NaN without
    ``mallinfo2``, whose older ``mallinfo`` wraps at 2 GiB)."""
    mallinfo2 = getattr(libc(), "mallinfo2", None)
    if mallinfo2 is None:
        return math.nan
    info = mallinfo2()
    return float(info.uordblks + info.hblkhd)


def python_small_objects() -> float:
    """Bytes in the blocks Python's small-object allocator has handed out (NaN where
    its statistics have no such line)."""
    if not hasattr(sys, "_debugmallocstats"):
        return math.nan
    with tempfile.TemporaryFile() as caught:
        # C-level writes of other threads in these few milliseconds land here too,
        # and are lost with the file: the statistics are written in one short burst.
        saved = os.dup(2)
        try:
            os.dup2(caught.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        caught.seek(0)
        text = caught.read().decode(errors="replace")
    for line in text.splitlines():
        if line.startswith(_ALLOCATED_LINE):
            with contextlib.suppress(ValueError):
                return float(line.partition("=")[2].replace(",", "").strip())
    return math.nan


def held_bytes() -> float:
    """The bytes this process's objects hold now: glibc's in use plus Python's small
    objects'; NaN where either is unknown."""
    return malloc_in_use() + python_small_objects()


def give_back_freed() -> None:
    """Hand the freed heap back to the system. A flood's futures are made on the
    client's IO thread and freed on this one, and glibc keeps such freed memory in
    its per-thread arenas: resident memory would creep up over many floods although
    nothing is alive (tracemalloc sees no growth)."""
    trim = getattr(libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


__all__ = ["give_back_freed", "held_bytes", "libc", "malloc_in_use", "python_small_objects"]

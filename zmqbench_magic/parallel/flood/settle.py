"""A cluster left idle after a sample: what is still outstanding aborted and waited
out, the client's per-task records purged, and the freed heap handed back, so the
next sample (or run) does not queue behind this one's backlog and memory levels off
over long sweeps."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import time
from typing import Any

from ..clusters.handle import ClusterHandle
from ..clusters.watch import LOOK_S


def settle(handle: ClusterHandle, timeout: float) -> None:
    """Abort what is outstanding, wait it out (until nothing more is answered for
    ``timeout``) and empty the client's caches; ``handle.settled`` says if it worked."""
    client = handle.client
    handle.settled = False
    with contextlib.suppress(Exception):
        if client.outstanding:
            # Engines answer an aborted task at once when they reach it, queued or not.
            client.abort(list(client.outstanding), block=False)
            _drain(client, timeout)
        client.purge_local_results("all")  # raises while anything is outstanding
        client.history.clear()
        handle.settled = True
    _give_back_freed_memory()


def _give_back_freed_memory() -> None:
    """Hand the freed heap back to the system. A flood's futures are made on the
    client's IO thread and freed on this one, and glibc keeps such freed memory in
    its per-thread arenas: resident memory would creep up over many floods although
    nothing is alive (tracemalloc sees no growth)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, looked up once; None where there is no glibc."""
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def _drain(client: Any, timeout: float) -> None:
    """Wait until nothing is outstanding, or nothing more is answered for ``timeout``."""
    left, moved = len(client.outstanding), time.monotonic()
    while left and time.monotonic() - moved < timeout:
        client.wait(timeout=LOOK_S)
        if len(client.outstanding) != left:
            left, moved = len(client.outstanding), time.monotonic()

"""How many messages fit between the two ends: ZeroMQ's queues plus the kernel's.

A sender does not block until every queue on the way is full: its own high-water
mark, the receiver's, and (tcp, ipc) the kernel's socket buffers. Until then the
"send-only" rate times how fast the queues fill, not how fast messages move.
"""

from __future__ import annotations

import functools
import math

# Read where the kernel says; these are Linux's usual maxima when it does not.
_TCP_BUFFERS = ("/proc/sys/net/ipv4/tcp_wmem", "/proc/sys/net/ipv4/tcp_rmem")
_TCP_FALLBACK = 4 * 1024 * 1024 + 6 * 1024 * 1024
_UNIX_BUFFERS = ("/proc/sys/net/core/wmem_default", "/proc/sys/net/core/rmem_default")
_UNIX_FALLBACK = 2 * 212992


@functools.cache
def kernel_buffer_bytes(transport: str) -> int:
    """The most bytes the kernel may buffer between two sockets of ``transport``."""
    if transport == "inproc":
        return 0
    paths, fallback = (
        (_TCP_BUFFERS, _TCP_FALLBACK) if transport == "tcp" else (_UNIX_BUFFERS, _UNIX_FALLBACK)
    )
    try:
        # tcp_wmem and tcp_rmem are "min default max": the buffers may grow to max.
        return sum(int(open(p).read().split()[-1]) for p in paths)
    except (OSError, ValueError, IndexError):
        return fallback


def queue_capacity(transport: str, hwm: int, size: int) -> float:
    """Messages of ``size`` bytes that can be on their way at once; NaN where ZeroMQ's
    queues have no limit (``hwm`` 0): no number bounds them."""
    if hwm == 0:
        return math.nan
    return 2 * hwm + kernel_buffer_bytes(transport) // max(size, 1)


__all__ = ["kernel_buffer_bytes", "queue_capacity"]

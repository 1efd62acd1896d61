"""The far end's memory: set so large message buffers are reused, not returned to
the OS and faulted in again."""

from __future__ import annotations

from ..method.heap import libc

# The far end is an instrument: it should cost what a warmed, long-running process
# (or libzmq's C echo, which allocates nothing) costs. A fresh process does not: glibc
# may hand each large message buffer back to the OS as it is freed and fault it in
# again for the next, 2 x 256 page faults per 1 MB round trip (measured: 480 minor
# faults and 1.5 ms of CPU per round trip, a 1 MB round trip of 2.0 ms instead of
# 0.5 ms). Fixed thresholds keep buffers up to 32 MiB in the heap and the heap from
# being trimmed, so they are reused. The driver, in the user's own process, is left as
# it is: that is the Python under test.
STEADY_MALLOC = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 1024 * 1024),
    "MALLOC_TRIM_THRESHOLD_": str(1024 * 1024 * 1024),
}

# glibc's mallopt parameters (malloc.h) for the same two settings.
_MALLOPT = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_MMAP_THRESHOLD_": -3}


def steady_malloc() -> None:
    """:data:`STEADY_MALLOC` applied to this process at run time (glibc's ``mallopt``),
    for a far end no driver started (``zmqbench peer``)."""
    mallopt = getattr(libc(), "mallopt", None)  # None: not glibc, its allocator is its own
    if mallopt is not None:
        for setting, number in _MALLOPT.items():
            mallopt(number, int(STEADY_MALLOC[setting]))

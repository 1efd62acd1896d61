"""How a burst of sends is timed, by the driver's loops and by a pattern's senders
alike: the first sends a sender's own queue holds, and all of them, with one clock read
between. Only the standard library: a sender far end imports it before it is armed,
without numpy (whose import starts threads of its own).
"""

from __future__ import annotations

import time
from collections.abc import Callable


def send_only_count(count: int, hwm: int) -> int:
    """How many of a sample's first sends the send-only rate times: as many as the
    sender's own ZeroMQ queue holds (its high-water mark; all of them with no limit,
    0), which none can find full, since every sample starts on drained queues. So the
    rate is what a send call costs the application (pyzmq's ``perf`` "sends", whose
    queues never fill), never how fast the receiver drains, at any count.

    >>> send_only_count(100_000, 1000), send_only_count(300, 1000), send_only_count(50, 0)
    (1000, 300, 50)
    """
    return count if hwm == 0 else min(count, hwm)


def two_phases(
    send_from: Callable[[int, int], None], burst: int, count: int
) -> tuple[float, float]:
    """The seconds the first ``burst`` sends took, and all ``count`` of them: one clock
    read between two runs of the same loop, nothing added inside it."""
    start = time.perf_counter()
    send_from(0, burst)
    burst_end = time.perf_counter()
    if burst < count:
        send_from(burst, count)
    return burst_end - start, time.perf_counter() - start


__all__ = ["send_only_count", "two_phases"]

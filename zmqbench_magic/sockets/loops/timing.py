"""How a burst of sends is timed, by the driver's loops and by a pattern's senders
alike: the first sends a sender's own queue holds, and all of them, with one clock read
between; and a sender's rate over its own time. Only the standard library: a sender far
end imports it before it is armed, without numpy (whose import starts threads of its
own).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a name for the reports read here, not a module to load
    from ..protocol import SendFigures


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


def send_rate(sent: SendFigures) -> float:
    """A sender's sends a second over its own time. A paced sender (one that reports
    its blocked time) times from its first message's intended send to its last send:
    ``sent - 1`` intervals of its pace, as a receiver's first to last receive spans
    ``received - 1`` deliveries. An unpaced one times from its first send's start to
    its last one's end, every send's own time in it.

    >>> send_rate({"sent": 201, "elapsed": 0.1, "blocked_s": 0.0})  # 200 intervals
    2000.0
    >>> send_rate({"sent": 200, "elapsed": 0.1})
    2000.0
    """
    spans = sent["sent"] - 1 if "blocked_s" in sent else sent["sent"]
    return spans / sent["elapsed"] if sent["elapsed"] > 0 else math.nan


__all__ = ["send_only_count", "send_rate", "two_phases"]

"""Calibration, the pyperf way: grow a sample's count until it lasts ``min_time``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

from ..params.sockets import COUNT

CALIBRATION_START = 10
_CALIBRATION_MAX_GROWTH = 100
# The most messages a sample may hold: what --count allows.
MAX_COUNT = int(cast(float, COUNT.high))


def calibrate(
    sample: Callable[[int], tuple[Any, float]], min_time: float, start: int = CALIBRATION_START
) -> int:
    """The smallest count (found by growing it) whose sample lasts ``min_time``.

    ``sample(count)`` returns ``(anything, seconds it took)``. Each step grows the count
    by the ratio still missing, with 20% to spare, at least doubling and at most
    ``_CALIBRATION_MAX_GROWTH``-fold so one slow first sample (a cold cache, a
    connection still being made) cannot blow the estimate up.

    >>> calibrate(lambda n: (None, n * 1e-3), 0.2)
    241
    """
    count = start
    while True:
        _, elapsed = sample(count)
        if elapsed >= min_time or count >= MAX_COUNT:
            return count
        wanted = math.ceil(count * 1.2 * min_time / max(elapsed, 1e-9))
        count = min(max(wanted, 2 * count), _CALIBRATION_MAX_GROWTH * count, MAX_COUNT)

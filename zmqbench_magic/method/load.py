"""How busy the rest of the machine was during a sample (``other_load``).

A figure taken while something else ran on the same cores is not the machine's
figure. Each sample records the share of the machine's CPU time that went to
processes *outside* the benchmark while it ran: all CPU time the kernel counted
(``/proc/stat``) minus this process's (every thread: the driver and libzmq's I/O
threads) and the benchmark's own helper processes' (the far end, a cluster's
controller and engines), over wall time times CPUs. Linux only; elsewhere NaN.

The kernel counts CPU time in ticks of 10 ms, so over a 0.1 s sample on 2 cores the
share is known to about ±0.05 (and not at all below 10 ticks of capacity: NaN then);
the summary flags samples above 0.25.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterable

from ..params.columns import Row
from .control import gc_off

_TICK_S = 1 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
BUSY_THRESHOLD = 0.25
# A share is reported only over this many ticks of CPU capacity (wall x CPUs): +-10%.
_MIN_TICKS = 10


def _machine_busy_s() -> float | None:
    """CPU seconds the whole machine spent not idle since boot."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal (guest time is inside user).
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) * _TICK_S


def _process_cpu_s(pid: int) -> float:
    """CPU seconds of one process (all its threads), 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # The command name may hold spaces: the fields start after its ')'.
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * _TICK_S


class CpuMeter:
    """``start()`` then ``stop()`` -> the other processes' share of the machine."""

    def __init__(self, helper_pids: Callable[[], Iterable[int]] = tuple) -> None:
        self._helper_pids = helper_pids
        self._start: tuple[float, float, float] | None = None

    def _ours_s(self) -> float:
        own = os.times()
        return own.user + own.system + sum(_process_cpu_s(p) for p in self._helper_pids())

    def start(self) -> None:
        busy = _machine_busy_s()
        self._start = None if busy is None else (time.perf_counter(), busy, self._ours_s())

    def stop(self) -> float:
        """The share (0 to 1), NaN where it cannot be known."""
        busy = _machine_busy_s()
        if self._start is None or busy is None:
            return math.nan
        began, busy_before, ours_before = self._start
        capacity = (time.perf_counter() - began) * (os.cpu_count() or 1)
        if capacity < _MIN_TICKS * _TICK_S:
            return math.nan  # too short for the kernel's 10 ms ticks to tell
        others = (busy - busy_before) - (self._ours_s() - ours_before)
        return round(min(1.0, max(0.0, others / capacity)), 3)


def with_other_load(
    sample: Callable[[], Row],
    helper_pids: Iterable[int] = (),
    collect: bool = False,
) -> Row:
    """One sample's row, taken with the garbage collector off (``collect``: left as it
    is, for a sample whose garbage is part of what it measures), and the rest of the
    machine's load while it ran (``other_load``; ``helper_pids`` are the sample's own
    helper processes: engines, workers)."""
    meter = CpuMeter(lambda: helper_pids)
    meter.start()
    with contextlib.nullcontext() if collect else gc_off():
        row = sample()
    return {**row, "other_load": meter.stop()}


def busy_warnings(points: Iterable[tuple[str, Iterable[Row]]]) -> list[str]:
    """One warning for a run: how many samples, at how many of its points (given as
    ``(words, rows)``), were taken while other processes used more than
    ``BUSY_THRESHOLD`` of the machine (NaN, not known, never counts), and the worst."""
    points = list(points)
    busy = [
        (where, row)
        for where, rows in points
        for row in rows
        if (row.get("other_load") or 0) > BUSY_THRESHOLD
    ]
    if not busy:
        return []
    where, worst = max(busy, key=lambda item: item[1]["other_load"])
    at = len({w for w, _ in busy})
    return [
        f"{len(busy)} sample(s) at {at} of {len(points)} point(s) were taken while other "
        f"processes used more than {BUSY_THRESHOLD:.0%} of the machine (up to "
        f"{worst['other_load']:.0%}, {where} sample {worst['sample']}); the column "
        "other_load says which"
    ]


__all__ = ["BUSY_THRESHOLD", "CpuMeter", "busy_warnings"]

"""The queue-memory rules message sizes obey: how many messages a queue holds, what a
point may hold at once, sizes to be read with care, and how a flood's memory grows
with its tasks."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from .declare import Param
from .units import KiB, MiB, spell_size

# ZeroMQ queues up to a high-water mark of messages on each side; with the default
# of 1000 and 64 MB messages that would be 64 GB. The benchmarks bound each queue
# to this many bytes instead (1000 messages up to 128 kB, as libzmq's default).
QUEUE_BYTES = 128 * MiB


HWM = Param(
    "hwm",
    "auto",
    "the high-water mark of every data socket, messages (k and M are powers of 1000): "
    "how many a queue holds before a sender waits (a PUB drops); 0 is ZeroMQ's own "
    "no limit (a sender never waits, a PUB never drops, and the queues grow in memory); "
    "auto sets it by the message size, 1000 up to 128 kB (libzmq's default) and fewer "
    "above",
    "high-water mark",
    "messages",
    unit="msgs",
    low=0,
    high=10_000_000,
    sweep=True,
    off="auto",
    off_means="set by the message size",
    zero_means="0 (no limit)",
    phrase="high-water mark {}",
)


def high_water_mark(size: int, asked: int | str = "auto") -> int:
    """Messages queued per side for messages of ``size`` bytes: ``asked`` (``--hwm``;
    0: no limit), or by the size."""
    if asked == "auto":
        return max(2, min(1000, QUEUE_BYTES // max(size, 1)))
    return int(asked)


def memory_needed(size: int, hwm: int | str = "auto") -> int:
    """Bytes a point of this size may hold at once: both queues, the payload and the
    received copy, and the bytes in flight in kernel buffers. Queues without a limit
    (``hwm`` 0) are counted as the size's own: what they grow to is the run's to say."""
    queued = high_water_mark(size, hwm) or high_water_mark(size)
    return size * (2 * queued + 4)


def check_memory(size: int, hwm: int | str = "auto") -> None:
    """Refuse a message size whose queues and copies would not fit in memory."""
    free = available_memory()
    needed = memory_needed(size, hwm)
    if free is not None and needed > free:
        asked = hwm != "auto" and hwm != 0
        queues = f" at {HWM.option} {HWM.label(hwm)}" if asked else ""
        msg = (
            f"size {spell_size(size)} needs about {needed // MiB} MiB of memory for its "
            f"queues{queues} and copies, but only {free // MiB} MiB is available; choose "
            f"a smaller size{' or high-water mark' if asked else ''}"
        )
        raise ValueError(msg)


def unlimited_queues_caution(hwms: tuple[int | str, ...]) -> list[str]:
    """A warning, before the run, for queues ZeroMQ will not bound (``--hwm 0``)."""
    if 0 not in hwms:
        return []
    return [
        "hwm 0: ZeroMQ's queues have no limit, so a sender never waits and a PUB never "
        "drops; what the receivers have not taken stays in memory (driver_growth_mb, "
        "far_growth_mb)"
    ]


# From this size on, a sample holds only a handful of messages: at loopback's few
# GB/s a 0.1 s sample is a message or two, and calibration's first try alone (10
# messages) moves gigabytes.
FEW_MESSAGES_SIZE = 256 * MiB


def few_messages_caution(sizes: tuple[int, ...], what: str) -> list[str]:
    """A warning, before the run, for sizes whose samples hold only a few messages."""
    large = [s for s in sizes if s >= FEW_MESSAGES_SIZE]
    if not large:
        return []
    spelled = ", ".join(spell_size(s) for s in large)
    return [
        f"size {spelled}: a sample holds only a few {what} of this size, so it takes "
        "seconds and gigabytes of memory, and its figure rests on a handful of them; "
        f"sizes up to {spell_size(FEW_MESSAGES_SIZE // 4)} give many a sample"
    ]


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo, or None where that is not known."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * KiB
    except OSError:
        return None
    return None


# A flood's memory forecast (``r.advice()``): past this many times the largest flood
# measured, a single figure would say more than the floods do, and a range is given.
FAR_BEYOND = 4
# The steepest growth a forecast's range reaches: a rise as the square of the tasks
# (each task's cost growing as the flood) is past anything a flood's records need.
STEEPEST = 2.0


@dataclass(frozen=True)
class GrowthFit:
    """How far a process's peak rose with a flood's tasks, over floods of several sizes:
    ``rise = c tasks ** exponent``, least squares in log space over one point a size
    (its median rise). Memory per task grows with the flood (the client's result and
    metadata records, the hub's task records, the buffers of replies not yet read), so
    a flood of 512 tasks, taken linearly, understates one of 100,000.

    The curve is drawn through the largest flood's own rise, where the figure is
    surest. ``exponent`` is NaN where fewer than two sizes rose at all; ``steepest``
    is the upper end of its 95% interval (Student's t over the sizes, never below the
    fit), NaN with fewer than three sizes. Either is drawn at most :data:`STEEPEST`
    (:meth:`drawn`)."""

    smallest: int
    largest: int
    per_task: float  # the largest flood's rise per task
    exponent: float = math.nan
    steepest: float = math.nan

    def linear(self, tasks: float) -> float:
        """The rise of a flood of ``tasks``, each costing what one cost at the largest."""
        return self.per_task * tasks

    @staticmethod
    def drawn(exponent: float) -> float:
        """The exponent a curve is drawn with: at most :data:`STEEPEST` (noise over a
        few small floods can fit anything)."""
        return min(exponent, STEEPEST)

    @property
    def curve(self) -> float:
        """The exponent the fitted figure is drawn with."""
        return self.drawn(self.exponent)

    def fitted(self, tasks: float, exponent: float | None = None) -> float:
        """The rise of a flood of ``tasks`` on the fitted curve (linear without one), or
        on the curve of another ``exponent`` (drawn at most :data:`STEEPEST`) through
        the largest flood."""
        power = self.curve if exponent is None else self.drawn(exponent)
        if math.isnan(power):
            return self.linear(tasks)
        return self.per_task * self.largest * (tasks / self.largest) ** power

    def beyond(self, tasks: float) -> bool:
        """Whether ``tasks`` lies past what the measured floods can tell."""
        return tasks > FAR_BEYOND * self.largest

    def forecast(self, tasks: float) -> tuple[float, float]:
        """The rise of a flood of ``tasks``: the fitted figure twice within reach of the
        measured floods; beyond, the lowest and the highest of the linear figure, the
        fitted one and the steepest curve's (a fit without an exponent gives no upper
        bound: infinity)."""
        if not self.beyond(tasks):
            return self.fitted(tasks), self.fitted(tasks)
        if math.isnan(self.exponent):
            return self.linear(tasks), math.inf
        figures = [self.linear(tasks), self.fitted(tasks)]
        if not math.isnan(self.steepest):
            figures.append(self.fitted(tasks, self.steepest))
        return min(figures), max(figures)


def fit_growth(rises: Mapping[int, float]) -> GrowthFit:
    """The fit of ``{tasks: median rise}`` (any unit; one entry a flood size measured).
    Sizes whose peak did not rise cannot be taken in log space and are left out of the
    exponent; the largest size anchors the curve whatever it rose by."""
    if not rises:
        raise ValueError("no flood to fit")
    largest = max(rises)
    grew = sorted((n, rise) for n, rise in rises.items() if rise > 0 and n > 0)
    fit = GrowthFit(min(rises), largest, rises[largest] / largest)
    if len(grew) < 2:
        return fit
    xs = [math.log(n) for n, _ in grew]
    ys = [math.log(rise) for _, rise in grew]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
    fit = dataclasses.replace(fit, exponent=slope)
    if len(grew) < 3:
        return fit
    from scipy import stats  # imported when first needed, as the statistics' own

    freedom = len(grew) - 2
    residual = sum((y - mean_y - slope * (x - mean_x)) ** 2 for x, y in zip(xs, ys, strict=True))
    error = math.sqrt(residual / freedom / spread)
    upper = slope + float(stats.t.ppf(0.975, freedom)) * error
    return dataclasses.replace(fit, steepest=max(upper, slope))

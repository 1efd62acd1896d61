"""The queue-memory rules message sizes obey: how many messages a queue holds, what a
point may hold at once, and sizes to be read with care."""

from __future__ import annotations

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

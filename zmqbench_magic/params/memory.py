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
    0,
    "the high-water mark of every data socket, messages: how many a queue holds before "
    "a sender waits (a PUB drops); 0 sets it by the message size, 1000 up to 128 kB "
    "(libzmq's default) and fewer above",
    "high-water mark",
    "int",
    low=1,
    high=10_000_000,
    off=0,
    off_means="set by the message size",
)


def high_water_mark(size: int, asked: int = 0) -> int:
    """Messages queued per side for messages of ``size`` bytes: ``asked`` (``--hwm``),
    or by the size."""
    return asked or max(2, min(1000, QUEUE_BYTES // max(size, 1)))


def memory_needed(size: int, hwm: int = 0) -> int:
    """Bytes a point of this size may hold at once: both queues, the payload and the
    received copy, and the bytes in flight in kernel buffers."""
    return size * (2 * high_water_mark(size, hwm) + 4)


def check_memory(size: int, hwm: int = 0) -> None:
    """Refuse a message size whose queues and copies would not fit in memory."""
    free = available_memory()
    needed = memory_needed(size, hwm)
    if free is not None and needed > free:
        queues = f" at {HWM.option} {hwm:,}" if hwm else ""
        msg = (
            f"size {spell_size(size)} needs about {needed // MiB} MiB of memory for its "
            f"queues{queues} and copies, but only {free // MiB} MiB is available; choose "
            f"a smaller size{' or high-water mark' if hwm else ''}"
        )
        raise ValueError(msg)


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

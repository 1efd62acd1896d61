"""The queue-memory rules message sizes obey: how many messages a queue holds, what a
point may hold at once, and sizes to be read with care."""

from __future__ import annotations

from .units import KiB, MiB, spell_size

# ZeroMQ queues up to a high-water mark of messages on each side; with the default
# of 1000 and 64 MB messages that would be 64 GB. The benchmarks bound each queue
# to this many bytes instead (1000 messages up to 128 kB, as libzmq's default).
QUEUE_BYTES = 128 * MiB


def high_water_mark(size: int) -> int:
    """Messages queued per side for messages of ``size`` bytes."""
    return max(2, min(1000, QUEUE_BYTES // max(size, 1)))


def memory_needed(size: int) -> int:
    """Bytes a point of this size may hold at once: both queues, the payload and the
    received copy, and the bytes in flight in kernel buffers."""
    return size * (2 * high_water_mark(size) + 4)


def check_memory(size: int) -> None:
    """Refuse a message size whose queues and copies would not fit in memory."""
    free = available_memory()
    if free is not None and memory_needed(size) > free:
        msg = (
            f"size {spell_size(size)} needs about {memory_needed(size) // MiB} MiB "
            f"of memory for its queues and copies, but only {free // MiB} MiB is "
            "available; choose a smaller size"
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

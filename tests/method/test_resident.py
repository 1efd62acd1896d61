"""The memory meter against processes whose memory the test sets: a known rise, a
peak held only for a moment, roles that share a process tree, and roles that cannot be
measured."""

from __future__ import annotations

import math
import mmap
import subprocess
import sys
from collections.abc import Iterator

import pytest

from zmqbench_magic.method.resident import MemoryMeter, this_process

MB = 10**6
# Maps what it is told (in MB) fresh from the system, touches every page, unmaps it at
# once, says done. Fresh: a bytearray may reuse heap that malloc freed but kept
# resident, and then no peak moves (as in a test worker that has run for a while).
_ALLOCATOR = """
import mmap, sys
for line in sys.stdin:
    held = mmap.mmap(-1, int(line) * 10**6)
    held[:: mmap.PAGESIZE] = b"x" * len(held[:: mmap.PAGESIZE])
    held.close()
    print("done", flush=True)
"""
# Starts an allocator as its child, prints the child's pid, then waits for stdin's end.
_PARENT = f"""
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", {_ALLOCATOR!r}], stdin=subprocess.PIPE)
print(child.pid, flush=True)
sys.stdin.read()
child.kill()
child.wait()
"""


@pytest.fixture
def allocator() -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        [sys.executable, "-c", _ALLOCATOR], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as process:
        yield process
        process.kill()


def _allocate(process: subprocess.Popen[str], mb: int) -> None:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(f"{mb}\n")
    process.stdin.flush()
    assert process.stdout.readline() == "done\n"


def test_a_peak_held_for_a_moment_is_the_rise_it_caused(allocator):
    """200 MB allocated and freed between start and stop: the peak is at least 200 MB
    above where it stood, though nothing is held when the meter looks."""
    meter = MemoryMeter({"engines": lambda: [allocator.pid]})
    meter.start()
    _allocate(allocator, 200)
    row = meter.stop(tasks=100)
    # 200 MB over 100 tasks: 2,000 kB a task, and the interpreter's own few pages.
    assert 2000 <= row["engines_kb_per_task"] < 2000 + 200, row
    assert row["engines_peak_mb"] >= 200, row


def test_each_sample_starts_from_the_memory_it_finds(allocator):
    """The second sample allocates nothing: the first one's peak is not carried over."""
    meter = MemoryMeter({"engines": lambda: [allocator.pid]})
    meter.start()
    _allocate(allocator, 100)
    first = meter.stop(tasks=1)
    meter.start()
    second = meter.stop(tasks=1)
    assert first["engines_kb_per_task"] >= 100_000
    assert 0 <= second["engines_kb_per_task"] < 1_000, second
    assert second["engines_peak_mb"] < first["engines_peak_mb"] - 90


def test_this_process_is_measured_too():
    meter = MemoryMeter({"client": this_process})
    meter.start()
    held = mmap.mmap(-1, 50 * MB)  # fresh pages, as in the allocator
    held[:: mmap.PAGESIZE] = b"x" * len(held[:: mmap.PAGESIZE])
    row = meter.stop(tasks=10)
    held.close()
    assert row["client_kb_per_task"] >= 5_000, row  # 50 MB / 10 tasks


def test_a_descendant_another_role_names_counts_once_in_that_role():
    """As Ray's raylet is its workers' parent: the parent's role gets the parent alone,
    the child's role the child, and only the child's allocation shows in it."""
    with subprocess.Popen(
        [sys.executable, "-c", _PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as parent:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        meter = MemoryMeter(
            {"controller": lambda: [parent.pid], "engines": lambda: [child]},
            trees=frozenset({"controller", "engines"}),
        )
        processes = meter._processes()
        assert processes == {"controller": [parent.pid], "engines": [child]}
        # Its descendants count where no other role names them.
        alone = MemoryMeter({"controller": lambda: [parent.pid]}, trees=frozenset({"controller"}))
        assert alone._processes() == {"controller": sorted([parent.pid, child])}
        parent.communicate("")


def test_a_role_it_cannot_measure_is_nan_not_another_figure(allocator):
    """No process (Dask's scheduler inside the client), or one that exits in the sample
    (its peak went with it): NaN."""
    meter = MemoryMeter({"controller": list, "engines": lambda: [allocator.pid]})
    meter.start()
    allocator.kill()
    allocator.wait()
    row = meter.stop(tasks=10)
    assert all(math.isnan(v) for v in row.values()), row
    assert set(row) == {
        "controller_peak_mb",
        "controller_kb_per_task",
        "engines_peak_mb",
        "engines_kb_per_task",
    }

"""The heap's figure on known answers: what a known allocation adds to it, and that it
sees memory reused after a free, where resident memory does not."""

from __future__ import annotations

import gc
import json
import math
import subprocess
import sys

import pytest

from zmqbench_magic.method.heap import held_bytes, malloc_in_use, python_small_objects

pytestmark = pytest.mark.skipif(
    math.isnan(held_bytes()), reason="this allocator does not tell its bytes in use"
)

SMALL = 200_000
# A 100-byte bytes object is 133 bytes, in the small-object allocator's 144-byte class;
# the list holding them is one block of glibc's (8 bytes a pointer).
SMALL_BYTES = SMALL * 144 + SMALL * 8


def _small_objects() -> list[bytes]:
    # Each its own object (bytes(...) of a literal would be shared).
    return [i.to_bytes(4, "little") * 25 for i in range(SMALL)]


def test_a_large_buffer_counts_in_glibcs_bytes_in_use():
    before = malloc_in_use()
    buffer = bytearray(50_000_000)
    grew = malloc_in_use() - before
    assert 50_000_000 <= grew < 50_000_000 + 100_000
    del buffer


def test_small_objects_count_in_pythons_allocator():
    assert sys.getsizeof(b"x" * 100) == 133
    gc.collect()
    before = held_bytes(), python_small_objects()
    kept = _small_objects()
    held, small = held_bytes() - before[0], python_small_objects() - before[1]
    assert SMALL * 144 <= small < SMALL * 144 * 1.02
    assert SMALL_BYTES <= held < SMALL_BYTES * 1.02
    del kept


_REUSE = """
import gc, json
from zmqbench_magic.method.heap import held_bytes

def resident():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmRSS:"))

gc.collect()
rises, survivors = [], None
for _ in range(2):
    before = resident(), held_bytes()
    objects = [i.to_bytes(4, "little") * 25 for i in range(%d)]
    rises.append((resident() - before[0], held_bytes() - before[1]))
    survivors = objects[::50]
    del objects
    gc.collect()
print(json.dumps(rises))
"""


def test_memory_freed_and_reused_counts_in_the_heap_not_in_resident_memory():
    """A flood after one as large: the second allocation lands in what the first freed
    (one object in 50 kept, so no arena empties and goes back), resident memory
    barely moves, and the heap grows by the same bytes both times. In a fresh process:
    one that ran other work first may have the first allocation's memory free already."""
    done = subprocess.run(
        [sys.executable, "-c", _REUSE % SMALL], capture_output=True, text=True, check=True
    )
    (first_resident, first_held), (second_resident, second_held) = json.loads(done.stdout)
    assert first_held == pytest.approx(SMALL_BYTES, rel=0.02)
    assert second_held == pytest.approx(SMALL_BYTES, rel=0.02)
    assert first_resident > SMALL_BYTES / 2
    assert second_resident < second_held / 2, (first_resident, second_resident)

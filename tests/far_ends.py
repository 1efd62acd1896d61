"""Killing a run's far end on purpose, at a moment a test chooses."""

from __future__ import annotations

import threading
from collections.abc import Callable

import psutil
from conftest import far_end_child, wait_until

# A sample long enough to be killed in (20M messages; its timeout is a stall's, so a
# death noticed only by the timeout would read as a timeout, not as the death).
LONG = {"size": 100, "count": 20_000_000, "repeat": 1, "warmup": 0, "timeout": 10}


def find_far_end() -> psutil.Process:
    return wait_until(far_end_child, 10, "a far end", every=0.005)


def kill_later(
    find: Callable[[], psutil.Process], when: Callable[[psutil.Process], bool]
) -> threading.Thread:
    """Kill what ``find`` returns once ``when`` says it is time."""

    def kill() -> None:
        victim = find()
        wait_until(lambda: when(victim), 60, "the moment to kill", every=0.005)
        victim.kill()

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread

"""The tasks the tests run, in a module that imports nothing: a process-pool worker
unpickles them by reference without loading ipyparallel."""

from __future__ import annotations

from typing import Any


def echo(x: Any) -> Any:
    """The task of the flood and echo tests: hand the argument back."""
    return x


def sleep_each(durations: list[float]) -> None:
    """A process pool's map chunk, as ``ProcessPoolExecutor.map`` sends it: sleep for
    each duration in turn."""
    import time

    for duration in durations:
        time.sleep(duration)

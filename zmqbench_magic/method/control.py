"""How a caller steers a run in progress (a stop flag polled between samples, a
progress callback after each sample), and the garbage collector kept out of timed
loops. Both benchmark cores use the same."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from typing import Protocol

# Called as ``progress(points_done, points_total)`` after each point.
Progress = Callable[[int, int], None]


class StopFlag(Protocol):
    """What a run polls between samples to learn it should end (a threading.Event)."""

    def is_set(self) -> bool: ...


class Stopped(Exception):
    """Raised between samples once a run's stop flag is set; the run catches it."""


def check_stop(stop: StopFlag | None) -> None:
    """End the run here (by raising :class:`Stopped`) if it was asked to stop."""
    if stop is not None and stop.is_set():
        raise Stopped


@contextlib.contextmanager
def gc_off() -> Iterator[None]:
    """No garbage collection inside the block, as ``timeit`` times: a collection that
    lands in one sample and not another is noise, not the thing measured."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

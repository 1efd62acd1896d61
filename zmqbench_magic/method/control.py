"""How a caller steers a run in progress: a stop flag polled between samples, and a
progress callback after each point. Both benchmark cores take the same two."""

from __future__ import annotations

from collections.abc import Callable
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


def stopped_note(done: int, total: int) -> str:
    return f"stopped on request after {done} of {total} points; the rest were not measured"

"""How a caller steers a run in progress (a stop flag polled between samples, a
progress callback after each sample), and the garbage collector kept out of timed
loops. Both benchmark cores use the same."""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

# Called as ``progress(points_done, points_total)`` after each point. A progress
# display may also have ``doing(text)``: what a long sample is doing meanwhile.
Progress = Callable[[int, int], None]


def say_doing(progress: Progress | None, text: str) -> None:
    """Tell a progress display what a long sample is doing now ("12,000 of 20,000
    tasks submitted"); a display that shows only counts of samples ignores it."""
    doing = getattr(progress, "doing", None)
    if doing is not None:
        doing(text)


def say_phase(progress: Progress | None, text: str) -> None:
    """Tell a progress display which phase the run is in before its samples ("starting
    the cluster: 1 of 2 engines registered", "warming up"): shown instead of the
    sample counts, until the next sample ends."""
    phase = getattr(progress, "phase", None)
    if phase is not None:
        phase(text)
    else:
        say_doing(progress, text)


class StopFlag(Protocol):
    """What a run polls between samples to learn it should end (a threading.Event)."""

    def is_set(self) -> bool: ...


@dataclass
class Deadline:
    """A stop flag that also sets itself once the run has gone on ``seconds``
    (``--max-time``); ``reason`` says which ended the run."""

    stop: StopFlag | None
    seconds: float  # 0: no deadline
    started: float = field(default_factory=time.monotonic)
    reason: str = "stopped on request"

    def is_set(self) -> bool:
        if self.stop is not None and self.stop.is_set():
            return True
        if self.seconds and time.monotonic() - self.started >= self.seconds:
            self.reason = f"max-time ({self.seconds:g} s) reached"
            return True
        return False


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

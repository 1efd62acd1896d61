"""A progress line for runs from a magic or a shell: samples done, time left.

It appears once a run has gone on for a second (short runs print nothing extra),
rewrites itself in place with a carriage return, which both terminals and Jupyter
front ends honour, and is erased when the run ends.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

_DELAY_S = 1.0
_EVERY_S = 0.25
_BAR = 24


class ProgressLine:
    """``progress(done, total)`` as the cores call it; ``close()`` when the run ends."""

    def __init__(self, stream: TextIO | None = None, bar: bool = False) -> None:
        self.stream = stream or sys.stdout
        self.bar = bar
        self.started = time.monotonic()
        self._shown_at = 0.0
        self._width = 0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        elapsed = now - self.started
        if elapsed < _DELAY_S or (now - self._shown_at < _EVERY_S and done < total):
            return
        self._shown_at = now
        left = elapsed / done * (total - done) if done else float("nan")
        text = f"{done} of {total} samples, about {_seconds(left)} left"
        if self.bar:
            filled = round(_BAR * done / max(total, 1))
            text = f"[{'#' * filled}{'.' * (_BAR - filled)}] {text}"
        self._write(text)

    def _write(self, text: str) -> None:
        padding = " " * max(0, self._width - len(text))
        self.stream.write(f"\r{text}{padding}")
        self.stream.flush()
        self._width = len(text)

    def close(self) -> None:
        """Erase the line, so what the run prints next starts clean."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def _seconds(value: float) -> str:
    if value != value:  # NaN: nothing done yet
        return "? s"
    if value < 60:
        return f"{value:.0f} s"
    return f"{value / 60:.1f} min"


__all__ = ["ProgressLine"]

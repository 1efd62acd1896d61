"""A progress line for runs from a magic or a shell: samples done, time left.

It appears once a run has gone on for a second (short runs print nothing extra),
rewrites itself in place, and is erased when the run ends. In a terminal (and the
CLI, on stderr) it is a line rewritten with a carriage return; in a Jupyter kernel it
is one display updated in place, so a saved notebook keeps one empty output rather
than every state the line went through.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol, TextIO

_DELAY_S = 1.0
_EVERY_S = 0.25
_BAR = 24


class LineWriter(Protocol):
    def show(self, text: str) -> None: ...
    def clear(self) -> None: ...


class StreamLine:
    """The line on a text stream, rewritten with ``\\r``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self._width = 0

    def show(self, text: str) -> None:
        padding = " " * max(0, self._width - len(text))
        self.stream.write(f"\r{text}{padding}")
        self.stream.flush()
        self._width = len(text)

    def clear(self) -> None:
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


class DisplayLine:
    """The line as one Jupyter display, updated in place (needs IPython)."""

    def __init__(self) -> None:
        self._handle: Any = None

    def show(self, text: str) -> None:
        from IPython.display import display

        bundle = {"text/plain": text}
        if self._handle is None:
            self._handle = display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)

    def clear(self) -> None:
        if self._handle is not None:
            self._handle.update({"text/plain": ""}, raw=True)
            self._handle = None


class ProgressLine:
    """``progress(done, total)`` as the cores call it; ``close()`` when the run ends."""

    def __init__(self, writer: LineWriter | None = None, bar: bool = False) -> None:
        self.writer = writer or StreamLine()
        self.bar = bar
        self.started = time.monotonic()
        self._shown_at = 0.0

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
        self.writer.show(text)

    def close(self) -> None:
        """Erase the line, so what the run prints next starts clean."""
        self.writer.clear()


def _seconds(value: float) -> str:
    if value != value:  # NaN: nothing done yet
        return "? s"
    if value < 60:
        return f"{value:.0f} s"
    return f"{value / 60:.1f} min"


__all__ = ["DisplayLine", "ProgressLine", "StreamLine"]

"""A progress line for runs from a magic or a shell: samples done, time left, and
what a long sample is doing (a flood's tasks submitted and answered).

It appears once a run has gone on for a second (short runs print nothing extra),
rewrites itself in place, and is erased when the run ends. In a terminal (and the
CLI, on stderr) it is a line rewritten with a carriage return; in a Jupyter kernel it
is one display updated in place, so a saved notebook keeps one empty output rather
than every state the line went through. Where the stream is not a terminal (a log
file, a pipe, CI), carriage returns would pile up on one line, so it prints a plain
line once the run has gone on for a second, then at each quarter of it (and every
30 s of a long one) instead.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, Protocol, TextIO

_DELAY_S = 1.0
_EVERY_S = 0.25
_LOG_EVERY_S = 30.0
_BAR = 24


class LineWriter(Protocol):
    in_place: bool

    def show(self, text: str) -> None: ...
    def clear(self) -> None: ...


def stream_writer(stream: TextIO) -> LineWriter:
    """A line rewritten in place on a terminal; plain lines anywhere else."""
    isatty = getattr(stream, "isatty", None)
    return StreamLine(stream) if isatty is not None and isatty() else PlainLines(stream)


class StreamLine:
    """The line on a text stream, rewritten with ``\\r``."""

    in_place = True

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


class PlainLines:
    """A log's progress: each state it is shown is a line of its own."""

    in_place = False

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def show(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def clear(self) -> None:
        """Lines already printed stay: a log keeps its history."""


class DisplayLine:
    """The line as one Jupyter display, updated in place (needs IPython)."""

    in_place = True

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
    """``progress(done, total)`` as the cores call it, ``doing(text)`` within a long
    sample; ``close()`` when the run ends."""

    def __init__(
        self, writer: LineWriter | None = None, bar: bool = False, unit: str = "samples"
    ) -> None:
        self.writer = writer or stream_writer(sys.stdout)
        self.bar, self.unit = bar, unit
        self.started = time.monotonic()
        self._shown_at = 0.0
        self._quarter = 0
        self._done, self._total = 0, 0
        self._doing = self._phase = ""

    def __call__(self, done: int, total: int) -> None:
        # A new sample begins: what the last one did, and any phase before it, are over.
        self._done, self._total, self._doing, self._phase = done, total, "", ""
        now = time.monotonic()
        if now - self.started >= _DELAY_S and self._due(now, done, total):
            self._show(now)

    def doing(self, text: str) -> None:
        """What the sample in progress is doing, after the counts ("this sample: 12,000
        of 20,000 submitted"); a log gets it with its next line."""
        self._doing, self._phase = text, ""
        self._say_now()

    def phase(self, text: str) -> None:
        """The phase before the samples ("starting the cluster: 1 of 2 engines
        registered", "warm-up sample 1 of 1"), shown instead of the sample counts."""
        self._phase = text
        self._say_now()

    def _say_now(self) -> None:
        now = time.monotonic()
        if now - self.started < _DELAY_S:
            return
        # In place: at most four times a second; a log: every 30 s of a long sample.
        if now - self._shown_at >= (_EVERY_S if self.writer.in_place else _LOG_EVERY_S):
            self._show(now)

    def _show(self, now: float) -> None:
        self._shown_at = now
        done, total = self._done, self._total
        text = f"{done} of {total} {self.unit}"
        if done:  # before the first sample, nothing says how long one takes
            text += f", about {_seconds((now - self.started) / done * (total - done))} left"
        if self._phase:
            text = self._phase
        if self.bar:
            filled = round(_BAR * done / max(total, 1))
            text = f"[{'#' * filled}{'.' * (_BAR - filled)}] {text}"
        if self._doing:
            text += f"; {self._doing}"
        self.writer.show(text)

    def _due(self, now: float, done: int, total: int) -> bool:
        if self.writer.in_place:
            return now - self._shown_at >= _EVERY_S or done >= total
        # Plain lines: one at each quarter the run passes, and at least every 30 s
        # in a long run; none at its end (the result follows at once).
        quarter = 4 * done // max(total, 1)
        if done >= total or (quarter <= self._quarter and now - self._shown_at < _LOG_EVERY_S):
            return False
        self._quarter = quarter
        return True

    def close(self) -> None:
        """Erase the line, so what the run prints next starts clean."""
        self.writer.clear()


class ProgressTo:
    """A run's progress handed to ``show(done, total, doing, phase)``: a panel's bar and
    label (``doing`` is what a long sample is doing, or empty; ``phase``, the phase
    before the samples, shown instead of their counts, or empty)."""

    def __init__(self, show: Callable[[int, int, str, str], None]) -> None:
        self.show = show
        self._done, self._total = 0, 0

    def __call__(self, done: int, total: int) -> None:
        self._done, self._total = done, total
        self.show(done, total, "", "")

    def doing(self, text: str) -> None:
        self.show(self._done, self._total, text, "")

    def phase(self, text: str) -> None:
        self.show(self._done, self._total, "", text)


def _seconds(value: float) -> str:
    if value != value:  # NaN: nothing done yet
        return "? s"
    if value < 60:
        return f"{value:.0f} s"
    return f"{value / 60:.1f} min"


__all__ = [
    "DisplayLine",
    "PlainLines",
    "ProgressLine",
    "ProgressTo",
    "StreamLine",
    "stream_writer",
]

"""Helper processes bound to a pipe: ssh sessions that live exactly as long as their
stdin (a far end over SSH, an SSH tunnel). Closing stdin ends them, and so does the
kernel's death, since the kernel holds the pipe's other end; what they say is read
all the time, since a pipe left full would stall them mid-run.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import selectors
import subprocess
import threading
import time
from typing import IO

STOP_GRACE_S = 5.0


class Tail:
    """Reads a stream to its end in a thread, keeping its last lines."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=20)
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[bytes] | None) -> None:
        with contextlib.suppress(OSError, ValueError):  # closed under it: the end
            for line in stream or ():
                self.lines.append(line.decode(errors="replace").rstrip())

    def last(self) -> str:
        """Its last non-empty line, once it has ended (or after a grace period)."""
        self.thread.join(STOP_GRACE_S)
        return next((line for line in reversed(self.lines) if line), "")


def read_until(
    process: subprocess.Popen[bytes], pattern: re.Pattern[bytes], timeout: float
) -> re.Match[bytes] | None:
    """Read ``process``'s stdout until ``pattern`` shows; None if stdout ends first.
    Raises ``TimeoutError`` after ``timeout`` seconds."""
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while not (found := pattern.search(seen)):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if selector.select(left):
                chunk = os.read(process.stdout.fileno(), 4096)
                if not chunk:
                    return None
                seen += chunk
    return found


def stop(process: subprocess.Popen[bytes]) -> None:
    """Close its stdin (it ends at once), then wait for it to go, or kill it."""
    with contextlib.suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    try:
        process.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(STOP_GRACE_S)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()

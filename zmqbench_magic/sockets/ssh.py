"""A far end started over SSH for one run (``--remote ssh://[user@]host[:port]``).

The driver runs ``PYTHON -m zmqbench_magic.cli peer --over-ssh`` there with
``ssh -o BatchMode=yes`` (``$ZMQBENCH_SSH_COMMAND`` replaces ``ssh``, as Git's
``GIT_SSH_COMMAND`` does, for an identity or a config file), hands it a fresh secret
on stdin (never on a command line), reads the one line saying where it listens, and
runs against it as against any standing far end. Closing stdin stops it: at the end
of the run, on an error or interrupt, and when the kernel dies (its SSH session dies
with it, and the far end ends the moment its stdin closes).
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import selectors
import shlex
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import IO

from ..params.remote import ssh_command
from .errors import PeerError
from .secret import Keys

_STOP_GRACE_S = 5.0
_LISTENING = re.compile(rb"listening on (tcp://\S+)")


@contextlib.contextmanager
def far_end_over_ssh(url: str, python: str, timeout: float) -> Iterator[tuple[str, Keys]]:
    """A far end on the host of ``ssh://[user@]host[:port]``: its tcp URL and the secret
    it was handed, for as long as the block lasts."""
    keys = Keys.fresh()
    process = subprocess.Popen(
        far_end_command(url, python), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    # What it says is read all the time: a pipe left full would stall the far end
    # (it logs each run) in the middle of a long sweep.
    said = _Tail(process.stderr)
    try:
        assert process.stdin is not None
        process.stdin.write(keys.to_json().encode() + b"\n")
        process.stdin.flush()
        url_there = _where_it_listens(process, url, python, timeout, said)
        _Tail(process.stdout)
        yield url_there, keys
    finally:
        _stop(process)


def far_end_command(url: str, python: str) -> list[str]:
    """``ssh -o BatchMode=yes [-p PORT] [user@]host PYTHON -m zmqbench_magic.cli peer
    --over-ssh``, with ``$ZMQBENCH_SSH_COMMAND`` for ``ssh``."""
    target = url.removeprefix("ssh://")
    port = []
    if re.search(r":\d+$", target):
        target, number = target.rsplit(":", 1)
        port = ["-p", number]
    ssh = ssh_command()
    remote = f"{shlex.quote(python)} -m zmqbench_magic.cli peer --over-ssh"
    return [*ssh, "-o", "BatchMode=yes", *port, target, remote]


class _Tail:
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
        self.thread.join(_STOP_GRACE_S)
        return next((line for line in reversed(self.lines) if line), "")


def _where_it_listens(process: subprocess.Popen[bytes], url: str, python: str,
                      timeout: float, said: _Tail) -> str:  # fmt: skip
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while not (found := _LISTENING.search(seen)):
            left = deadline - time.monotonic()
            if left <= 0:
                msg = f"the far end over {url} did not say where it listens within {timeout:g} s"
                raise TimeoutError(msg)
            if selector.select(left):
                chunk = os.read(process.stdout.fileno(), 4096)
                if not chunk:
                    raise PeerError(_failed(process, url, python, said))
                seen += chunk
    return found.group(1).decode()


def _failed(process: subprocess.Popen[bytes], url: str, python: str, said: _Tail) -> str:
    """Why the far end did not start, from ssh's and the far end's own words."""
    process.wait(_STOP_GRACE_S)
    last = said.last() or f"exit status {process.returncode}"
    hint = ""
    if "No module named" in last or process.returncode == 127:
        hint = f"; is zmqbench_magic installed for {python} there? (--remote-python)"
    return f"could not start a far end over {url}: {last}{hint}"


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Close its stdin (the far end ends at once), then wait for ssh to go."""
    with contextlib.suppress(OSError):
        assert process.stdin is not None
        process.stdin.close()
    try:
        process.wait(_STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(_STOP_GRACE_S)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()

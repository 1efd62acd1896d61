"""Whether an existing Dask scheduler or Ray cluster answers at the address a user gave,
within ``--connect-timeout``, before its own library is asked to connect.

Both libraries wait far longer than a person does on an address where nothing answers:
distributed retries a refused connection for its whole timeout and never returns from a
listener that accepts and says nothing; Ray's C++ client waits about 40 s and writes
its own warnings straight to the terminal. So the project first asks, in a bounded way
and in the engine's own protocol, whether anything there answers, and says in one line
what it tried, what did not answer and what to check.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass


class NoAnswer(RuntimeError):
    """An existing engine's address did not answer in time: nothing was connected, and
    nothing was started or left behind."""


@dataclass(frozen=True)
class Target:
    """What is being reached, in a user's words, and where."""

    what: str  # "a Dask scheduler"
    address: str  # as the user gave it
    host: str
    port: int
    check: str  # what to check, after "check that"

    def fail(self, happened: str) -> NoAnswer:
        return NoAnswer(
            f"could not connect to {self.what} at {self.address}: {happened}; check that "
            f"{self.check}, and that this host can reach it (--connect-timeout waits longer)"
        )


class Deadline:
    """The time left of one connect timeout, shared by its steps."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.ends = time.monotonic() + timeout

    def left(self) -> float:
        return max(self.ends - time.monotonic(), 0.001)


def open_tcp(target: Target, deadline: Deadline) -> socket.socket:
    """A TCP connection to the target, or :class:`NoAnswer` saying why there is none."""
    try:
        return socket.create_connection((target.host, target.port), timeout=deadline.left())
    except ConnectionRefusedError:
        raise target.fail("nothing listens there (connection refused)") from None
    except TimeoutError:
        happened = f"the connection was not accepted within {deadline.timeout:g} s"
        raise target.fail(happened) from None
    except socket.gaierror as exc:
        raise target.fail(f"the host name {target.host!r} did not resolve ({exc})") from None
    except OSError as exc:
        raise target.fail(f"the connection failed ({exc.strerror or exc})") from None


# RFC 9113, 3.4: a client's connection preface, then its (empty) SETTINGS frame.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(3) + b"\x04\x00" + bytes(4)
_SETTINGS = 0x4


def answers_grpc(target: Target, deadline: Deadline) -> None:
    """The target speaks HTTP/2, as every gRPC server does (Ray's GCS is one): its first
    frame, sent on connection, is a SETTINGS frame (RFC 9113, 3.4). Else NoAnswer."""
    with open_tcp(target, deadline) as connection:
        try:
            connection.settimeout(deadline.left())
            connection.sendall(_HTTP2_PREFACE)
            header = _read(connection, 9, deadline)
        except TimeoutError:
            header = b""
        except OSError as exc:
            raise target.fail(f"the connection was dropped ({exc.strerror or exc})") from None
    if len(header) < 9:
        happened = (
            f"the connection was accepted but nothing answered within {deadline.timeout:g} s"
            if not header
            else "the connection was closed before it answered"
        )
        raise target.fail(happened)
    if header[3] != _SETTINGS:
        raise target.fail(f"it answered, but not as {target.what} (not gRPC)")


def _read(connection: socket.socket, count: int, deadline: Deadline) -> bytes:
    got = b""
    while len(got) < count:
        connection.settimeout(deadline.left())
        chunk = connection.recv(count - len(got))
        if not chunk:
            break
        got += chunk
    return got


__all__ = ["Deadline", "NoAnswer", "Target", "answers_grpc", "open_tcp"]

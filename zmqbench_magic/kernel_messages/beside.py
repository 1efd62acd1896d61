"""A subscriber beside the Jupyter server: it hears the kernel's IOPub straight from
the kernel, as the server does, and notes when each status came. Where the same status
then reaches the client over the server's websocket, the difference is the server's
hop back, a stage of its own (``server_hop_us``): what the server and its websocket
add, which no header stamps.

It reads on a thread of its own, blocked in ZeroMQ's poll between messages (the GIL
released), and notes only the statuses' arrival times; it decodes a message's header
alone, never its content (a stream's megabytes stay bytes).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

import zmq

# How long the client waits for the subscriber to have noted a status the websocket
# brought: the subscriber hears it first, as the server's own subscription does, but
# its thread may not have run yet.
_NOTED_WITHIN_S = 0.05


class IOPubBeside:
    """The kernel's IOPub, heard beside the server; ``arrival`` of a request's status."""

    def __init__(self, connection_file: str) -> None:
        info = _connection(connection_file)
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.SUB)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.SUBSCRIBE, b"")
        self._socket.connect(f"{info['transport']}://{info['ip']}:{info['iopub_port']}")
        self._arrivals: dict[tuple[str, str], float] = {}
        self._noted = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True, name="iopub-beside")
        self._thread.start()

    def _listen(self) -> None:
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(100):
                continue
            arrived = time.time()
            frames = self._socket.recv_multipart()
            noted = _status_of(frames)
            if noted is not None:
                with self._noted:
                    self._arrivals[noted] = arrived
                    self._noted.notify_all()

    def arrival(self, msg_id: str | None, message: dict[str, Any]) -> float | None:
        """When the subscriber heard this status of request ``msg_id``; None where it
        did not within a moment (a status from before it subscribed)."""
        if not msg_id:
            return None
        key = (msg_id, str(message["content"].get("execution_state")))
        with self._noted:
            self._noted.wait_for(lambda: key in self._arrivals, timeout=_NOTED_WITHIN_S)
            return self._arrivals.pop(key, None)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        with contextlib.suppress(Exception):
            self._socket.close()
        self._context.term()


def _connection(path: str) -> dict[str, Any]:
    """A kernel's connection file, which the server writes as it starts the kernel."""
    deadline = time.monotonic() + 10
    while True:
        try:
            with open(path) as file:
                return dict(json.load(file))
        except (OSError, ValueError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _status_of(frames: list[bytes]) -> tuple[str, str] | None:
    """(the parent request's id, its state) of a status message, from its frames
    (identities, the delimiter, the signature, then header, parent header, metadata,
    content); None for any other message."""
    try:
        start = frames.index(b"<IDS|MSG>") + 2
    except ValueError:
        return None
    header = json.loads(frames[start])
    if header.get("msg_type") != "status":
        return None
    parent = json.loads(frames[start + 1]).get("msg_id")
    state = json.loads(frames[start + 3]).get("execution_state")
    return (str(parent), str(state)) if parent else None


__all__ = ["IOPubBeside"]

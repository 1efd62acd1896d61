"""The kernel's one socket of a pattern, the hub, where it is more than a plain socket:
a ROUTER that addresses each message to its receivers in turn (``--pattern router``),
and the hub's wait until every far end has joined it (each subscription reaching a
publisher, each DEALER's greeting a ROUTER).

A ROUTER sends a message to the peer its first frame names. Where that peer's queue
is full, ZeroMQ drops the message, as a PUB does; with ``ZMQ_ROUTER_MANDATORY``
(``--mandatory true``) the send waits for room instead (``EAGAIN`` without waiting),
and a peer that has gone is an error (``EHOSTUNREACH``) rather than a silent drop.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import zmq

from ..far_ends.peer import PeerError

_POLL_MS = 100


class RoutedSocket(zmq.Socket):
    """A ROUTER whose sends go to its receivers in turn: message ``i`` to
    ``routes[i % len(routes)]`` (each a DEALER's routing id, learnt from its greeting).
    A send that could not go (``zmq.Again``) is retried to the same receiver."""

    routes: list[bytes]
    names: dict[bytes, str]  # a receiver's routing id: its name, for an error
    turn: int

    # pyzmq declares one overload per copy mode; this forwards whichever it is given.
    def send(  # type: ignore[override]
        self, data: Any, flags: int = 0, copy: bool = True, track: bool = False, **kw: Any
    ) -> Any:
        self._address(flags)
        return super().send(data, flags, copy=copy, track=track, **kw)

    def send_multipart(
        self, msg_parts: Any, flags: int = 0, copy: bool = True, track: bool = False, **kw: Any
    ) -> Any:
        self._address(flags)
        *first, last = msg_parts
        for part in first:
            super().send(part, flags | zmq.SNDMORE, copy=copy, track=track)
        return super().send(last, flags, copy=copy, track=track)

    def _address(self, flags: int) -> None:
        """The next receiver's routing id, as the message's first frame; the turn moves
        on only once it went (a full queue raises here, under ROUTER_MANDATORY)."""
        route = self.routes[self.turn % len(self.routes)]
        try:
            super().send(route, flags | zmq.SNDMORE)
        except zmq.ZMQError as error:
            if error.errno != zmq.EHOSTUNREACH:
                raise
            msg = f"{self.names[route]} is gone (ZMQ_ROUTER_MANDATORY: {error.strerror})"
            raise PeerError(msg) from None
        self.turn += 1


def greet(data: zmq.Socket) -> None:
    """A DEALER's first message, empty: its ROUTER learns its routing id from it."""
    data.send(b"")


def await_joined(
    hub: zmq.Socket,
    peers: int,
    timeout: float,
    check_alive: Callable[[], None],
    what: str,
) -> list[bytes]:
    """Wait until each of ``peers`` far ends has joined ``hub``: an XPUB hears a
    subscription (``\\x01``), a ROUTER a greeting; a ROUTER's are the routing ids in
    the order they came. A far end that exits is raised by ``check_alive``; a
    ``TimeoutError`` says how many had joined ``what`` after ``timeout``."""
    routes: list[bytes] = []
    heard, deadline = 0, time.monotonic() + timeout
    routing = hub.type == zmq.ROUTER
    while heard < peers:
        if hub.poll(_POLL_MS):
            if routing:
                route, _greeting = hub.recv_multipart()
                routes.append(route)
                heard += 1
            else:
                heard += hub.recv()[:1] == b"\x01"
            continue
        check_alive()
        if time.monotonic() > deadline:
            joined = "greeted" if routing else "subscribed"
            msg = f"the {what}: {heard} of {peers} far ends had {joined} after {timeout:g} s"
            raise TimeoutError(msg)
    return routes


__all__ = ["RoutedSocket", "await_joined", "greet"]

"""The round-trip loops send back what they received, as the references' loops do
(pyzmq's perf.py, libzmq's remote_lat): the first request is the payload, each later
one the reply just received. Checked against a far end that answers each request
with bytes of its own, in the Python, native and asyncio loops, copying and not."""

from __future__ import annotations

import threading

import pytest
import zmq

from zmqbench_magic.sockets.loops.async_loops import ping as ping_awaited
from zmqbench_magic.sockets.loops.pair import _ping, _ping_native

COUNT = 5
PAYLOAD = b" " * 100_000  # past pyzmq's copy threshold: copy=False sends it as it is


class _Client:
    """The REQ side as the loops ask for it (a link's data socket and its stall check)."""

    def __init__(self, data: zmq.Socket) -> None:
        self.data = data

    def check_stall(self, since: float) -> None:
        raise AssertionError("the planted far end answers at once")


def _answer_each_with_its_own(rep: zmq.Socket, requests: list[bytes]) -> None:
    """Reply to request i with ``reply i`` (a size of its own), keeping every request."""
    for i in range(COUNT):
        requests.append(rep.recv())
        rep.send(b"reply %d" % i)


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("loop", ["python", "native", "asyncio"])
def test_each_request_after_the_first_is_the_reply_just_received(loop, copy):
    requests: list[bytes] = []
    with zmq.Context() as ctx, ctx.socket(zmq.REP) as rep, ctx.socket(zmq.REQ) as req:
        for sock in (rep, req):
            sock.linger = 0
            sock.rcvtimeo = sock.sndtimeo = 10_000
        port = rep.bind_to_random_port("tcp://127.0.0.1")
        req.connect(f"tcp://127.0.0.1:{port}")
        far_end = threading.Thread(target=_answer_each_with_its_own, args=(rep, requests))
        far_end.start()
        client = _Client(req)
        if loop == "native":
            stamps = _ping_native(client, PAYLOAD, copy, COUNT)
        elif loop == "asyncio":
            stamps = ping_awaited(client, PAYLOAD, 1, copy, COUNT).value
        else:
            stamps = _ping(client, PAYLOAD, 1, copy, COUNT)
        far_end.join(timeout=10)
        assert not far_end.is_alive()
    assert len(stamps) == COUNT + 1
    assert requests == [PAYLOAD] + [b"reply %d" % i for i in range(COUNT - 1)]

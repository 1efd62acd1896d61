"""One latency sample of N clients on one server (``--clients``): the kernel's ROUTER
echoes every request while N REQ far ends (:mod:`.member`'s clients) each make
``count`` round trips back to back, timing each one.

Each client sends its round trips back after its report, and the sample's row pools
all of them: its percentiles are over every client's round trips, ``round_trips`` is
``count`` times the clients, ``achieved_per_s`` all their round trips over the time
from the first client's start to the last one's end (one clock, the machine's
monotonic one, which every process reads), and ``slowest_client_p50_us`` the median of
the client the server served worst. The clients' CPU is the sending end's, the
server's the echoing end's, as for one pair.
"""

from __future__ import annotations

import math
import time
from functools import partial
from typing import Any, cast

import numpy as np
import zmq

from ...method.control import gc_off
from ...method.load import CpuMeter
from ...params.columns import Row
from ..far_ends.peer import PeerError
from ..kernel.crowd import Crowd, Member
from ..kernel.link import LIVENESS_S
from ..payload import Payload
from ..protocol import GO, CpuUse, Ping, PingReport
from . import native
from .pair import latency_columns

# The most requests echoed between two looks at the clients (a look every LIVENESS_S
# at most: the clock is read once a batch, never per request).
_BATCH = 256


def clients_sample(
    crowd: Crowd, payload: Payload, count: int, copy: bool, loop: str = "python"
) -> tuple[Row, float]:
    """A sample of ``count`` round trips from each of the crowd's clients at once, all
    armed before any starts; its row and its wall time."""
    message = tuple(bytes(memoryview(f)) for f in payload.frames)
    order = Ping(cmd="ping", count=count, copy=copy, loop=loop, copy_threshold=crowd.copy_threshold)
    crowd.arm(crowd.clients, order, message)
    meter, clock = CpuMeter(crowd.pids), crowd.cpu_clock
    meter.start()
    with gc_off():
        cpu_start = clock()
        for client in crowd.clients:
            crowd.command(client, GO)
        echoed = serve(crowd, count * len(crowd.clients), copy, loop)
        server_cpu = clock() - cpu_start
        for client in crowd.clients:
            if not crowd.reported(client):
                client.report = crowd.report(client)
    return _row(crowd, count, echoed, server_cpu, meter.stop())


def serve(crowd: Crowd, total: int, copy: bool, loop: str) -> int:
    """Echo the clients' requests until all ``total`` are answered, or every client
    has reported; a client's death or error report raises naming it. Each receive
    waits a moment at most, and between batches, at least every ``LIVENESS_S``, the
    clients' processes and control sockets are looked at: a death is named while the
    others go on sending, not once they are done."""
    assert crowd.data is not None
    echo = partial(_echo_native if loop == "native" else _echo_python, crowd.data)
    echoed, since, looked = 0, time.monotonic(), 0.0
    while echoed < total:
        went = echo(min(total - echoed, _BATCH), copy)
        echoed += went
        now = time.monotonic()
        since = now if went else since
        if went and now - looked < LIVENESS_S:
            continue
        looked = now
        crowd.check_stall(since, "heard no request")
        if all(crowd.reported(c) for c in crowd.clients):
            break
    return echoed


def _echo_python(hub: zmq.Socket, most: int, copy: bool) -> int:
    """Send back up to ``most`` requests, each to the client it came from (its routing
    frame first); how many before a silence of the hub's receive timeout."""
    receive: Any = hub.recv_multipart
    reply: Any = hub.send_multipart
    i = 0
    try:
        for i in range(most):  # noqa: B007 - after Again, i says how many were echoed
            reply(receive(copy=copy), copy=copy)
    except zmq.Again:
        return i
    return most


def _echo_native(hub: zmq.Socket, most: int, copy: bool) -> int:
    """As :func:`_echo_python`, in C (``zb_route``, one pair's open-loop far end's)."""
    lib = native.library()
    return int(native.check(lib, lib.zb_route(hub.underlying, most, int(not copy))))


def _pinged(client: Member) -> PingReport:
    """A client's report: a client's is a PingReport."""
    assert client.report is not None, "a report read before it came"
    return cast(PingReport, client.report)


def _round_trips(client: Member) -> np.ndarray:
    """A client's round trips (µs), from the frame after its report."""
    report = _pinged(client)
    (frame,) = client.attached
    rtts = np.frombuffer(frame, dtype=np.float64) * 1e6
    if len(rtts) != report["pinged"]:
        msg = f"{client.name} reported {report['pinged']} round trips, sent {len(rtts)}"
        raise PeerError(msg)
    return rtts


def _row(
    crowd: Crowd, count: int, echoed: int, server_cpu: float, other_load: float
) -> tuple[Row, float]:
    each = [_round_trips(c) for c in crowd.clients]
    reports = [_pinged(c) for c in crowd.clients if c.report is not None]
    rtt_us = np.concatenate(each)
    if echoed != len(rtt_us) or len(rtt_us) != count * len(each):
        msg = (
            f"the {crowd.describe()} echoed {echoed:,} requests for "
            f"{len(rtt_us):,} round trips of {count * len(each):,}"
        )
        raise PeerError(msg)
    elapsed = max(r["last"] for r in reports) - min(r["first"] for r in reports)
    served = CpuUse(cpu_s=server_cpu, cpu_clock=reports[0]["cpu_clock"])
    clients_cpu = sum(r["cpu_s"] for r in reports)
    return {
        **latency_columns(rtt_us, elapsed, clients_cpu, served),
        "slowest_client_p50_us": max(float(np.median(r)) for r in each),
        "achieved_per_s": len(rtt_us) / elapsed if elapsed > 0 else math.nan,
        "send_lag_p99_us": math.nan,  # closed loops have no schedule to be late for
        "held": True,
        "other_load": other_load,
    }, elapsed


__all__ = ["clients_sample", "serve"]

"""The hot loops of one sample: the driver's side of a PUSH/PULL throughput sample and
of a REQ/REP latency sample, each a plain pyzmq loop as in pyzmq's ``perf/perf.py``.

A loop only moves messages and reads the clock; :mod:`.measure` decides what a
sample is (its count, warm-up, repeats) and the far end (:mod:`.peer`) runs the
other half.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .link import Link, PeerError
from .payload import Payload


def throughput_sample(
    link: Link, payload: Payload, count: int, copy: bool
) -> tuple[dict[str, Any], float]:
    frames, message = len(payload.frames), payload.message
    link.command(cmd="sink", count=count, copy=copy, frames=frames)
    link.reply()  # armed: the sink sits in its receive loop
    send = link.data.send if frames == 1 else link.data.send_multipart
    now = time.perf_counter
    start = now()
    for _ in range(count):
        send(message, copy=copy)
    send_elapsed = now() - start
    # A sink that lost messages reports after `timeout` of silence: wait longer than
    # that, so a loss is recorded as one rather than raced into a timeout error.
    delivered = link.reply(timeout=2 * link.timeout)
    received, elapsed = delivered["received"], delivered["elapsed"]
    if received < 2 or elapsed <= 0:
        msg = f"the {link.describe()} received {received} of {count} messages"
        raise PeerError(msg)
    # First to last receive spans received - 1 deliveries.
    msgs_per_s = (received - 1) / elapsed
    return {
        "received": received,
        "msgs_per_s": msgs_per_s,
        "send_msgs_per_s": count / send_elapsed,
        "mbit_per_s": msgs_per_s * payload.size * 8 / 1e6,
        "elapsed_s": elapsed,
        "send_elapsed_s": send_elapsed,
    }, max(elapsed, send_elapsed)


def latency_sample(
    link: Link, payload: Payload, count: int, copy: bool
) -> tuple[dict[str, Any], float]:
    frames, message = len(payload.frames), payload.message
    link.command(cmd="echo", count=count, copy=copy, frames=frames)
    link.reply()  # armed
    if frames == 1:
        send, recv = link.data.send, link.data.recv
    else:
        send, recv = link.data.send_multipart, link.data.recv_multipart
    now = time.perf_counter
    # One clock read per round trip: the gaps between reads are the round trips.
    stamps = [now()]
    stamp = stamps.append
    for _ in range(count):
        send(message, copy=copy)
        recv(copy=copy)
        stamp(now())
    link.reply()  # echoed
    rtt_us = np.diff(np.asarray(stamps)) * 1e6
    p50, p90, p99 = np.percentile(rtt_us, [50, 90, 99])
    elapsed = stamps[-1] - stamps[0]
    return {
        "rtt_us": elapsed / count * 1e6,
        "p50_us": float(p50),
        "p90_us": float(p90),
        "p99_us": float(p99),
        "max_us": float(rtt_us.max()),
        "min_us": float(rtt_us.min()),
        "elapsed_s": elapsed,
    }, elapsed

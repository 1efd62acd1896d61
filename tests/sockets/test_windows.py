"""What each loop's throughput window counts, on a planted case: a sender that puts a
known number of messages on the wire at a known rate, into each loop's receiver (the
far end's sink, Python's and C's). Both must read the planted rate, as libzmq's
``local_thr`` would: first to last receive, ``count - 1`` deliveries, so a figure
from one loop reads as a figure from the other.

Five messages 100 ms apart make the window's counting visible (counting ``count``
deliveries instead of ``count - 1`` reads 25% high), while the receiver waits idle
for each one, so the only error is a wake-up's delay; a machine busy enough to delay
one by 10% of the span is met by taking the sample again.
"""

from __future__ import annotations

import threading
import time

import pytest
import zmq

from zmqbench_magic.sockets.far_ends.peer import _sink, _sink_native

RATE, COUNT, SIZE = 10.0, 5, 4096
TRIES = 5
TOLERANCE = 0.10


def _planted_sample(sink) -> tuple[dict, list[float]]:
    """One sample of ``sink`` fed ``COUNT`` messages at ``RATE``; its report and the
    times the messages were sent."""
    sent_at: list[float] = []
    with zmq.Context() as ctx, ctx.socket(zmq.PULL) as pull, ctx.socket(zmq.PUSH) as push:
        for sock in (pull, push):
            sock.linger, sock.rcvtimeo, sock.sndtimeo = 0, 2000, 2000
        port = pull.bind_to_random_port("tcp://127.0.0.1")
        push.connect(f"tcp://127.0.0.1:{port}")
        push.send(b"hello")  # the connection is up before the first timed message
        assert pull.recv() == b"hello"

        def send_planted() -> None:
            start, message = time.perf_counter() + 0.05, b" " * SIZE
            for i in range(COUNT):
                time.sleep(max(0.0, start + i / RATE - time.perf_counter()))
                push.send(message)
                sent_at.append(time.perf_counter())

        sender = threading.Thread(target=send_planted)
        sender.start()
        try:
            report = sink(pull, COUNT, True, 1)
        finally:
            sender.join(timeout=10)
    return report, sent_at


@pytest.mark.parametrize("sink", [_sink, _sink_native], ids=["python", "native"])
def test_each_loops_receiver_reads_a_planted_rate(sink):
    readings = []
    for _ in range(TRIES):
        report, sent_at = _planted_sample(sink)
        assert report["received"] == COUNT, report
        rate = (report["received"] - 1) / report["elapsed"]
        readings.append(rate)
        # The sender's own rate: what the receiver had to read (a busy machine may
        # have held the sender back; the receiver must follow it, not the schedule).
        sent_rate = (COUNT - 1) / (sent_at[-1] - sent_at[0])
        if abs(rate / sent_rate - 1) <= TOLERANCE:
            break
    else:
        pytest.fail(f"{TRIES} samples read {readings} msgs/s, the sender's {sent_rate:.2f}")

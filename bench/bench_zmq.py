"""zmqbench_magic vs a bare pyzmq loop written the pyzmq-perf way, in one run.

For each size, both measure tcp PUSH/PULL throughput (delivered msgs/s) and REQ/REP
round-trip latency at the same settings: the same count, copy mode, high-water mark
and 127.0.0.1 tcp, the far end in a separate process. Runs alternate between the
two (project, bare, project, bare, ...) so drift on this shared machine hits both;
the table gives the medians and the ratio project / bare.

    python bench/bench_zmq.py            # ~2 minutes on 2 cores
    python bench/bench_zmq.py --quick    # seconds; checks the script, not the figures
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time

import zmq

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params import format_size, high_water_mark

SIZES = (100, 64 * 1024, 1024 * 1024)
# Messages / round trips per sample: each sample lasts roughly 0.2-0.5 s here.
THR_COUNT = {100: 200_000, 64 * 1024: 8_000, 1024 * 1024: 800}
LAT_COUNT = {100: 3_000, 64 * 1024: 2_000, 1024 * 1024: 300}
TIMEOUT_MS = 10_000


def _socket(ctx: zmq.Context, kind: int, size: int) -> zmq.Socket:
    sock = ctx.socket(kind)
    # The far end's last messages are still queued when it closes: let them go out
    # (perf.py relies on the default infinite linger; this one is bounded).
    sock.linger = TIMEOUT_MS
    sock.rcvtimeo = sock.sndtimeo = TIMEOUT_MS
    sock.sndhwm = sock.rcvhwm = high_water_mark(size)
    return sock


def _bare_pusher(url: str, count: int, size: int, copy: bool) -> None:
    with zmq.Context() as ctx, _socket(ctx, zmq.PUSH, size) as sock:
        sock.connect(url)
        message = b" " * size
        for _ in range(2 * count):  # a warm-up sample, then the timed one
            sock.send(message, copy=copy)


def _bare_echo(url: str, count: int, size: int, copy: bool) -> None:
    with zmq.Context() as ctx, _socket(ctx, zmq.REP, size) as sock:
        sock.connect(url)
        for _ in range(2 * count):  # a warm-up sample, then the timed one
            sock.send(sock.recv(copy=copy), copy=copy)


# perf.py forks its far end; a fork inherits this process's heap (pandas and all) and
# pays copy-on-write faults. "spawn" starts a fresh interpreter, as the project does.
START = {"method": "spawn"}


def bare_throughput(count: int, size: int, copy: bool = True) -> float:
    """pyzmq perf.py's throughput: time from the first to the last receive, after an
    untimed warm-up sample of ``count`` messages (as the project's ``warmup=1``)."""
    with zmq.Context() as ctx, _socket(ctx, zmq.PULL, size) as sock:
        port = sock.bind_to_random_port("tcp://127.0.0.1")
        sender = multiprocessing.get_context(START["method"]).Process(
            target=_bare_pusher, args=(f"tcp://127.0.0.1:{port}", count, size, copy)
        )
        sender.start()
        try:
            for _ in range(count):
                sock.recv(copy=copy)
            sock.recv(copy=copy)
            start = time.perf_counter()
            for _ in range(count - 1):
                sock.recv(copy=copy)
            elapsed = time.perf_counter() - start
        finally:
            sender.join(TIMEOUT_MS / 1000)
            sender.kill()
    return (count - 1) / elapsed


def bare_latency(count: int, size: int, copy: bool = True) -> float:
    """pyzmq perf.py's latency loop, after an untimed warm-up sample of ``count``
    round trips (as the project's ``warmup=1``; perf.py itself warms up with one)."""
    with zmq.Context() as ctx, _socket(ctx, zmq.REQ, size) as sock:
        port = sock.bind_to_random_port("tcp://127.0.0.1")
        echo = multiprocessing.get_context(START["method"]).Process(
            target=_bare_echo, args=(f"tcp://127.0.0.1:{port}", count, size, copy)
        )
        echo.start()
        try:
            message = b" " * size
            for _ in range(count):
                sock.send(message, copy=copy)
                sock.recv(copy=copy)
            start = time.perf_counter()
            for _ in range(count):
                sock.send(message, copy=copy)
                sock.recv(copy=copy)
            elapsed = time.perf_counter() - start
        finally:
            echo.join(TIMEOUT_MS / 1000)
            echo.kill()
    return elapsed / count * 1e6


def project_throughput(count: int, size: int, copy: bool = True) -> float:
    result = run_throughput(size=size, copy=copy, count=count, repeat=1, warmup=1)
    return float(result.df["msgs_per_s"].iloc[0])


def project_latency(count: int, size: int, copy: bool = True) -> float:
    result = run_latency(size=size, copy=copy, count=count, repeat=1, warmup=1)
    return float(result.df["rtt_us"].iloc[0])


def compare(project, bare, count: int, size: int, rounds: int) -> tuple[float, float, float]:
    """Medians of alternating runs; the ratio project / bare and its per-round spread."""
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(project(count, size))
        theirs.append(bare(count, size))
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    spread = (max(ratios) - min(ratios)) / statistics.median(ratios) if rounds > 1 else 0.0
    return statistics.median(ours), statistics.median(theirs), spread


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternating runs per figure")
    parser.add_argument("--quick", action="store_true", help="tiny counts, 2 rounds")
    parser.add_argument("--start-method", choices=("spawn", "fork"), default="spawn",
                        help="how the bare loop starts its far end (perf.py forks)")  # fmt: skip
    args = parser.parse_args(argv)
    START["method"] = args.start_method
    rounds = 2 if args.quick else args.rounds
    scale = 100 if args.quick else 1
    print(f"pyzmq {zmq.pyzmq_version()}, libzmq {zmq.zmq_version()}, tcp 127.0.0.1, copy=True, "
          f"medians of {rounds} alternating runs, bare far end by {args.start_method}")  # fmt: skip
    print(f"{'figure':<22}{'size':>6}{'project':>14}{'bare pyzmq':>14}{'ratio':>8}{'spread':>8}")
    for name, project, bare, counts, unit in (
        ("throughput (msgs/s)", project_throughput, bare_throughput, THR_COUNT, ",.0f"),
        ("latency (µs RTT)", project_latency, bare_latency, LAT_COUNT, ",.1f"),
    ):
        for size in SIZES:
            count = max(counts[size] // scale, 10)
            ours, theirs, spread = compare(project, bare, count, size, rounds)
            print(f"{name:<22}{format_size(size):>6}{ours:>14{unit}}{theirs:>14{unit}}"
                  f"{ours / theirs:>8.2f}{spread:>8.0%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

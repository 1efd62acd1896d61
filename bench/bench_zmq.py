"""zmqbench_magic vs a bare pyzmq loop written the pyzmq-perf way, in one run.

For each size, both measure tcp PUSH/PULL throughput (delivered msgs/s) and REQ/REP
round-trip latency at the same settings: the same count, copy=True, high-water mark
and 127.0.0.1 tcp, the far end in a separate process, one untimed warm-up sample.
The bare loop (``bare_perf.py``) runs as its own script importing only pyzmq, as
perf.py does, not inside this process that holds pandas. Runs alternate between the
two (project, bare, project, bare, ...) so drift on this shared machine hits both;
the table gives the medians and the ratio project / bare.

    python bench/bench_zmq.py            # ~2 minutes on 2 cores
    python bench/bench_zmq.py --quick    # seconds; checks the script, not the figures
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

import zmq

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params import high_water_mark
from zmqbench_magic.params.units import format_size

SIZES = (100, 64 * 1024, 1024 * 1024)
# Messages / round trips per sample: each sample lasts roughly 0.2-0.5 s here.
THR_COUNT = {100: 200_000, 64 * 1024: 8_000, 1024 * 1024: 800}
LAT_COUNT = {100: 3_000, 64 * 1024: 2_000, 1024 * 1024: 300}
BARE = Path(__file__).with_name("bare_perf.py")


def _bare(test: str, count: int, size: int) -> float:
    """Run the standalone bare loop in a fresh interpreter, as perf.py is run."""
    done = subprocess.run(
        [sys.executable, str(BARE), test, "--count", str(count), "--size", str(size),
         "--hwm", str(high_water_mark(size))],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return float(done.stdout)


def bare_throughput(count: int, size: int) -> float:
    return _bare("thr", count, size)


def bare_latency(count: int, size: int) -> float:
    return _bare("lat", count, size)


def project_throughput(count: int, size: int) -> float:
    result = run_throughput(size=size, count=count, repeat=1, warmup=1)
    return float(result.df["msgs_per_s"].iloc[0])


def project_latency(count: int, size: int) -> float:
    result = run_latency(size=size, count=count, repeat=1, warmup=1)
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
    args = parser.parse_args(argv)
    rounds = 2 if args.quick else args.rounds
    scale = 100 if args.quick else 1
    print(f"pyzmq {zmq.pyzmq_version()}, libzmq {zmq.zmq_version()}, tcp 127.0.0.1, copy=True, "
          f"medians of {rounds} alternating runs, one warm-up sample each")  # fmt: skip
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

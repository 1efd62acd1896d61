"""Where a 1 MiB round trip's time goes: the native and the Python loop, each copying
(``copy=True``) and not (``copy=False``, as pyzmq sends 1 MiB), and libzmq's own
``local_lat``/``remote_lat``, each under ``perf record`` sampling every CPU of the
machine at a fixed frequency. Each sample stands for 1/frequency seconds of one CPU,
so a symbol's samples are CPU time. Each command runs twice, with ``count`` round
trips and with three times as many: the difference between the two runs' samples over
the round trips added is what one more round trip costs, start-up and shut-down
cancelled out. The symbols are summed into what a round trip does (copies in user
space, the kernel's tcp copies, page faults, the rest: libzmq, Python, the kernel's
tcp stack and scheduler); the CPUs' idle loops are left out.

    python bench/bench_profile.py --libzmq-perf /tmp/ref     # ~1 minute; needs perf
    python bench/bench_profile.py --quick                    # seconds; checks the script

It needs Linux's ``perf`` and the right to sample every CPU (root, or
``kernel.perf_event_paranoid`` at most 0). The C tools are built as the benchmarks page
says; without ``--libzmq-perf`` their row is left out.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

from report import report

from zmqbench_magic.sockets.malloc import STEADY_MALLOC

SIZE = 1024 * 1024
FREQUENCY = 999  # samples a second on each CPU
# What a symbol's time is spent on, by the first pattern in its name that matches.
KINDS = (
    ("user copies (memcpy)", ("memmove", "memcpy")),
    ("kernel tcp receive copies", ("_copy_to_iter",)),
    ("kernel tcp send copies", ("_copy_from_iter",)),
    ("page faults", ("page_fault", "clear_page", "do_anonymous_page", "handle_mm_fault")),
)
# A CPU in its idle loop: left out (a halted virtual CPU is not sampled at a steady rate).
IDLE = ("safe_halt", "idle", "mwait", "poll_idle", "cpu_startup_entry")
OTHER = "everything else"
# perf report's listing: samples per symbol, no call graphs.
REPORT = ("--sort", "sym", "-g", "none")

PROJECT = """
import sys
from zmqbench_magic import run_latency
loop, copy = sys.argv[1], sys.argv[2] == "copy"
r = run_latency(size={size}, count={count}, repeat=1, warmup=1, loop=loop, copy=copy)
print("round trip", r.df["sample_mean_us"].iloc[0])
"""


def _kind(symbol: str) -> str | None:
    if any(name in symbol for name in IDLE):
        return None
    return next((kind for kind, names in KINDS if any(n in symbol for n in names)), OTHER)


def profile(command: list[str]) -> tuple[dict[str, int], float]:
    """Samples per kind of work while ``command`` runs, every CPU sampled; and the
    mean round trip in µs it printed."""
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "perf.data"
        printed = subprocess.run(
            ["perf", "record", "-a", "-F", str(FREQUENCY), "-o", str(data), "--", *command],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        ).stdout
        listing = subprocess.run(
            ["perf", "report", "-i", str(data), "--stdio", "-n", "--no-children", *REPORT],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        ).stdout
    samples: collections.Counter[str] = collections.Counter()
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0].endswith("%") and fields[1].isdigit():
            kind = _kind(" ".join(fields[3:]))
            if kind is not None:
                samples[kind] += int(fields[1])
    return dict(samples), _round_trip_us(printed)


def _round_trip_us(printed: str) -> float:
    """The project's mean round trip, or remote_lat's (which prints half of it)."""
    for line in printed.splitlines():
        if line.startswith("round trip"):
            return float(line.split()[-1])
        if line.startswith("average latency"):
            return 2 * float(line.split(":", 1)[1].split()[0])
    raise ValueError(f"no round trip in {printed!r}")


def _c_tools(folder: str, count: int) -> list[str]:
    """libzmq's pair as one command: local_lat (the echo, with the far end's malloc
    thresholds, as the project's echo has them) in the background, then remote_lat."""
    port = 20000 + os.getpid() % 20000
    url = f"tcp://127.0.0.1:{port}"
    steady = " ".join(f"{k}={v}" for k, v in STEADY_MALLOC.items())
    script = (
        f"env {steady} {folder}/local_lat {url} {SIZE} {count} > /dev/null & "
        f"sleep 0.2; {folder}/remote_lat {url} {SIZE} {count}; wait"
    )
    return ["bash", "-c", script]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="round trips per sample")
    parser.add_argument("--quick", action="store_true", help="a few round trips")
    parser.add_argument("--libzmq-perf", metavar="DIR", help="libzmq's built perf tools")
    args = parser.parse_args(argv)
    if shutil.which("perf") is None:
        print("perf is not installed: nothing to profile")
        return 1
    count = 20 if args.quick else args.count

    def project(loop: str, copy: str, trips: int) -> tuple[list[str], int]:
        # The project's warm-up sample is as long as its timed one.
        script = PROJECT.format(size=SIZE, count=trips)
        return [sys.executable, "-c", script, loop, copy], 2 * trips

    # (row, command and the round trips it makes, for a given count)
    runs = [
        (f"{loop} copy={copy == 'copy'}", partial(project, loop, copy))
        for loop in ("native", "python")
        for copy in ("copy", "nocopy")
    ]
    if args.libzmq_perf:
        runs.append(("libzmq C", lambda trips: (_c_tools(args.libzmq_perf, trips), trips)))
    kinds = [kind for kind, _ in KINDS] + [OTHER, "busy in all"]
    print(
        f"1 MiB REQ/REP round trips over tcp 127.0.0.1, {count:,} a sample, sampled by "
        f"perf at {FREQUENCY} Hz on each of {os.cpu_count()} CPUs; CPU µs per round trip"
    )
    print(f"{'loop':<20}{'round trip':>11}" + "".join(f"{kind:>28}" for kind in kinds))
    for name, command in runs:
        (short, short_trips), (long, long_trips) = command(count), command(3 * count)
        fewer, _ = profile(short)
        more, round_trip = profile(long)
        added = long_trips - short_trips
        more["busy in all"], fewer["busy in all"] = sum(more.values()), sum(fewer.values())
        per_trip = [
            (more.get(kind, 0) - fewer.get(kind, 0)) / FREQUENCY / added * 1e6 for kind in kinds
        ]
        print(f"{name:<20}{round_trip:>11,.1f}" + "".join(f"{us:>28,.1f}" for us in per_trip))
    print(
        "round trip: the mean the longer run printed (µs); each kind: its CPU time in the "
        "longer run less the shorter, over the round trips added (CPU µs, every CPU's; "
        "their idle loops left out)"
    )
    return 0


if __name__ == "__main__":
    with report("profile"):
        status = main()
    sys.exit(status)

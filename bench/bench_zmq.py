"""Every loop against its reference, in one run: the project's Python loop against a
bare pyzmq loop written the pyzmq-perf way and against pyzmq's own ``perf/perf.py``;
its native loop (``loop="native"``) against libzmq's ``perf/`` C tools; its asyncio
loop against a bare asyncio loop.

For each size, all measure tcp PUSH/PULL throughput (delivered msgs/s, and the rate of
the first sends, "send only") and REQ/REP round-trip latency at the same settings: the
same count, high-water mark and 127.0.0.1 tcp, the far end in a separate process, one
untimed warm-up sample. Each role has the memory the project gives it: the receiving
end (PULL, echo) runs with the project's far-end malloc thresholds (``STEADY_MALLOC``),
the driving end is left as it is. The bare loop (``bare_perf.py``) runs as its own
script importing only pyzmq, as perf.py does; *bare + pandas* is the same loop whose
driving end imported pandas first, as the kernel driving the project's loop has;
*bare thread* is the bare loop with its driving side's loop on a thread made for it,
as the project runs each sample's loop (a glibc heap arena of its own); and
*project driver* and *native driver* are the project's loops driven from a fresh
process of its own (``driver="process"``) rather than from this one, whose heap has
served every run before it. Runs
alternate (project, bare, ..., then the next round) so drift on this shared machine
hits all alike; the table gives the medians and the ratios.

What compares with what:

- the Python loop and the bare loops copy (``copy=True``), as perf.py does by default;
- *native copy=False* follows pyzmq's rule, as the C tools' way of sending does: it
  copies a message under ``COPY_THRESHOLD`` (64 kB), cheaper than tracking its buffer,
  and sends longer ones without a copy; libzmq's C tools copy no payload (``local_lat``
  echoes the message it received, ``remote_thr`` builds each in place). *native* copies
  every message, as ``copy=True`` does.

    python bench/bench_zmq.py            # ~12 minutes on 2 cores
    python bench/bench_zmq.py --quick    # seconds; checks the script, not the figures

The references are not part of this project; build them in /tmp from their own
repositories and point at them (``--perf-py``, ``--libzmq-perf``): see the
documentation's benchmarks page.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import psutil
import zmq
from report import report

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params import high_water_mark
from zmqbench_magic.params.units import format_size
from zmqbench_magic.sockets.malloc import STEADY_MALLOC

SIZES = (100, 4 * 1024, 64 * 1024, 1024 * 1024)
# Messages / round trips per sample: each sample lasts roughly 0.2-1.5 s here. Shorter
# ones read the start of a stream: the run's last lines set 8,000 messages of 64 KiB
# (about 0.13 s) beside the table's count. At 1 MiB, samples of 1,600 messages swung
# widely from round to round (a copy of each message, four busy threads on two cores),
# so its samples are the longest.
THR_COUNT = {100: 600_000, 4 * 1024: 100_000, 64 * 1024: 32_000, 1024 * 1024: 4_800}
LAT_COUNT = {100: 3_000, 4 * 1024: 3_000, 64 * 1024: 2_000, 1024 * 1024: 2_000}
BARE = Path(__file__).with_name("bare_perf.py")
# The project's kernel has these loaded: what "bare + pandas" imports first.
KERNEL_IMPORTS = ("pandas",)

# A figure's run: (count, size) -> {column: value}; a run may fill two columns (its
# delivered rate and its send-only rate).
Figure = Callable[[int, int], dict[str, float]]


def _steady_env() -> dict[str, str]:
    return {**os.environ, **STEADY_MALLOC}


def bare(
    test: str,
    count: int,
    size: int,
    awaited: bool = False,
    imports: tuple = (),
    cpu: str = "",
    thread: bool = False,
) -> float:
    """Run the standalone bare loop in a fresh interpreter, as perf.py is run."""
    done = subprocess.run(
        [
            sys.executable,
            str(BARE),
            test,
            "--count",
            str(count),
            "--size",
            str(size),
            "--hwm",
            str(high_water_mark(size)),
            *(["--asyncio"] if awaited else []),
            *(["--thread"] if thread else []),
            *(["--imports", *imports] if imports else []),
            *(["--cpu", cpu] if cpu else []),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return float(done.stdout)


def _free_url() -> str:
    with zmq.Context() as ctx, ctx.socket(zmq.PAIR) as sock:
        port = sock.bind_to_random_port("tcp://127.0.0.1")
    return f"tcp://127.0.0.1:{port}"


def _number_after(text: str, label: str) -> float:
    line = next(ln for ln in text.splitlines() if ln.strip().startswith(label))
    return float(line.split(":", 1)[1].split()[0])


def perf_py(path: str, test: str, count: int, size: int, cpu: str = "") -> dict[str, float]:
    """pyzmq's perf.py: delivered msgs/s and its send-only rate, or the round trip in
    µs (it prints half). Its far end is forked from it, so both ends get the steady
    malloc thresholds (it cannot give them to one alone); with ``cpu`` its driving end
    (the process itself) is pinned to the first CPU, the forked far end to the second
    as soon as it appears, before the two have shaken hands."""
    url = _free_url()
    driving, receiving = _split(cpu)
    command = [sys.executable, path, test, "--size", str(size), "--count", str(count)]
    process = subprocess.Popen(
        [*_taskset(driving), *command, "--url", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_steady_env(),
    )
    try:
        if receiving:
            _pin_child(process.pid, receiving)
        out, err = process.communicate(timeout=300)
    finally:
        process.kill()
        process.wait()
    if process.returncode:
        raise RuntimeError(f"perf.py failed: {err}")
    if test == "thr":
        return {
            "perf.py": _number_after(out, "mean throughput"),
            "perf.py sends": _number_after(out, "send only"),
        }
    return {"perf.py": 2 * _number_after(out, "mean latency")}


def _split(cpu: str) -> tuple[str, str]:
    """``0/1`` as ("0", "1"): the driving end's CPU and the receiving end's."""
    driving, _, receiving = cpu.partition("/")
    return driving, receiving


def _taskset(cpus: str) -> list[str]:
    return ["taskset", "-c", cpus] if cpus else []


def _pin_child(pid: int, cpus: str, within: float = 10.0) -> None:
    """Pin the first child ``pid`` forks (every thread of it) to ``cpus``."""
    parent, deadline = psutil.Process(pid), time.monotonic() + within
    while not (children := parent.children()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"process {pid} started no far end within {within} s")
        time.sleep(0.005)
    subprocess.run(
        ["taskset", "-a", "-p", "-c", cpus, str(children[0].pid)], check=True, capture_output=True
    )


def libzmq_perf(folder: str, test: str, count: int, size: int, cpu: str = "") -> float:
    """libzmq's local_*/remote_* pair: msgs/s at the receiver, or the round trip in µs
    (remote_lat prints half of it). local_* (the receiver, the echo) is the project's
    far end's role and gets its malloc thresholds; with ``cpu`` remote_* (the driving
    end) runs on the first CPU and local_* on the second, as the perf tools' own
    instructions have them under taskset."""
    url = _free_url()
    driving, receiving = _split(cpu)
    local = subprocess.Popen(
        [*_taskset(receiving), f"{folder}/local_{test}", url, str(size), str(count)],
        stdout=subprocess.PIPE,
        text=True,
        env=_steady_env(),
    )
    try:
        time.sleep(0.2)  # let it bind
        remote = subprocess.run(
            [*_taskset(driving), f"{folder}/remote_{test}", url, str(size), str(count)],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        out, _ = local.communicate(timeout=300)
    finally:
        local.kill()
        local.wait()
    if test == "thr":
        return _number_after(out, "mean throughput")
    return 2 * _number_after(remote.stdout, "average latency")


def project_throughput(
    name: str, count: int, size: int, sends: bool = False, **options: object
) -> dict[str, float]:
    """Delivered msgs/s, and with ``sends`` the send-only rate beside it."""
    result = run_throughput(size=size, count=count, repeat=1, warmup=1, **options)
    row = result.df.iloc[0]
    delivered = {name: float(row["msgs_per_s"])}
    return delivered | {f"{name} sends": float(row["send_msgs_per_s"])} if sends else delivered


def project_latency(
    name: str, count: int, size: int, sends: bool = False, **options: object
) -> dict[str, float]:
    result = run_latency(size=size, count=count, repeat=1, warmup=1, **options)
    return {name: float(result.df["sample_mean_us"].iloc[0])}


def _named(name: str, run: Callable[[int, int], float]) -> Figure:
    return lambda count, size: {name: run(count, size)}


def figures(
    test: str, perf_py_path: str | None, libzmq_folder: str | None, cpu: str = ""
) -> list[Figure]:
    """The runs of one round, in the order they alternate; with ``cpu`` (``0/1``) every
    one's driving end pinned to the first CPU and its receiving end to the second."""
    sample = project_throughput if test == "thr" else project_latency
    project = partial(sample, cpu=cpu) if cpu else sample
    runs: list[Figure] = [
        partial(project, "project", sends=True, loop="python", copy=True),
        partial(project, "project driver", loop="python", copy=True, driver="process"),
        _named("bare pyzmq", partial(bare, test, cpu=cpu)),
        _named("bare + pandas", partial(bare, test, imports=KERNEL_IMPORTS, cpu=cpu)),
        _named("bare thread", partial(bare, test, thread=True, cpu=cpu)),
        partial(project, "native", sends=True, loop="native", copy=True),
        partial(project, "native copy=False", loop="native", copy=False),
        partial(project, "native driver", loop="native", copy=False, driver="process"),
        partial(project, "asyncio", loop="asyncio", copy=True),
        _named("bare asyncio", partial(bare, test, awaited=True, cpu=cpu)),
    ]
    if perf_py_path:
        runs.append(partial(perf_py, perf_py_path, test, cpu=cpu))
    if libzmq_folder:
        runs.append(_named("libzmq C", partial(libzmq_perf, libzmq_folder, test, cpu=cpu)))
    return runs


def measure(runs: list[Figure], count: int, size: int, rounds: int) -> dict[str, list[float]]:
    """Each column's values over alternating rounds (every run once per round)."""
    values: dict[str, list[float]] = {}
    for _ in range(rounds):
        for run in runs:
            for name, value in run(count, size).items():
                values.setdefault(name, []).append(value)
    return values


# (ratio's column, numerator, denominator): the loop over its reference.
RATIOS = (
    ("/bare", "project", "bare pyzmq"),
    ("driver/bare", "project driver", "bare pyzmq"),
    ("/+pandas", "project", "bare + pandas"),
    ("/thread", "project", "bare thread"),
    ("/perf.py", "project", "perf.py"),
    ("native/C", "native copy=False", "libzmq C"),
    ("driver/C", "native driver", "libzmq C"),
    ("async", "asyncio", "bare asyncio"),
)


def _spread(values: dict[str, list[float]], top: str, bottom: str) -> float:
    """The range of the per-round ratios over their median."""
    ratios = [a / b for a, b in zip(values[top], values[bottom], strict=True)]
    middle = statistics.median(ratios)
    return (max(ratios) - min(ratios)) / middle if len(ratios) > 1 else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating runs per figure")
    parser.add_argument("--quick", action="store_true", help="tiny counts, 1 round")
    parser.add_argument("--perf-py", metavar="PATH", help="pyzmq's perf/perf.py, to compare")
    parser.add_argument(
        "--libzmq-perf", metavar="DIR", help="a folder with libzmq's built perf tools"
    )
    parser.add_argument(
        "--cpu",
        default="",
        metavar="DRIVING/RECEIVING",
        help="pin every loop's driving end to one CPU and its receiving end to another (0/1)",
    )
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    scale = 100 if args.quick else 1
    print(
        f"pyzmq {zmq.pyzmq_version()}, libzmq {zmq.zmq_version()}, tcp 127.0.0.1, "
        f"medians of {rounds} alternating runs, one warm-up sample each; "
        "the receiving end (PULL, echo) with the far end's malloc thresholds; "
        + (
            f"driving ends on CPU {_split(args.cpu)[0]}, receiving ends on CPU "
            f"{_split(args.cpu)[1]}"
            if args.cpu
            else "not pinned"
        )
    )
    for test, title, counts, unit in (
        ("thr", "throughput (msgs/s)", THR_COUNT, ",.0f"),
        ("lat", "latency (µs RTT)", LAT_COUNT, ",.1f"),
    ):
        runs = figures(test, args.perf_py, args.libzmq_perf, args.cpu)
        ratios = [r for r in RATIOS if r[2] != "perf.py" or args.perf_py]
        ratios = [r for r in ratios if r[2] != "libzmq C" or args.libzmq_perf]
        header = None
        for size in SIZES:
            count = max(counts[size] // scale, 10)
            values = measure(runs, count, size, rounds)
            medians = {name: statistics.median(v) for name, v in values.items()}
            if header is None:
                header = "".join(f"{name:>19}" for name in medians)
                names = "".join(f"{name:>12}" for name, _, _ in ratios)
                print(f"{'figure':<20}{'size':>6}{header}{names}{'spread':>8}")
            cells = "".join(f"{m:>19{unit}}" for m in medians.values())
            shares = "".join(
                f"{medians[top] / medians[bottom]:>12.2f}" for _, top, bottom in ratios
            )
            spread = _spread(values, "project", "bare pyzmq")
            print(f"{title:<20}{format_size(size):>6}{cells}{shares}{spread:>8.0%}")
            if size == SIZES[0]:
                smallest = values
        _print_rounds(title, smallest, unit)
    _print_sample_length(args.libzmq_perf, rounds, scale, args.cpu)
    return 0


# A short sample against the table's, at the size where the two part most.
SHORT_COUNT, LENGTH_SIZE = 8_000, 64 * 1024


def _print_sample_length(libzmq_folder: str | None, rounds: int, scale: int, cpu: str) -> None:
    """The native loop (and the C tools, where given) at 64 KiB with a short sample
    beside the table's: what the start of a stream weighs in a short one."""
    native = partial(project_throughput, "native copy=False", loop="native", copy=False)
    runs: list[Figure] = [partial(native, cpu=cpu) if cpu else native]
    if libzmq_folder:
        runs.append(_named("libzmq C", partial(libzmq_perf, libzmq_folder, "thr", cpu=cpu)))
    print(f"sample length at {format_size(LENGTH_SIZE)}, throughput (msgs/s), medians:")
    for count in (SHORT_COUNT, THR_COUNT[LENGTH_SIZE]):
        values = measure(runs, max(count // scale, 10), LENGTH_SIZE, rounds)
        cells = "".join(
            f"  {name} {statistics.median(v):,.0f} ({_range(v)})" for name, v in values.items()
        )
        print(f"  {count:>7,} messages:{cells}")


def _range(values: list[float]) -> str:
    """The lowest and highest round, as ``low-high``."""
    return f"{min(values):,.0f}-{max(values):,.0f}"


def _print_rounds(title: str, values: dict[str, list[float]], unit: str) -> None:
    """Every round's value at the smallest size, where a 2-CPU machine's placement of
    the busy threads shows most: a figure whose rounds fall into distinct groups."""
    print(f"each round in turn, {title} at {format_size(SIZES[0])}:")
    for name, rounds in values.items():
        print(f"  {name:<19}" + "".join(f"{value:>13{unit}}" for value in rounds))


if __name__ == "__main__":
    # A pinned run is a table of its own, beside the unpinned one.
    with report("zmq_pinned" if "--cpu" in sys.argv else "zmq"):
        status = main()
    sys.exit(status)

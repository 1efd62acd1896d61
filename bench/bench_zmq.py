"""zmqbench_magic vs a bare pyzmq loop written the pyzmq-perf way, and vs code no
one here wrote (pyzmq's ``perf/perf.py``, libzmq's ``perf/`` C tools), in one run;
and the project's native loop (``loop="native"``) beside libzmq's C tools, copying as
the other figures do and copying nothing, as the C tools do.

For each size, both measure tcp PUSH/PULL throughput (delivered msgs/s) and REQ/REP
round-trip latency at the same settings: the same count, copy=True, high-water mark
and 127.0.0.1 tcp, the far end in a separate process, one untimed warm-up sample.
The bare loop (``bare_perf.py``) runs as its own script importing only pyzmq, as
perf.py does, not inside this process that holds pandas. Runs alternate between the
two (project, bare, project, bare, ...) so drift on this shared machine hits both;
the table gives the medians and the ratio project / bare. The same for ``--loop
asyncio`` against a bare loop whose driving side (the pusher, the requester) awaits on
zmq.asyncio as pyzmq's asyncio examples do: the ``async`` column, asyncio / bare
asyncio.

    python bench/bench_zmq.py            # ~2 minutes on 2 cores
    python bench/bench_zmq.py --quick    # seconds; checks the script, not the figures

The references are not part of this project; build them in /tmp from their own
repositories and point at them (``--perf-py``, ``--libzmq-perf``): see the
documentation's benchmarks page.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import zmq
from report import report

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params import high_water_mark
from zmqbench_magic.params.units import format_size

SIZES = (1, 100, 4 * 1024, 64 * 1024, 1024 * 1024)
# Messages / round trips per sample: each sample lasts roughly 0.2-0.5 s here.
THR_COUNT = {1: 200_000, 100: 200_000, 4 * 1024: 100_000, 64 * 1024: 8_000, 1024 * 1024: 800}
LAT_COUNT = {1: 3_000, 100: 3_000, 4 * 1024: 3_000, 64 * 1024: 2_000, 1024 * 1024: 300}
BARE = Path(__file__).with_name("bare_perf.py")


def _bare(test: str, count: int, size: int, awaited: bool = False) -> float:
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


def perf_py(path: str, test: str, count: int, size: int) -> float:
    """pyzmq's perf.py: delivered msgs/s, or the round trip in µs (it prints half)."""
    done = subprocess.run(
        [
            sys.executable,
            path,
            test,
            "--size",
            str(size),
            "--count",
            str(count),
            "--url",
            _free_url(),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    if test == "thr":
        return _number_after(done.stdout, "mean throughput")
    return 2 * _number_after(done.stdout, "mean latency")


def libzmq_perf(folder: str, test: str, count: int, size: int) -> float:
    """libzmq's local_*/remote_* pair: msgs/s at the receiver, or the round trip in µs
    (remote_lat prints half of it)."""
    url = _free_url()
    local = subprocess.Popen(
        [f"{folder}/local_{test}", url, str(size), str(count)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(0.2)  # let it bind
        remote = subprocess.run(
            [f"{folder}/remote_{test}", url, str(size), str(count)],
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


def project_throughput(count: int, size: int, loop: str = "python", copy: bool = True) -> float:
    result = run_throughput(size=size, count=count, repeat=1, warmup=1, loop=loop, **_copying(copy))
    return float(result.df["msgs_per_s"].iloc[0])


def project_latency(count: int, size: int, loop: str = "python", copy: bool = True) -> float:
    result = run_latency(size=size, count=count, repeat=1, warmup=1, loop=loop, **_copying(copy))
    return float(result.df["sample_mean_us"].iloc[0])


def _copying(copy: bool) -> dict[str, object]:
    """A copying run, or one that copies nothing at any size (pyzmq's threshold 0),
    as libzmq's C tools: local_lat echoes the message it received and remote_lat sends
    the one it got back; local_thr and remote_thr build each message in place."""
    return {"copy": copy} if copy else {"copy": False, "copy_threshold": 0}


def measure(figures: dict, count: int, size: int, rounds: int) -> dict[str, list[float]]:
    """Each figure's values over alternating rounds (all of them once per round)."""
    values: dict[str, list[float]] = {name: [] for name in figures}
    for _ in range(rounds):
        for name, run in figures.items():
            values[name].append(run(count, size))
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternating runs per figure")
    parser.add_argument("--quick", action="store_true", help="tiny counts, 2 rounds")
    parser.add_argument("--perf-py", metavar="PATH", help="pyzmq's perf/perf.py, to compare")
    parser.add_argument(
        "--libzmq-perf", metavar="DIR", help="a folder with libzmq's built perf tools"
    )
    args = parser.parse_args(argv)
    rounds = 2 if args.quick else args.rounds
    scale = 100 if args.quick else 1
    print(
        f"pyzmq {zmq.pyzmq_version()}, libzmq {zmq.zmq_version()}, tcp 127.0.0.1, copy=True, "
        f"medians of {rounds} alternating runs, one warm-up sample each"
    )
    for test, title, counts, unit in (
        ("thr", "throughput (msgs/s)", THR_COUNT, ",.0f"),
        ("lat", "latency (µs RTT)", LAT_COUNT, ",.1f"),
    ):
        project = project_throughput if test == "thr" else project_latency
        figures = {
            "project": project,
            "bare pyzmq": partial(_bare, test),
            "native": partial(project, loop="native"),
            "native 0-copy": partial(project, loop="native", copy=False),
            "asyncio": partial(project, loop="asyncio"),
            "bare asyncio": partial(_bare, test, awaited=True),
        }
        if args.perf_py:
            figures["perf.py"] = partial(perf_py, args.perf_py, test)
        if args.libzmq_perf:
            figures["libzmq C"] = partial(libzmq_perf, args.libzmq_perf, test)
        header = "".join(f"{name:>14}" for name in figures)
        versus_c = f"{'native/C':>10}{'0-copy/C':>10}" if args.libzmq_perf else ""
        print(f"{'figure':<22}{'size':>6}{header}{'ratio':>8}{'spread':>8}{'async':>8}{versus_c}")
        for size in SIZES:
            count = max(counts[size] // scale, 10)
            values = measure(figures, count, size, rounds)
            medians = {name: statistics.median(v) for name, v in values.items()}
            ratios = [a / b for a, b in zip(values["project"], values["bare pyzmq"], strict=True)]
            spread = (max(ratios) - min(ratios)) / statistics.median(ratios) if rounds > 1 else 0
            cells = "".join(f"{m:>14{unit}}" for m in medians.values())
            ratio = medians["project"] / medians["bare pyzmq"]
            native_c = ""
            if args.libzmq_perf:
                native_c = "".join(
                    f"{medians[name] / medians['libzmq C']:>10.2f}"
                    for name in ("native", "native 0-copy")
                )
            awaited = medians["asyncio"] / medians["bare asyncio"]
            print(
                f"{title:<22}{format_size(size):>6}{cells}{ratio:>8.2f}{spread:>8.0%}"
                f"{awaited:>8.2f}{native_c}"
            )
    return 0


if __name__ == "__main__":
    with report("zmq"):
        status = main()
    sys.exit(status)

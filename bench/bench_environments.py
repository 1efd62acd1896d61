"""Two pyzmq releases side by side, in one interleaved run, and each against itself.

An upgrade is decided on an A/B: the same sweep, both environments, one run, fresh
driver processes each round, the arms measured one after the other in ABBA order and
compared paired by round. Whether its verdicts can be trusted is an A/A: the same
environment as both arms, where any ``faster``/``slower`` is a false call. Both are
run here for throughput and latency, 100 B to 1 MB.

With ``--perf PATH`` to pyzmq's own ``perf/perf.py`` (fetched into /tmp, see the
benchmarks page; never copied here), the same A/B is also measured by code no one here
wrote: perf.py run under each interpreter, alternating ABBA, 6 runs each, and the
ratio of their medians printed beside ours.

The environments are built beforehand (the bench itself reaches no package index)::

    zmqbench env pyzmq==25.1.2 pyzmq==26.4.0      # prints the two interpreters
    python bench/bench_environments.py A B --perf /tmp/ref/perf.py  # ~30 min, 2 cores
    python bench/bench_environments.py A B --quick # a minute; checks the script
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import subprocess
import sys

import pandas as pd
from report import report

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params.interpreter import arm_names, executable
from zmqbench_magic.params.units import parse_size

SIZES = ["100", "1k", "16k", "64k", "1M"]
# perf.py's messages per run, so a run lasts about a second here.
PERF_COUNTS = {
    "thr": {"100": 300_000, "1k": 300_000, "16k": 60_000, "64k": 20_000, "1M": 2_000},
    "lat": {"100": 8_000, "1k": 8_000, "16k": 6_000, "64k": 5_000, "1M": 2_000},
}
PERF_RUNS = 6
_PERF_FIGURE = {
    "thr": r"mean throughput:\s+([\d.]+)\s+\[msg/s\]",
    "lat": r"mean latency\s+:\s+([\d.]+)\s+\[µs\]",
}


def side_by_side(benchmark: str, arms: list[str], quick: bool) -> pd.DataFrame:
    """One interleaved run of both ``arms``; its paired verdicts, per size."""
    measure = run_throughput if benchmark == "thr" else run_latency
    sizes = SIZES[:1] if quick else SIZES
    rounds, min_time = (3, 0.02) if quick else (20, 0.1)
    result = measure(size=sizes, python=arms, repeat=rounds, warmup=1, min_time=min_time)
    baseline, candidate = result.df["python"].unique().tolist()
    table = result.versus("python", baseline, candidate)
    envs = result.metadata["environments"]
    table.insert(0, "benchmark", benchmark)
    table["arms"] = f"{_spell(envs[candidate])} / {_spell(envs[baseline])}"
    return table


def _spell(env: dict[str, str]) -> str:
    return f"pyzmq {env['pyzmq']} (libzmq {env['libzmq']})"


def show(title: str, tables: list[pd.DataFrame]) -> int:
    """Print the tables; return the number of faster/slower calls."""
    table = pd.concat(tables, ignore_index=True)
    print(f"\n{title}: {table['arms'].iloc[0]}, ratio candidate / baseline, paired by round")
    print(
        f"{'bench':<6} {'size':>8} {'metric':<16} {'ratio':>7} {'interval':>17} {'n':>3}  verdict"
    )
    for row in table.to_dict("records"):
        print(
            f"{row['benchmark']:<6} {row['size']:>8} {row['metric']:<16} {row['ratio']:>7.3f} "
            f"{row['ci_level']:>4.0%} {row['ci_low']:.3f}-{row['ci_high']:.3f} {row['n']:>3}  "
            f"{row['verdict']}"
        )
    calls = int(table["verdict"].isin(["faster", "slower"]).sum())
    counts = table["verdict"].value_counts()
    print("verdicts: " + ", ".join(f"{word} {count}" for word, count in counts.items()))
    return calls


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def perf_run(python: str, perf: str, benchmark: str, size: str) -> float:
    """One run of pyzmq's perf.py under ``python``: msgs/s (thr) or mean µs (lat)."""
    count = PERF_COUNTS[benchmark][size]
    nbytes = parse_size(size)
    url = f"tcp://127.0.0.1:{_free_port()}"
    done = subprocess.run(
        [python, perf, benchmark, "-s", str(nbytes), "-n", str(count), "--url", url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    found = re.search(_PERF_FIGURE[benchmark], done.stdout)
    if done.returncode != 0 or found is None:
        msg = f"perf.py failed under {python}: {done.stderr[-500:] or done.stdout[-500:]}"
        raise RuntimeError(msg)
    return float(found.group(1))


def perf_side_by_side(baseline: str, candidate: str, perf: str, names: tuple[str, str]) -> None:
    """perf.py under both interpreters, ABBA, ``PERF_RUNS`` runs each per point."""
    print(
        f"\npyzmq's perf.py (tcp, copy), {names[1]} / {names[0]}: median of {PERF_RUNS} "
        "runs each, alternating ABBA"
    )
    print(f"{'bench':<6} {'size':>8} {'baseline':>12} {'candidate':>12} {'ratio':>7}")
    for benchmark in ("thr", "lat"):
        for size in SIZES:
            figures: dict[str, list[float]] = {baseline: [], candidate: []}
            for turn in range(PERF_RUNS):
                pair = (baseline, candidate) if turn % 2 == 0 else (candidate, baseline)
                for python in pair:
                    figures[python].append(perf_run(python, perf, benchmark, size))
            a, b = (statistics.median(figures[p]) for p in (baseline, candidate))
            print(f"{benchmark:<6} {size:>8} {a:>12,.1f} {b:>12,.1f} {b / a:>7.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="the interpreter of the release in use")
    parser.add_argument("candidate", help="the interpreter of the release to upgrade to")
    parser.add_argument("--quick", action="store_true", help="1 size, 3 rounds")
    parser.add_argument("--perf", metavar="PATH", help="pyzmq's perf/perf.py, run the same way")
    args = parser.parse_args()
    names = arm_names([args.baseline, args.candidate])
    a, b = names[args.baseline], names[args.candidate]
    with report("environments", quick=args.quick):
        false_calls = 0
        for name, spec in ((a, args.baseline), (b, args.candidate)):
            same = [f"A={spec}", f"B={spec}"]
            tables = [side_by_side(kind, same, args.quick) for kind in ("thr", "lat")]
            false_calls += show(f"A/A, {name} against itself", tables)
        tables = [
            side_by_side(kind, [args.baseline, args.candidate], args.quick)
            for kind in ("thr", "lat")
        ]
        show(f"A/B, {b} against {a}", tables)
        if args.perf:
            pythons = executable(args.baseline), executable(args.candidate)
            perf_side_by_side(*pythons, args.perf, (a, b))
        print(f"\nA/A false calls (faster/slower): {false_calls}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

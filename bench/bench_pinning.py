"""Does pinning (``--cpu``) narrow the spread here?

The same sweeps run unpinned and pinned, the configurations taking turns (ABC ABC ...)
so the machine's drift falls on each alike. Per configuration and point: the median of
the runs' medians, the spread within a run (stdev over mean of its samples, the median
over the runs) and from run to run (the largest run median over the smallest, less 1).
Configurations: not pinned; the driver on the first usable CPU and the far end on the
last (``0/1`` on two cores, as libzmq's perf tools are run under taskset); both on the
last CPU (they then take turns on one core).

    python bench/bench_pinning.py            # ~3 minutes on 2 cores
    python bench/bench_pinning.py --quick    # seconds; checks the script
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import pandas as pd
from report import report

from zmqbench_magic import run_latency, run_throughput

USABLE = sorted(os.sched_getaffinity(0))
CONFIGURATIONS = {
    "not pinned": "",
    "split": f"{USABLE[0]}/{USABLE[-1]}",
    "one CPU": f"{USABLE[-1]}",
}


def measure(turns: int, quick: bool) -> pd.DataFrame:
    options = {"repeat": 3 if quick else 8, "warmup": 1, "min_time": 0.02 if quick else 0.1}
    sweeps = {
        "thr": (run_throughput, {"size": ["1k"] if quick else ["1k", "64k"]}),
        "lat": (run_latency, {"size": ["64"]}),
    }
    rows = []
    for turn in range(turns):
        for name, cpu in CONFIGURATIONS.items():
            for benchmark, (run, sweep) in sweeps.items():
                result = run(cpu=cpu, transport=["tcp"], **sweep, **options)
                headline = result.metric_names[0]
                for point in result.summary().to_dict("records"):
                    rows.append(
                        {
                            "benchmark": benchmark,
                            "size": point["size"],
                            "configuration": name,
                            "turn": turn,
                            "median": point[headline],
                            "within": point["spread"],
                            "unit": "msgs/s" if benchmark == "thr" else "µs",
                        }
                    )
    return pd.DataFrame(rows)


def table(df: pd.DataFrame) -> None:
    print(
        f"{'benchmark':<9} {'size':>6} {'configuration':<13} {'cpu':<5} {'median':>16} "
        f"{'within a run':>12} {'run to run':>10}"
    )
    for (benchmark, size), point in df.groupby(["benchmark", "size"], sort=False):
        for name, runs in point.groupby("configuration", sort=False):
            medians = runs["median"]
            median = f"{medians.median():,.0f} {runs['unit'].iloc[0]}"
            print(
                f"{benchmark:<9} {size:>6} {name:<13} {CONFIGURATIONS[name] or '-':<5} "
                f"{median:>16} {runs['within'].median():>12.1%} "
                f"{medians.max() / medians.min() - 1:>10.1%}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one turn, short samples")
    parser.add_argument("--turns", type=int, default=6, help="runs of each configuration")
    args = parser.parse_args()
    with report("pinning", quick=args.quick):
        turns = 1 if args.quick else args.turns
        print(
            f"{turns} runs of each configuration, taking turns; tcp; CPUs usable: "
            f"{','.join(map(str, USABLE))}"
        )
        df = measure(turns, args.quick)
        table(df)
        # What the table says, from its own figures: does pinning narrow either spread?
        for level in ("within", "run to run"):
            by = df.groupby(["benchmark", "size", "configuration"], sort=False)
            spread = (
                by["within"].median()
                if level == "within"
                else by["median"].agg(lambda m: m.max() / m.min() - 1)
            ).unstack("configuration")
            narrower = int(np.sum(spread["split"] < spread["not pinned"]))
            print(
                f"split narrower than not pinned ({level}): at {narrower} of {len(spread)} points"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How often does a history find a step that is there, and call one that is not?

Two parts, each a table:

1. **Synthetic series with a known answer.** A point's median, run after run, each
   run off by its own lognormal noise (the spread of whole runs' medians when nothing
   changed: ``zmqbench noise`` measures it on a host). A step of the given size is put
   at a random run with at least 3 runs on each side. *found* is the share of series
   with a step called within one run of where it was put, in the right direction;
   *off by* the mean distance of those; *false* the share of flat series (no step) in
   which any step is called. Tolerance 1%, alpha 0.05.
2. **Real runs.** A history of real throughput runs on this machine, each run a fresh
   set of processes: ``--runs`` runs as they are (nothing changes: any step called
   among them is false), then as many with a busy loop on every core beside them (a
   neighbour's job: a real change, whose effect on the figure this machine decides).
   The last line says how many points stepped within one run of the first busy run
   (as the synthetic series are scored), and how many steps were called elsewhere.

    python bench/bench_history.py            # ~3 minutes on 2 cores
    python bench/bench_history.py --quick    # seconds; checks the script
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pandas as pd
from report import report

from zmqbench_magic import run_throughput
from zmqbench_magic.results.statistics.history import STEP_COLUMNS, find_steps
from zmqbench_magic.results.words.history_text import history_lines

STEPS = (0.02, 0.05, 0.10)
NOISES = (0.01, 0.015, 0.02, 0.03)
LENGTHS = (10, 20, 40)


def synthetic(trials: int) -> None:
    rng = np.random.default_rng(20261126)
    print(f"synthetic: {trials} series each; a run's median off by its own noise (lognormal)")
    print(
        f"{'runs':>5} {'noise':>6} {'false':>7}   "
        + "   ".join(f"{f'found {step:.0%}':>9} {'off by':>6}" for step in STEPS)
    )
    for runs in LENGTHS:
        for noise in NOISES:
            false = np.mean(
                [
                    bool(find_steps(1000 * rng.lognormal(0, noise, runs), seed=trial)[0])
                    for trial in range(trials)
                ]
            )
            cells = []
            for step in STEPS:
                found, off = [], []
                for trial in range(trials):
                    at = int(rng.integers(3, runs - 2))
                    values = 1000 * rng.lognormal(0, noise, runs)
                    values[at:] *= 1 + step
                    steps, _ = find_steps(values, seed=trial)
                    near = [s for s in steps if abs(s.at - at) <= 1 and s.after > s.before]
                    found.append(bool(near))
                    off += [abs(near[0].at - at)] if near else []
                cells.append(f"{np.mean(found):>9.2f} {np.mean(off) if off else np.nan:>6.2f}")
            print(f"{runs:>5} {noise:>6.1%} {false:>7.3f}   " + "   ".join(cells))


def real(runs: int, quick: bool) -> int:
    sizes = ["1k"] if quick else ["256", "1k", "4k"]
    options = {"size": sizes, "repeat": 3 if quick else 6, "warmup": 0, "min_time": 0.05}
    joined = None
    for i in range(2 * runs):
        with _neighbours(busy=i >= runs):
            result = run_throughput(driver="process", label=f"run-{i:02d}", **options)
        joined = result if joined is None else joined + result
    assert joined is not None
    series, steps = joined.history(tolerance=0.01)
    print(f"\nreal: {runs} runs, then {runs} with a busy loop on each core beside them")
    print("\n".join(history_lines(series, steps)))
    # As the synthetic series are scored: within one run of the change counts as found.
    called = steps[steps["called"]]
    near = (called["at"] - runs).abs() <= 1
    print(
        f"steps called within one run of the change (run {runs}): "
        f"{called[near][keys_of(called)].drop_duplicates().shape[0]} of {len(sizes)} points; "
        f"elsewhere: {int((~near).sum())}"
    )
    return 0


# A busy loop that ends by itself once the bench that started it is gone (killed
# before it could stop it), so it never loads the machine for later runs.
_SPIN = """
import os, sys
parent = int(sys.argv[1])
while os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""


def keys_of(steps: pd.DataFrame) -> list[str]:
    """The columns of a steps table that name its point."""
    told = (*STEP_COLUMNS, "p_value", "p_adjusted", "called", "reason")
    return [c for c in steps.columns if c not in told]


@contextlib.contextmanager
def _neighbours(busy: bool) -> Iterator[None]:
    """With ``busy``: a process spinning on each core for as long as the block runs."""
    spinning = [
        subprocess.Popen([sys.executable, "-c", _SPIN, str(os.getpid())])
        for _ in range((os.cpu_count() or 1) if busy else 0)
    ]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few trials, a short real history")
    parser.add_argument("--trials", type=int, default=400, help="synthetic series per cell")
    parser.add_argument("--runs", type=int, default=8, help="real runs before and after")
    args = parser.parse_args()
    with report("history", quick=args.quick):
        synthetic(20 if args.quick else args.trials)
        return real(3 if args.quick else args.runs, args.quick)


if __name__ == "__main__":
    sys.exit(main())

"""How often do the verdicts call a difference that is not there, and find one that is?

Two parts, each a table:

1. **Synthetic samples with a known answer.** A 12-point sweep of two arms, 10 rounds
   (the default ``--repeat``). Paired: each round shifts both arms by a shared 5% (the
   machine's state in that round) and each sample has 2% of its own. Unpaired: two
   separate runs, each sample with the same total noise and nothing shared, and a
   2% offset between the runs where it says so (this machine's everyday drift).
   *any call* is the share of comparisons with at least one ``faster``/``slower``
   (for A/A: a false alarm); *called* the share of points called in the right
   direction when every point moved. Then runs that drift: each whole run off by its
   own factor (3% spread, lognormal), compared at the 1% tolerance and at a noise
   floor measured from 5 such runs (``zmqbench noise``'s rule, through its store).
2. **Real sockets, A/A.** One configuration compared with itself over a 12-point
   sweep: two copy thresholds that cannot matter (copy sends never look at it),
   measured in the same rounds and compared paired (``versus``); and two separate
   runs compared unpaired (``compare``). Any ``faster``/``slower`` is a false call.

    python bench/bench_verdicts.py            # ~10 minutes on 2 cores
    python bench/bench_verdicts.py --quick    # seconds; checks the script
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
import pandas as pd
from report import report

from zmqbench_magic import run_noise, run_throughput
from zmqbench_magic.params import TOLERANCE, ThroughputParams
from zmqbench_magic.results import ResultSet
from zmqbench_magic.results.statistics.compare import versus
from zmqbench_magic.results.storage import noise_floor
from zmqbench_magic.results.synthetic import OWN_NOISE, ROUND_NOISE, paired_sweep, unpaired_run

REAL_SIZES = ["16", "64", "256", "1k", "4k", "16k", "32k", "64k", "128k", "256k", "512k", "1M"]


def _paired_table(rng: np.random.Generator, shift: float, rounds: int, points: int) -> pd.DataFrame:
    df = paired_sweep(rng, shift, rounds, points)
    return versus(df, "copy", True, False, "msgs_per_s", ["size"])


def _unpaired_table(
    rng: np.random.Generator, shift: float, n: int, points: int, offset: float = 0.0
) -> pd.DataFrame:
    return unpaired_run(rng, 1.0, n, points).compare(
        unpaired_run(rng, (1 + shift) * (1 + offset), n, points), tolerance=TOLERANCE.default
    )


DRIFT, FLOOR_RUNS = 0.03, 5


def _drifting_table(
    rng: np.random.Generator, shift: float, n: int, points: int, floor: bool
) -> pd.DataFrame:
    """Two runs, each off by its own drift; compared at the 1% tolerance, or at the
    noise floor of ``FLOOR_RUNS`` other runs of the same sweep."""

    def drifting(factor: float) -> ResultSet:
        return unpaired_run(rng, factor * rng.lognormal(0, DRIFT), n, points)

    if not floor:
        return drifting(1.0).compare(drifting(1.0 + shift), tolerance=TOLERANCE.default)
    noise_floor.save([drifting(1.0) for _ in range(FLOOR_RUNS)])  # into ZMQBENCH_NOISE_FILE
    return drifting(1.0).compare(drifting(1.0 + shift))


def drifting(trials: int) -> None:
    rng = np.random.default_rng(20261125)
    print(
        f"\nruns that drift: each run off by its own factor ({DRIFT:.0%} lognormal); "
        f"noise floor from {FLOOR_RUNS} runs"
    )
    print(
        f"{'case':<30} {'rounds':>6} {'points':>6} {'any call':>9} {'called':>7} "
        f"{'same':>6} {'inconclusive':>13}"
    )
    with tempfile.TemporaryDirectory() as folder:
        os.environ[noise_floor.STORE_ENV] = os.path.join(folder, "noise.json")
        for shift in (0.0, 0.05, 0.10, 0.20):
            for floor in (False, True):
                name = f"{'A/A' if not shift else f'+{shift:.0%}'}, drift, " + (
                    "floor" if floor else "1% tolerance"
                )
                _rates(
                    name,
                    shift,
                    10,
                    12,
                    [_drifting_table(rng, shift, 10, 12, floor) for _ in range(trials)],
                )


def _rates(name: str, shift: float, rounds: int, points: int, tables: list[pd.DataFrame]) -> None:
    verdicts = pd.concat([t["verdict"] for t in tables], ignore_index=True)
    any_call = np.mean([t["verdict"].isin(["faster", "slower"]).any() for t in tables])
    called = (verdicts == "faster").mean() if shift else float("nan")
    print(
        f"{name:<30} {rounds:>6} {points:>6} {any_call:>9.3f} {called:>7.2f} "
        f"{(verdicts == 'same').mean():>6.2f} {(verdicts == 'inconclusive').mean():>13.2f}"
    )


def synthetic(trials: int) -> None:
    rng = np.random.default_rng(20261124)
    cases = [
        ("A/A, paired", lambda n, p: _paired_table(rng, 0.0, n, p), 0.0),
        ("A/A, unpaired", lambda n, p: _unpaired_table(rng, 0.0, n, p), 0.0),
        ("A/A, unpaired, runs 2% apart", lambda n, p: _unpaired_table(rng, 0.0, n, p, 0.02), 0.0),
        ("+3%, paired", lambda n, p: _paired_table(rng, 0.03, n, p), 0.03),
        ("+5%, paired", lambda n, p: _paired_table(rng, 0.05, n, p), 0.05),
        ("+5%, unpaired", lambda n, p: _unpaired_table(rng, 0.05, n, p), 0.05),
        ("+10%, paired", lambda n, p: _paired_table(rng, 0.10, n, p), 0.10),
        ("+10%, unpaired", lambda n, p: _unpaired_table(rng, 0.10, n, p), 0.10),
    ]
    print(
        f"synthetic: {trials} comparisons each; noise {ROUND_NOISE:.0%} per round shared, "
        f"{OWN_NOISE:.0%} per sample own"
    )
    print(
        f"{'case':<30} {'rounds':>6} {'points':>6} {'any call':>9} {'called':>7} "
        f"{'same':>6} {'inconclusive':>13}"
    )
    for name, make, shift in cases:
        for rounds, points in ((5, 1), (10, 1), (10, 12), (20, 12)):
            _rates(name, shift, rounds, points, [make(rounds, points) for _ in range(trials)])


def real(times: int, quick: bool) -> None:
    sizes = REAL_SIZES[:1] if quick else REAL_SIZES
    options = {
        "repeat": 3 if quick else 10,
        "min_time": 0.01 if quick else 0.05,
        "warmup": 1,
        "transport": "tcp",
        "copy": True,
    }
    print(f"\nreal sockets, A/A over {len(sizes)} sizes (tcp, copy sends), {times} comparisons")
    # This host's noise floor for the sweep, measured first, in a store of this run.
    folder = tempfile.TemporaryDirectory()
    os.environ[noise_floor.STORE_ENV] = os.path.join(folder.name, "noise.json")
    run_noise(ThroughputParams(size=sizes, **options), runs=3 if quick else FLOOR_RUNS)
    paired_calls, unpaired_calls, floor_calls, shifts = 0, 0, 0, 0
    counts: dict[str, int] = {}
    for _ in range(times):
        both = run_throughput(size=sizes, copy_threshold=[65536, 65537], **options)
        table = both.versus("copy_threshold", 65536, 65537)
        paired_calls += table["verdict"].isin(["faster", "slower"]).any()
        for verdict, count in table["verdict"].value_counts().items():
            counts[f"paired {verdict}"] = counts.get(f"paired {verdict}", 0) + int(count)
        a = run_throughput(size=sizes, **options)
        b = run_throughput(size=sizes, **options)
        table = a.compare(b, tolerance=TOLERANCE.default)
        unpaired_calls += table["verdict"].isin(["faster", "slower"]).any()
        floor_calls += a.compare(b)["verdict"].isin(["faster", "slower"]).any()
        shifts += bool(table.attrs["shift"])
        for verdict, count in table["verdict"].value_counts().items():
            counts[f"unpaired {verdict}"] = counts.get(f"unpaired {verdict}", 0) + int(count)
    print(
        f"paired (one run, two identical arms): {paired_calls} of {times} comparisons "
        "with a faster/slower"
    )
    print(
        f"unpaired (two runs): {unpaired_calls} of {times} comparisons with a faster/slower; "
        f"a common shift noted in {shifts}"
    )
    print(
        f"unpaired at the host's noise floor (measured first): {floor_calls} of {times} "
        "comparisons with a faster/slower"
    )
    folder.cleanup()
    print("verdicts over all points: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few trials, one real comparison")
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--times", type=int, default=20, help="real A/A comparisons")
    args = parser.parse_args()
    with report("verdicts", quick=args.quick):
        print(f"tolerance ±{TOLERANCE.default:.0%}")
        synthetic(5 if args.quick else args.trials)
        drifting(5 if args.quick else args.trials)
        real(1 if args.quick else args.times, args.quick)


if __name__ == "__main__":
    main()

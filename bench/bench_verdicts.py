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
2. **Looked at after every round** (``--until decided``): the same paired model, each
   point stopping at its first decision, up to a cap of rounds. *any call* and *called*
   as above; the rounds each point took (median), the fewest any point can be called
   in, and the rounds the fixed design (part 1's test, looked at once) needs to call
   as large a share of the points. Then the plan: the rounds a difference needs by
   the noise of a round's ratio (``zmqbench plan``).
3. **Real sockets, A/A.** One configuration compared with itself over a 12-point
   sweep: two copy thresholds that cannot matter (copy sends never look at it),
   measured in the same rounds and compared paired (``versus``); and two separate
   runs compared unpaired (``compare``). Any ``faster``/``slower`` is a false call.
   Then runs taken until decided: zero-copy against copy at 1 MB, and the A/A of two
   copy thresholds at 1 kB.

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
from zmqbench_magic.results.statistics.sequential import fewest_rounds, plan, sequential_test
from zmqbench_magic.results.statistics.stats import paired_ratio_test
from zmqbench_magic.results.statistics.verdict import judge
from zmqbench_magic.results.storage import noise_floor
from zmqbench_magic.results.synthetic import (
    OWN_NOISE,
    ROUND_NOISE,
    paired_arms,
    paired_sweep,
    unpaired_run,
)
from zmqbench_magic.results.words.planning import DIFFERENCES

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


POINTS = 12


def _decided_sweep(
    rng: np.random.Generator, shift: float, cap: int, own: float, tails: str
) -> list[tuple[str, int]]:
    """A 12-point sweep looked at after every round: each point's verdict and rounds."""
    tests = [
        sequential_test(
            *paired_arms(rng, shift, cap, own, tails), POINTS, "higher", TOLERANCE.default
        )
        for _ in range(POINTS)
    ]
    return [(t.word, t.n) for t in tests]


def _fixed_power(rng: np.random.Generator, shift: float, rounds: int, own: float, trials: int):
    called = 0
    for _ in range(trials):
        tests = [
            paired_ratio_test(*paired_arms(rng, shift, rounds, own), tolerance=TOLERANCE.default)
            for _ in range(POINTS)
        ]
        called += sum(v.word == "faster" for v in judge(tests, "higher"))
    return called / (trials * POINTS)


def _fixed_rounds(
    rng: np.random.Generator, shift: float, power: float, own: float, cap: int, trials: int
) -> str:
    """The fewest rounds at which the fixed design calls at least ``power`` of the
    points (bisection: its power grows with the rounds)."""
    if _fixed_power(rng, shift, cap, own, trials) < power:
        return f">{cap}"
    low, high = 2, cap
    while low < high:
        middle = (low + high) // 2
        if _fixed_power(rng, shift, middle, own, trials) >= power:
            high = middle
        else:
            low = middle + 1
    return str(low)


def sequential(trials: int, quick: bool) -> None:
    rng = np.random.default_rng(20261127)
    cases = [
        ("A/A", 0.0, OWN_NOISE, "normal", 60),
        ("A/A, heavy tails", 0.0, OWN_NOISE, "heavy", 60),
        ("+1%, at the band's edge", 0.01, OWN_NOISE, "normal", 60),
        ("+5%", 0.05, OWN_NOISE, "normal", 60),
        ("+5%, heavy tails", 0.05, OWN_NOISE, "heavy", 60),
        ("+5%, own noise 5%", 0.05, 0.05, "normal", 200),
        ("2x", 1.0, OWN_NOISE, "normal", 60),
    ]
    print(
        f"\nlooked at after every round (--until decided): {trials} comparisons of "
        f"{POINTS} points each, up to a cap of rounds; noise {ROUND_NOISE:.0%} per round "
        "shared, the own noise per sample as named"
    )
    print(
        f"{'case':<26} {'own':>4} {'cap':>4} {'any call':>9} {'called':>7} {'same':>6} "
        f"{'undecided':>10} {'rounds':>7} {'fewest':>7} {'fixed design':>13}"
    )
    for name, shift, own, tails, cap in cases:
        sweeps = [_decided_sweep(rng, shift, cap, own, tails) for _ in range(trials)]
        words = [w for sweep in sweeps for w, _ in sweep]
        rounds = [n for sweep in sweeps for _, n in sweep]
        any_call = np.mean([any(w in ("faster", "slower") for w, _ in sw) for sw in sweeps])
        called = words.count("faster") / len(words)
        fixed = "-"
        if shift > TOLERANCE.default and called > 0:
            fixed = _fixed_rounds(rng, shift, called, own, cap, 20 if quick else 200)
        print(
            f"{name:<26} {own:>4.0%} {cap:>4} {any_call:>9.3f} "
            f"{called if shift else float('nan'):>7.2f} {words.count('same') / len(words):>6.2f} "
            f"{words.count('undecided') / len(words):>10.2f} {np.median(rounds):>7.0f} "
            f"{fewest_rounds(POINTS):>7} {fixed:>13}"
        )
    differences = [d for d in DIFFERENCES if d]
    print(
        f"\nthe plan (zmqbench plan): rounds until decided at ±{TOLERANCE.default:.0%}, "
        f"{POINTS} points, by how much a round's ratio varies"
    )
    print(f"{'noise':>6} " + " ".join(f"{'+' + format(d, '.0%'):>7}" for d in differences))
    for noise in (0.01, 0.02, 0.03, 0.05, 0.10):
        needed = plan(noise, TOLERANCE.default, POINTS, differences)
        print(f"{noise:>6.0%} " + " ".join(f"{'never' if r is None else r:>7}" for _, r in needed))


def decided_real(times: int, quick: bool) -> None:
    options = {"min_time": 0.01 if quick else 0.1, "warmup": 1, "transport": "tcp"}
    print(f"\nreal sockets, taken until decided (tcp), {times} run(s) each")
    rounds, words = [], []
    for _ in range(times):
        r = run_throughput(
            size=["1M"], copy=[True, False], until="decided", max_time=120, **options
        )
        (row,) = r.versus("copy", True, False).to_dict("records")
        rounds.append(row["n"])
        words.append(row["verdict"])
    print(
        f"zero-copy vs copy at 1 MB: {', '.join(words)}; rounds {', '.join(map(str, rounds))} "
        f"(median {np.median(rounds):.0f}; the fewest one point can take: {fewest_rounds(1)})"
    )
    calls, undecided, spent = 0, 0, []
    for _ in range(times):
        r = run_throughput(
            size=["1k"], copy_threshold=[65536, 65537], until="decided",
            max_time=3 if quick else 60, **options,
        )  # fmt: skip
        (row,) = r.versus("copy_threshold", 65536, 65537).to_dict("records")
        calls += row["verdict"] in ("faster", "slower")
        undecided += row["verdict"] == "inconclusive"
        spent.append(row["n"])
    print(
        f"A/A at 1 kB (two copy thresholds): {calls} of {times} called, {undecided} undecided "
        f"when the time was spent, the rest same; rounds {', '.join(map(str, spent))}"
    )


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
    parser.add_argument(
        "--decided-trials", type=int, default=1000, help="comparisons per sequential case"
    )
    parser.add_argument("--times", type=int, default=20, help="real A/A comparisons")
    args = parser.parse_args()
    with report("verdicts", quick=args.quick):
        print(f"tolerance ±{TOLERANCE.default:.0%}")
        synthetic(5 if args.quick else args.trials)
        drifting(5 if args.quick else args.trials)
        sequential(5 if args.quick else args.decided_trials, args.quick)
        real(1 if args.quick else args.times, args.quick)
        decided_real(1 if args.quick else args.times, args.quick)


if __name__ == "__main__":
    main()

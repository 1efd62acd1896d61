"""Load, Python loop beside native loop: where each one's pacing runs out.

One run of ``run_latency`` over offered rates (tcp, 64 B), both loops sampled in
interleaved rounds on fresh far ends. Per rate and loop: the rate achieved (and whether
it was held), the median p50 and p99 round trip from the intended send time, the
sender's p99 lateness, and each end's CPU per message; then the Python/native ratio
of the medians, each loop's knee, and the most each loop answered.

Then one run of ``run_throughput`` over offered rates (``--rate``, tcp, 100 B, a PUSH
to a PULL), both loops in interleaved rounds: per rate and loop, the medians of the
rate each sender achieved (whether it held 95% of the offer), the delivered rate, the
share of its time blocked in a full queue, and what was lost (a PUSH loses nothing).

No other tool measures ZeroMQ at a fixed offered rate, so there is no outside
reference here; bench_zmq.py compares the closed-loop round trip with libzmq's own.

    python bench/bench_load.py             # ~1 min on 2 cores
    python bench/bench_load.py --quick     # checks the script, not the figures
"""

from __future__ import annotations

import argparse
from typing import Any

import pandas as pd
from report import report

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params import RATE
from zmqbench_magic.params.pressure import held
from zmqbench_magic.results.statistics.knee import load_knees

RATES = ["1k", "10k", "50k", "100k", "200k", "500k", "1M"]
THROUGHPUT_RATES = ["10k", "100k", "500k", "1M", "2M"]
COLUMNS = [
    "achieved_per_s",
    "p50_us",
    "p99_us",
    "send_lag_p99_us",
    "send_cpu_us_per_msg",
    "recv_cpu_us_per_msg",
    "held",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="two rates, one short round")
    args = parser.parse_args()
    rates, rounds, min_time = (["1k", "20k"], 1, 0.02) if args.quick else (RATES, args.rounds, 0.1)
    result = run_latency(
        size=64, rate=rates, loop=["python", "native"], repeat=rounds, min_time=min_time, warmup=1
    )
    summary = _by_rate_and_loop(result)
    print(
        f"tcp 64 B, {rounds} round(s); percentiles over every round trip, the rest medians "
        "of samples; latency from intended send (µs)"
    )
    print(
        f"{'offered':>8} {'loop':<7} {'achieved':>10} {'held':>5} {'p50':>9} {'p99':>9} "
        f"{'lag p99':>9} {'send CPU':>9} {'echo CPU':>9}"
    )
    for (rate, loop), row in summary[COLUMNS].iterrows():
        print(
            f"{RATE.label(rate):>8} {loop:<7} {row['achieved_per_s']:>10,.0f} "
            f"{'yes' if row['held'] else 'NO':>5} {row['p50_us']:>9,.1f} {row['p99_us']:>9,.1f} "
            f"{row['send_lag_p99_us']:>9,.1f} {row['send_cpu_us_per_msg']:>9.2f} "
            f"{row['recv_cpu_us_per_msg']:>9.2f}"
        )
    print("\nPython / native, median p50 round trip (above 1: Python slower)")
    for rate in summary.index.get_level_values("rate").unique():
        ratio = summary.loc[(rate, "python"), "p50_us"] / summary.loc[(rate, "native"), "p50_us"]
        print(f"{RATE.label(rate):>8}: {ratio:.2f}")
    print("\nknees (the lowest rate not held, or with a median over twice the best below)")
    for row in load_knees(result.df).to_dict("records"):
        knee = (
            "none up to the highest rate"
            if row["knee_per_s"] != row["knee_per_s"]
            else (f"{RATE.label(row['knee_per_s'])} msgs/s ({row['knee_reason']})")
        )
        print(f"{row['loop']:>8}: knee {knee}")
    most = result.summary().groupby("loop")["achieved_per_s"].max()
    print(
        f"\nanswered at most: python {most['python']:,.0f} msgs/s, native "
        f"{most['native']:,.0f} msgs/s (native / python {most['native'] / most['python']:.2f})"
    )
    for warning in result.warnings:
        if "not held" in warning:
            print(f"note: {warning}")
    _paced_sends(THROUGHPUT_RATES[:2] if args.quick else THROUGHPUT_RATES, rounds, min_time)


def _by_rate_and_loop(result: Any) -> pd.DataFrame:
    """A result's summary, a row per rate and loop, the rates in order."""
    by = result.summary().set_index(["rate", "loop"])
    return by.sort_index(level="rate", sort_remaining=False)


def _paced_sends(rates: list[str], rounds: int, min_time: float) -> None:
    """Each loop's paced sender offered ``rates`` (``%zmqthr --rate``)."""
    result = run_throughput(
        size=100, rate=rates, loop=["python", "native"], repeat=rounds, min_time=min_time, warmup=1
    )
    summary = _by_rate_and_loop(result)
    print(
        f"\nthroughput at an offered rate: tcp 100 B, a PUSH to a PULL, {rounds} round(s); "
        "medians of samples (msgs/s)"
    )
    print(
        f"{'offered':>8} {'loop':<7} {'sent':>11} {'held':>5} {'delivered':>11} "
        f"{'blocked':>8} {'lost':>6}"
    )
    for (rate, loop), row in summary.iterrows():
        print(
            f"{RATE.label(rate):>8} {loop:<7} {row['sent_per_s']:>11,.0f} "
            f"{'yes' if held(row['sent_per_s'], rate) else 'NO':>5} {row['msgs_per_s']:>11,.0f} "
            f"{row['blocked_share']:>8.0%} {row['lost']:>6,.0f}"
        )
    most = result.summary().groupby("loop")["sent_per_s"].max()
    print(
        f"sent at most: python {most['python']:,.0f} msgs/s, native {most['native']:,.0f} msgs/s "
        f"(native / python {most['native'] / most['python']:.2f})"
    )


if __name__ == "__main__":
    with report("load"):
        main()

"""Result frames for the chart layout tests, over sweeps of 1, 2 and 7 values.

The ZeroMQ frames are real measurements (inproc and tcp, a few hundred messages a
sample): layout needs real shapes, not fast sockets. The flood frames are built from
the flood's declared columns with made-up times: a cluster per sweep would cost
minutes and the layout does not depend on the numbers; the cluster tests check the
charts of real floods.
"""

from __future__ import annotations

import itertools
import random

import pandas as pd

from zmqbench_magic.sockets.measure import run_latency, run_throughput

SIZES = {1: [64], 2: [1, 1024 * 1024], 7: [1, 16, 256, 1024, 16384, 65536, 1024 * 1024]}
QUICK = {"count": 200, "repeat": 3, "warmup": 0}
RATES = {1: ["5k"], 2: ["1k", "20k"], 7: ["1k", "2k", "5k", "10k", "20k", "50k", "100k"]}


def zmq_result(
    benchmark: str, values: int, transports=("inproc",), copies=(True,), loops=("python",)
):
    run = run_throughput if benchmark == "thr" else run_latency
    return run(
        size=SIZES[values], transport=list(transports), copy=list(copies), loop=list(loops), **QUICK
    )


def load_result(values: int, loops=("python",)):
    """Latency under load over ``values`` offered rates (tcp, 64 B)."""
    return run_latency(size=64, rate=RATES[values], transport="tcp", loop=list(loops), **QUICK)


def flood_frame(test: str, values: int, engines=(2,)) -> pd.DataFrame:
    """Rows shaped like a flood's (one per sample), with made-up times."""
    rng = random.Random(values)
    sweep = {
        "flood": ("tasks", [1, 10, 100, 1000, 2000, 5000, 10000][:values] if values > 1 else [16]),
        "echo": ("size", SIZES[values]),
        "map": (
            "duration",
            [0, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2][:values] if values > 1 else [0.01],
        ),
    }[test]
    rows = []
    for value, engine_count, sample in itertools.product(sweep[1], engines, range(3)):
        row = {
            "test": test,
            "tasks": 16,
            "engines": engine_count,
            "view": "lb",
            "scheme": "leastload",
            "size": 8,
            "duration": 0.0,
            sweep[0]: value,
            "sample": sample,
            "benchmark": "flood",
        }
        roundtrip = 0.01 + row["tasks"] * 0.004 * rng.uniform(0.9, 1.1)
        row |= {
            "sent_s": roundtrip / 3,
            "roundtrip_s": roundtrip,
            "tasks_per_s": row["tasks"] / roundtrip,
            "mbit_per_s": 2 * row["size"] * 8 * row["tasks"] / roundtrip / 1e6,
            "efficiency": min(1.0, row["duration"] * 100 + rng.uniform(0.05, 0.1)),
        }
        rows.append(row)
    return pd.DataFrame(rows)

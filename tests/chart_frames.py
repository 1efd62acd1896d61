"""Result frames for the chart layout tests, over sweeps of 1, 2 and 7 values, and
one chart of each kind the project makes drawn from them (:func:`chart_of`).

The ZeroMQ frames are real measurements (inproc and tcp, a few hundred messages a
sample, far ends in threads): layout needs real shapes, not fast sockets. The flood
frames are built from the flood's declared columns with made-up times: a cluster per
sweep would cost minutes and the layout does not depend on the numbers; the cluster
tests check the charts of real floods.
"""

from __future__ import annotations

import functools
import itertools
import random

import altair as alt
import pandas as pd

from zmqbench_magic.charts import (
    bandwidth_chart,
    chart_to_svg,
    comparison_chart,
    cpu_chart,
    default_chart,
    echo_chart,
    engines_chart,
    flood_chart,
    latency_cdf_chart,
    latency_chart,
    load_chart,
    map_chart,
    memory_chart,
    speedup_chart,
    tax_chart,
    throughput_chart,
)
from zmqbench_magic.sockets.kernel.measure import run_latency, run_throughput

SIZES = {1: [64], 2: [1, 1024 * 1024], 7: [1, 16, 256, 1024, 16384, 65536, 1024 * 1024]}
# Far ends as threads of this process (for tcp too): the same sockets and shapes,
# without a far end's process started every round.
QUICK = {"count": 200, "repeat": 3, "warmup": 0, "peer": "thread"}
RATES = {1: ["5k"], 2: ["1k", "20k"], 7: ["1k", "2k", "5k", "10k", "20k", "50k", "100k"]}


def zmq_result(
    benchmark: str, values: int, transports=("inproc",), copies=(True,), loops=("python",)
):
    run = run_throughput if benchmark == "thr" else run_latency
    return run(
        size=SIZES[values], transport=list(transports), copy=list(copies), loop=list(loops), **QUICK
    )


PEERS = {1: [2], 2: [1, 4], 7: [1, 2, 3, 4, 6, 8, 16]}


@functools.cache
def patterns_result(values: int):
    """Two patterns over ``values`` numbers of peers (inproc, far ends in threads)."""
    return run_throughput(
        pattern=["pubsub", "fanin"], peers=PEERS[values], size=[100], transport="inproc", **QUICK
    )


PRESSURE_RATES = {
    1: [20_000],
    2: [2000, 20_000],
    7: [500, 1000, 2000, 5000, 10_000, 20_000, 50_000],
}


@functools.cache
def pressure_result(values: int):
    """A PUB and a PUSH over ``values`` offered rates, receivers that work 1 ms a
    message or none (tcp, 64 kB, queues of 10: real drops and waits)."""
    return run_throughput(
        pattern=["pubsub", "pipeline"],
        rate=PRESSURE_RATES[values],
        work=[0, "1ms"],
        hwm=10,
        size="64k",
        count=100,
        repeat=1,
        warmup=0,
    )


CLIENTS = {1: [2], 2: [1, 4], 7: [1, 2, 3, 4, 6, 8, 16]}


@functools.cache
def clients_result(values: int):
    """Latency with ``values`` numbers of clients on one server (inproc, threads)."""
    return run_latency(clients=CLIENTS[values], size=[100], transport="inproc", **QUICK)


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
            "client_peak_mb": 150 + row["tasks"] * 0.02 * rng.uniform(0.9, 1.1),
            "controller_peak_mb": 400 + row["tasks"] * 0.005 * rng.uniform(0.9, 1.1),
            "engines_peak_mb": 110 * engine_count * rng.uniform(0.99, 1.01),
        }
        rows.append(row)
    return pd.DataFrame(rows)


SWEEPS = (1, 2, 7)


@functools.cache
def thr_result(values: int, transports: tuple[str, ...] = ("inproc",)):
    return zmq_result("thr", values, transports=transports, copies=(True, False))


@functools.cache
def lat_result(values: int):
    return zmq_result("lat", values, transports=("inproc", "tcp"))


@functools.cache
def _loops(benchmark: str, values: int):
    """Both loops, so the Python tax has pairs."""
    return zmq_result(
        benchmark,
        values,
        transports=("inproc", "tcp"),
        copies=(True, False),
        loops=("python", "native"),
    )


@functools.cache
def _load(values: int, loops: tuple[str, ...] = ("python",)):
    return load_result(values, loops)


def chart_of(kind: str, values: int) -> alt.TopLevelMixin:
    """One chart of each kind the project makes, drawn from a sweep of ``values``."""
    makers = {
        "throughput": lambda: throughput_chart(thr_result(values).df),
        "throughput by transport": lambda: throughput_chart(
            thr_result(values, ("inproc", "ipc", "tcp")).df
        ),
        "bandwidth": lambda: bandwidth_chart(thr_result(values).df),
        "cpu": lambda: cpu_chart(thr_result(values).df),
        "cpu latency": lambda: cpu_chart(lat_result(values).df),
        "tax": lambda: tax_chart(_loops("thr", values).df),
        "tax latency": lambda: tax_chart(_loops("lat", values).df),
        "thr both loops": lambda: default_chart("thr", _loops("thr", values).df),
        "speedup": lambda: speedup_chart(thr_result(values).df),
        "thr default": lambda: default_chart("thr", thr_result(values).df),
        "latency": lambda: latency_chart(lat_result(values).df),
        "cdf": lambda: latency_cdf_chart(lat_result(values).distributions),
        "lat default": lambda: default_chart(
            "lat", lat_result(values).df, lat_result(values).distributions
        ),
        "load": lambda: load_chart(_load(values).df),
        "load both loops": lambda: default_chart("lat", _load(values, ("python", "native")).df),
        "flood": lambda: flood_chart(flood_frame("flood", values)),
        "engines": lambda: engines_chart(flood_frame("flood", 2, engines=range(1, values + 1))),
        "flood default": lambda: default_chart("flood", flood_frame("flood", values, (1, 2))),
        "echo": lambda: echo_chart(flood_frame("echo", values)),
        "map": lambda: map_chart(flood_frame("map", values)),
        "memory": lambda: memory_chart(flood_frame("flood", values)),
        "comparison": lambda: comparison_chart(thr_result(values).compare(thr_result(values))),
        "patterns": lambda: default_chart("thr", patterns_result(values).df),
        "clients": lambda: default_chart(
            "lat", clients_result(values).df, clients_result(values).distributions
        ),
        "pressure": lambda: default_chart("thr", pressure_result(values).df),
    }
    return makers[kind]()


@functools.cache
def svg_of(kind: str, values: int) -> str:
    """:func:`chart_of`'s chart as the SVG every viewer gets, drawn once per process:
    the layout tests and the browser's test of the same charts (one group, one process)
    read the same picture, and each of the 75 takes vl-convert a tenth of a second."""
    return chart_to_svg(chart_of(kind, values))


CHART_KINDS = [
    "throughput",
    "throughput by transport",
    "bandwidth",
    "cpu",
    "cpu latency",
    "tax",
    "tax latency",
    "thr both loops",
    "speedup",
    "thr default",
    "latency",
    "cdf",
    "lat default",
    "load",
    "load both loops",
    "flood",
    "engines",
    "flood default",
    "echo",
    "map",
    "memory",
    "comparison",
    "patterns",
    "clients",
    "pressure",
]
CASES = [(kind, values) for kind in CHART_KINDS for values in SWEEPS]

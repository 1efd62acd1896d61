"""Every benchmark parameter and metric, declared once; the base of every layer.

What lives here: the :class:`Param` machinery (:mod:`.declare`), units
(:mod:`.units`), and the declarations of each benchmark: the ZeroMQ ones
(:mod:`.sockets`, with :mod:`.memory` and :mod:`.far_end`), the ipyparallel one
(:mod:`.taskflood`) and those they share (:mod:`.common`). It may import pyzmq and
nothing else of this project, so every other layer can import it: the magics'
options, the panels' controls, the DataFrame's columns and the charts' axes all read
the same declarations.
"""

from __future__ import annotations

from .common import (
    CPU,
    FAIL_ON,
    HISTORY_ORDER,
    LABEL,
    MAX_TIME,
    MIN_TIME,
    PRECISION,
    REPEAT,
    SEED,
    SIZE,
    TIMEOUT,
    TOLERANCE,
    WARMUP,
)
from .declare import BenchParams, Metric, Param, RunParams
from .far_end import CURVE, REMOTE, SECRET_FILE
from .kinds import Kind
from .memory import (
    QUEUE_BYTES,
    available_memory,
    check_memory,
    high_water_mark,
    memory_needed,
)
from .sockets import (
    ADDRESS,
    COPY,
    COPY_THRESHOLD,
    COUNT,
    DRIVER,
    HELD_FRACTION,
    IDLE,
    LAT_METRICS,
    LAT_POOLED,
    LATENCY,
    LOOP,
    PEER,
    PYTHON,
    RATE,
    RTT,
    THR_METRICS,
    THROUGHPUT,
    TRANSPORT,
    TRANSPORTS,
    LatencyParams,
    ThroughputParams,
    ZmqParams,
    resolve_peer,
)
from .taskflood import DURATION, FLOOD, FLOOD_METRICS, FloodParams

METRICS = {m.name: m for m in THR_METRICS + LAT_METRICS + LAT_POOLED + FLOOD_METRICS}

# Every benchmark kind, by name: the one place a kind is registered.
KINDS: dict[str, Kind] = {kind.name: kind for kind in (THROUGHPUT, LATENCY, FLOOD)}
# Each kind's settings, by name.
BENCHMARKS: dict[str, type[BenchParams]] = {name: kind.params for name, kind in KINDS.items()}

# Every parameter by its name (a name means one thing in every benchmark).
PARAMS = {p.name: p for cls in BENCHMARKS.values() for p in cls.fields()}

COLUMN_TITLES = {name: p.axis_title for name, p in PARAMS.items()} | {
    m.name: m.axis_title for m in METRICS.values()
}

__all__ = [
    "ADDRESS",
    "BENCHMARKS",
    "COLUMN_TITLES",
    "COPY",
    "COPY_THRESHOLD",
    "COUNT",
    "CPU",
    "CURVE",
    "DRIVER",
    "DURATION",
    "FAIL_ON",
    "FLOOD",
    "FLOOD_METRICS",
    "HELD_FRACTION",
    "HISTORY_ORDER",
    "IDLE",
    "KINDS",
    "LABEL",
    "LATENCY",
    "LAT_METRICS",
    "LAT_POOLED",
    "LOOP",
    "MAX_TIME",
    "METRICS",
    "MIN_TIME",
    "PARAMS",
    "PEER",
    "PRECISION",
    "PYTHON",
    "QUEUE_BYTES",
    "RATE",
    "REMOTE",
    "REPEAT",
    "RTT",
    "SECRET_FILE",
    "SEED",
    "SIZE",
    "THROUGHPUT",
    "THR_METRICS",
    "TIMEOUT",
    "TOLERANCE",
    "TRANSPORT",
    "TRANSPORTS",
    "WARMUP",
    "BenchParams",
    "FloodParams",
    "Kind",
    "LatencyParams",
    "Metric",
    "Param",
    "RunParams",
    "ThroughputParams",
    "ZmqParams",
    "available_memory",
    "check_memory",
    "high_water_mark",
    "memory_needed",
    "resolve_peer",
]

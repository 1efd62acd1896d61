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

from collections.abc import Mapping

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
    UNTIL,
    WARMUP,
)
from .declare import BenchParams, Metric, Param, RunParams
from .far_end import CURVE, REMOTE, SECRET_FILE
from .kinds import KINDS, Derived, Kind, KindModule, register, unregister
from .memory import (
    HWM,
    QUEUE_BYTES,
    available_memory,
    check_memory,
    high_water_mark,
    memory_needed,
)
from .patterns import (
    CLIENTS,
    MANDATORY,
    NODROP,
    PATTERN,
    PATTERNS,
    PEERS,
    PUBLISHERS,
    SEQUENCE,
)
from .pressure import HELD_FRACTION, IDLE, RATE, SLOW_PEERS, WORK
from .socket_point import (
    COPY,
    COPY_THRESHOLD,
    IO_THREADS,
    LOOP,
    PEER,
    PYTHON,
    TRANSPORT,
    TRANSPORTS,
    SocketPoint,
    resolve_peer,
)
from .sockets import (
    ADDRESS,
    COUNT,
    DRIVER,
    LATENCY,
    THROUGHPUT,
    LatencyParams,
    ThroughputParams,
    ZmqParams,
)
from .taskflood import DURATION, FLOOD, FLOOD_METRICS, FloodParams
from .zmq_metrics import LAT_METRICS, LAT_POOLED, RTT, THR_METRICS

# Each table below is derived from the registered kinds' declarations when read
# (a kind is registered by :mod:`zmqbench_magic.kinds`, or by a test for a while).

# Every metric by its name: each kind's samples' metrics and its pooled ones.
METRICS: Mapping[str, Metric] = Derived(
    lambda: {m.name: m for kind in KINDS.values() for m in kind.metrics + kind.pooled_metrics}
)
# Each kind's settings, by name.
BENCHMARKS: Mapping[str, type[BenchParams]] = Derived(
    lambda: {name: kind.params for name, kind in KINDS.items()}
)
# Every parameter by its name (a name means one thing in every benchmark).
PARAMS: Mapping[str, Param] = Derived(
    lambda: {p.name: p for kind in KINDS.values() for p in kind.params.fields()}
)
# A column's axis title: a parameter's or a metric's.
COLUMN_TITLES: Mapping[str, str] = Derived(
    lambda: (
        {name: p.axis_title for name, p in PARAMS.items()}
        | {m.name: m.axis_title for m in METRICS.values()}
    )
)

__all__ = [
    "ADDRESS",
    "BENCHMARKS",
    "CLIENTS",
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
    "HWM",
    "IDLE",
    "IO_THREADS",
    "KINDS",
    "LABEL",
    "LATENCY",
    "LAT_METRICS",
    "LAT_POOLED",
    "LOOP",
    "MANDATORY",
    "MAX_TIME",
    "METRICS",
    "MIN_TIME",
    "NODROP",
    "PARAMS",
    "PATTERN",
    "PATTERNS",
    "PEER",
    "PEERS",
    "PRECISION",
    "PUBLISHERS",
    "PYTHON",
    "QUEUE_BYTES",
    "RATE",
    "REMOTE",
    "REPEAT",
    "RTT",
    "SECRET_FILE",
    "SEED",
    "SEQUENCE",
    "SIZE",
    "SLOW_PEERS",
    "THROUGHPUT",
    "THR_METRICS",
    "TIMEOUT",
    "TOLERANCE",
    "TRANSPORT",
    "TRANSPORTS",
    "UNTIL",
    "WARMUP",
    "WORK",
    "BenchParams",
    "FloodParams",
    "Kind",
    "KindModule",
    "LatencyParams",
    "Metric",
    "Param",
    "RunParams",
    "SocketPoint",
    "ThroughputParams",
    "ZmqParams",
    "available_memory",
    "check_memory",
    "high_water_mark",
    "memory_needed",
    "register",
    "resolve_peer",
    "unregister",
]

"""Every benchmark parameter and metric, declared once.

A :class:`Param` carries a parameter's name, default, unit, allowed range and
help text. The magics' options, the CLI's options, the DataFrame's columns and the
charts' axis titles are all derived from these declarations, and validation lives
here too, so a bad value is rejected with the same message everywhere.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import zmq

from .units import (
    GiB,
    KiB,
    MiB,
    format_duration,
    format_size,
    parse_bool,
    parse_duration,
    parse_size,
    spell_size,
)


@dataclass(frozen=True)
class Param:
    """One benchmark parameter: the single source of its name, default, unit and range.

    ``sweep`` parameters take a list of values and the benchmark runs the grid
    product of all of them; the others take exactly one value.
    """

    name: str
    default: Any
    help: str
    title: str
    kind: str  # "size" | "int" | "float" | "bool" | "choice" | "str"
    unit: str = ""
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] = ()
    sweep: bool = False
    short: str | None = None
    labels: tuple[str, ...] = ()  # words for the choices, in order, where a bare value is unclear

    def label(self, value: Any) -> str:
        """A value as people read it: ``zero-copy`` for ``copy=False``, ``64k`` for a size."""
        if self.labels:
            return self.labels[self.choices.index(value)]
        if self.kind == "size":
            return format_size(int(value))
        if self.kind == "duration":
            return format_duration(value) if value else "0"
        return _spell(value)

    @property
    def option(self) -> str:
        """The long command-line option, e.g. ``--min-time``."""
        return "--" + self.name.replace("_", "-")

    def allowed(self) -> str:
        """The allowed values, in words, for error messages and help."""
        if self.choices:
            return "one of " + ", ".join(_spell(c) for c in self.choices)
        low = self._spell_bound(self.low)
        high = self._spell_bound(self.high)
        if self.low is not None and self.high is not None:
            return f"from {low} to {high}"
        if self.low is not None:
            return f"at least {low}"
        if self.high is not None:
            return f"at most {high}"
        return "any value"

    def _spell_bound(self, bound: float | None) -> str:
        if bound is None:
            return ""
        if self.kind == "size":
            return spell_size(int(bound))
        return f"{_spell(bound)}{(' ' + self.unit) if self.unit else ''}"

    def parse(self, text: Any) -> Any:
        """Convert text (or an already-typed value) and check it is allowed."""
        try:
            value = _PARSERS[self.kind](text)
        except (TypeError, ValueError) as exc:
            msg = f"{self.name}: {exc}; allowed: {self.allowed()}"
            raise ValueError(msg) from None
        return self.check(value)

    def check(self, value: Any) -> Any:
        """Raise ``ValueError`` naming the parameter, the value and the allowed range."""
        bad = (
            (self.choices and value not in self.choices)
            or (self.low is not None and value < self.low)
            or (self.high is not None and value > self.high)
        )
        if bad:
            got = spell_size(value) if self.kind == "size" else _spell(value)
            msg = f"{self.name} must be {self.allowed()}, got {got}"
            raise ValueError(msg)
        return value


@dataclass(frozen=True)
class Metric:
    """A measured quantity: the DataFrame column (unit in the name) and its axis title."""

    name: str
    title: str
    help: str


def _spell(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _parse_choice(text: Any) -> str:
    return str(text).strip().lower()


_PARSERS: dict[str, Callable[[Any], Any]] = {
    "size": parse_size,
    "duration": parse_duration,
    "int": int,
    "float": float,
    "bool": parse_bool,
    "choice": _parse_choice,
    "str": str,
}

TRANSPORTS = ("tcp", "ipc", "inproc")

# ZeroMQ queues up to a high-water mark of messages on each side; with the default
# of 1000 and 64 MB messages that would be 64 GB. The benchmarks bound each queue
# to this many bytes instead (1000 messages up to 128 kB, as libzmq's default).
QUEUE_BYTES = 128 * MiB


def high_water_mark(size: int) -> int:
    """Messages queued per side for messages of ``size`` bytes."""
    return max(2, min(1000, QUEUE_BYTES // max(size, 1)))


def memory_needed(size: int) -> int:
    """Bytes a point of this size may hold at once: both queues, the payload and the
    received copy, and the bytes in flight in kernel buffers."""
    return size * (2 * high_water_mark(size) + 4)


def check_memory(size: int) -> None:
    """Refuse a message size whose queues and copies would not fit in memory."""
    free = available_memory()
    if free is not None and memory_needed(size) > free:
        msg = (
            f"size {spell_size(size)} needs about {memory_needed(size) // MiB} MiB "
            f"of memory for its queues and copies, but only {free // MiB} MiB is "
            "available; choose a smaller size"
        )
        raise ValueError(msg)


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo, or None where that is not known."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * KiB
    except OSError:
        return None
    return None


# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
SIZE = Param(
    "size", 1 * KiB, "message size; k and M are powers of 1024 (100, 1k, 64k, 1M)",
    "message size (B)", "size", unit="B", low=1, high=1 * GiB, sweep=True, short="s",
)
COPY = Param(
    "copy", True, "send and receive with copy=True (true) or zero-copy copy=False (false)",
    "copy", "bool", choices=(True, False), sweep=True, labels=("copy", "zero-copy"),
)
TRANSPORT = Param(
    "transport", "tcp", "ZeroMQ transport: tcp (127.0.0.1), ipc (private temp dir), inproc",
    "transport", "choice", choices=TRANSPORTS, sweep=True, short="t",
)
PEER = Param(
    "peer", "auto",
    "where the far end runs: process (a separate Python process, so the kernel's GIL "
    "does not distort the figure), thread (both ends in this process), or auto "
    "(process for tcp/ipc, thread for inproc, which requires it)",
    "far end", "choice", choices=("auto", "process", "thread"), sweep=True,
)
COPY_THRESHOLD = Param(
    "copy_threshold", zmq.COPY_THRESHOLD,
    "pyzmq's Socket.copy_threshold: zero-copy sends of messages smaller than this are "
    "copied anyway (pyzmq's default is zmq.COPY_THRESHOLD)",
    "copy threshold (B)", "size", unit="B", low=0, high=1 * GiB, sweep=True,
)
COUNT = Param(
    "count", 0, "messages (round trips) per sample; 0 calibrates so a sample lasts min-time",
    "messages per sample", "int", low=0, high=10**9, short="n",
)
REPEAT = Param(
    "repeat", 5, "samples kept per point (after warm-up)",
    "samples", "int", low=1, high=1000, short="r",
)
WARMUP = Param(
    "warmup", 1, "samples run and discarded before the kept ones (after calibration)",
    "warm-up samples", "int", low=0, high=100,
)
MIN_TIME = Param(
    "min_time", 0.2, "calibrated samples last at least this long",
    "minimum sample time (s)", "float", unit="s", low=0.001, high=60.0,
)
TIMEOUT = Param(
    "timeout", 10.0, "longest wait for any one receive, send, start or stop before giving up",
    "timeout (s)", "float", unit="s", low=0.1, high=3600.0,
)
ADDRESS = Param(
    "address", "127.0.0.1",
    "tcp interface to bind, optionally with a port (127.0.0.1, 127.0.0.1:5555); "
    "a free port is chosen when none is given",
    "tcp address", "str",
)

TEST = Param(
    "test", "flood",
    "flood: tiny tasks (an echo of an empty string) as fast as possible; echo: numpy "
    "arrays of --size bytes there and back; map: map_async of time.sleep over --duration",
    "test", "choice", choices=("flood", "echo", "map"),
)
TASKS = Param(
    "tasks", 256, "tasks submitted per sample",
    "tasks", "int", low=1, high=10**6, sweep=True, short="n",
)
ENGINES = Param(
    "engines", 2, "engines to run on: a started cluster is grown or shrunk to this count",
    "engines", "int", low=1, high=4 * (os.cpu_count() or 1), sweep=True, short="e",
)
VIEW = Param(
    "view", "lb",
    "lb: a load-balanced view through the task scheduler; direct: each engine's own "
    "queue, tasks dealt round-robin",
    "view", "choice", choices=("lb", "direct"), sweep=True,
)
SCHEME = Param(
    "scheme", "leastload",
    "task scheduler scheme of a cluster the project starts (another scheme needs a new "
    "controller, so the cluster is restarted)",
    "scheduler scheme", "choice",
    choices=("leastload", "pure", "lru", "plainrandom", "twobin", "weighted"), sweep=True,
)
DURATION = Param(
    "duration", 0.0, "how long each map task sleeps (0, 1ms, 10ms, 0.1)",
    "task duration (s)", "duration", unit="s", low=0.0, high=3600.0, sweep=True,
)
PROFILE = Param(
    "profile", "", "use the running cluster of this IPython profile instead of starting one",
    "profile", "str",
)
CLUSTER_ID = Param(
    "cluster_id", "", "use the running cluster with this id (in --profile, or the default)",
    "cluster id", "str",
)
URL_FILE = Param(
    "url_file", "", "use the running cluster whose client connection file this is",
    "url file", "str",
)
# Task floods are slower than ZeroMQ samples: fewer kept samples, a longer wait.
FLOOD_REPEAT = dataclasses.replace(REPEAT, default=3)
FLOOD_TIMEOUT = dataclasses.replace(
    TIMEOUT, default=60.0,
    help="longest wait for a cluster to start or resize, or for a sample's results",
)

THR_METRICS = (
    Metric("msgs_per_s", "delivered (msgs/s)",
           "messages delivered per second, first to last receive at the receiver"),
    Metric("send_msgs_per_s", "send-only (msgs/s)",
           "messages per second through the sender's send calls alone"),
    Metric("mbit_per_s", "bandwidth (Mbit/s)", "delivered payload megabits (10^6) per second"),
)
LAT_METRICS = (
    Metric("rtt_us", "mean round trip (µs)", "mean round-trip time of the sample"),
    Metric("p50_us", "median round trip (µs)", "50th percentile of the sample's round trips"),
    Metric("p90_us", "p90 round trip (µs)", "90th percentile of the sample's round trips"),
    Metric("p99_us", "p99 round trip (µs)", "99th percentile of the sample's round trips"),
    Metric("max_us", "slowest round trip (µs)", "slowest round trip of the sample"),
)
FLOOD_METRICS = (
    Metric("tasks_per_s", "tasks per second", "tasks completed per second, round trip"),
    Metric("sent_s", "sent (s)", "first submit to the last submit returning"),
    Metric("roundtrip_s", "round trip (s)", "first submit to the last result received"),
    Metric("mbit_per_s", "bandwidth (Mbit/s)",
           "echo: array megabits (10^6) per second, both directions counted"),
    Metric("efficiency", "map efficiency", "map: ideal parallel time / actual time"),
    Metric("task_s", "task run time (s)", "cell form: the task's own mean run time on an engine"),
    Metric("compute_s", "ideal parallel compute (s)",
           "cell form: the tasks' run times summed over engines, divided by the engines"),
    Metric("overhead_s", "overhead (s)", "cell form: round trip minus ideal parallel compute"),
    Metric("overhead_fraction", "overhead fraction", "cell form: overhead / round trip"),
)
# fmt: on
METRICS = {m.name: m for m in THR_METRICS + LAT_METRICS + FLOOD_METRICS}


def _param_field(param: Param) -> Any:
    default = (param.default,) if param.sweep else param.default
    return field(default=default, metadata={"param": param})


@dataclass(frozen=True)
class BenchParams:
    """Common machinery: normalise, validate and expand the sweep grid."""

    def __post_init__(self) -> None:
        for param in self.fields():
            value = getattr(self, param.name)
            object.__setattr__(self, param.name, _validated(param, value))
        self._check_combinations()

    @classmethod
    def fields(cls) -> tuple[Param, ...]:
        return tuple(f.metadata["param"] for f in dataclasses.fields(cls))

    @classmethod
    def sweep_fields(cls) -> tuple[Param, ...]:
        return tuple(p for p in cls.fields() if p.sweep)

    # Swept fields measured outermost first: changing them is the costly part.
    outer: ClassVar[tuple[str, ...]] = ()

    def points(self) -> Iterator[dict[str, Any]]:
        """Each combination of the swept values, in measuring order."""
        names = [p.name for p in self.sweep_fields() if self.applies(p.name)]
        order = sorted(names, key=lambda n: self.outer.index(n) if n in self.outer else 99)
        for combo in itertools.product(*(getattr(self, n) for n in order)):
            point = self.resolve(dict(zip(order, combo, strict=True)))
            yield {n: point[n] for n in names}

    def applies(self, name: str) -> bool:
        """Whether a parameter matters for these settings (echo's size, map's duration)."""
        return True

    def resolve(self, point: dict[str, Any]) -> dict[str, Any]:
        return point

    def scalars(self) -> dict[str, Any]:
        return {p.name: getattr(self, p.name) for p in self.fields() if not p.sweep}

    def settings(self) -> dict[str, Any]:
        """Every field as JSON-friendly values, as stored with a result."""
        swept = {p.name: list(getattr(self, p.name)) for p in self.sweep_fields()}
        return {**self.scalars(), **swept}

    def _check_combinations(self) -> None:
        """Checks across fields, after each field is valid on its own."""


def _validated(param: Param, value: Any) -> Any:
    if not param.sweep:
        return param.parse(value)
    values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
    if not values:
        msg = f"{param.name} needs at least one value; allowed: {param.allowed()}"
        raise ValueError(msg)
    # Keep the user's order (it is the sweep order) but drop repeats.
    return tuple(dict.fromkeys(param.parse(v) for v in values))


def resolve_peer(transport: str, peer: str) -> str:
    """The far end actually used: inproc can only reach a thread of the same process."""
    if peer == "auto":
        return "thread" if transport == "inproc" else "process"
    if transport == "inproc" and peer == "process":
        msg = (
            "peer process cannot be used with transport inproc: inproc only connects "
            "sockets of one process; use peer thread (or auto)"
        )
        raise ValueError(msg)
    return peer


@dataclass(frozen=True)
class ZmqParams(BenchParams):
    """Settings shared by the ZeroMQ benchmarks; list-valued fields are swept."""

    size: tuple[int, ...] = _param_field(SIZE)
    copy: tuple[bool, ...] = _param_field(COPY)
    transport: tuple[str, ...] = _param_field(TRANSPORT)
    peer: tuple[str, ...] = _param_field(PEER)
    copy_threshold: tuple[int, ...] = _param_field(COPY_THRESHOLD)
    count: int = _param_field(COUNT)
    repeat: int = _param_field(REPEAT)
    warmup: int = _param_field(WARMUP)
    min_time: float = _param_field(MIN_TIME)
    timeout: float = _param_field(TIMEOUT)
    address: str = _param_field(ADDRESS)

    # One far end serves every point of a transport and peer.
    outer = ("transport", "peer")

    def resolve(self, point: dict[str, Any]) -> dict[str, Any]:
        return {**point, "peer": resolve_peer(point["transport"], point["peer"])}

    def _check_combinations(self) -> None:
        for transport in self.transport:
            for peer in self.peer:
                resolve_peer(transport, peer)
        self._check_memory()

    def _check_memory(self) -> None:
        check_memory(max(self.size))


@dataclass(frozen=True)
class ThroughputParams(ZmqParams):
    """PUSH/PULL throughput settings.

    >>> ThroughputParams(size=[100, "64k"], copy=[True, False]).size
    (100, 65536)
    """

    benchmark = "thr"
    metrics = THR_METRICS

    def _check_combinations(self) -> None:
        super()._check_combinations()
        if self.count == 1:
            msg = (
                "count must be 0 (calibrate) or at least 2 for throughput: delivery is "
                "timed from the first to the last receive, got 1"
            )
            raise ValueError(msg)


@dataclass(frozen=True)
class LatencyParams(ZmqParams):
    """REQ/REP round-trip latency settings.

    >>> LatencyParams(size="1k", transport=["tcp", "inproc"]).transport
    ('tcp', 'inproc')
    """

    benchmark = "lat"
    metrics = LAT_METRICS


@dataclass(frozen=True)
class FloodParams(BenchParams):
    """ipyparallel task-flood settings; list-valued fields are swept.

    >>> FloodParams(tasks=[16, 256], engines=[1, 2]).tasks
    (16, 256)
    """

    test: str = _param_field(TEST)
    tasks: tuple[int, ...] = _param_field(TASKS)
    engines: tuple[int, ...] = _param_field(ENGINES)
    view: tuple[str, ...] = _param_field(VIEW)
    scheme: tuple[str, ...] = _param_field(SCHEME)
    size: tuple[int, ...] = _param_field(SIZE)
    duration: tuple[float, ...] = _param_field(DURATION)
    repeat: int = _param_field(FLOOD_REPEAT)
    warmup: int = _param_field(WARMUP)
    timeout: float = _param_field(FLOOD_TIMEOUT)
    profile: str = _param_field(PROFILE)
    cluster_id: str = _param_field(CLUSTER_ID)
    url_file: str = _param_field(URL_FILE)

    benchmark = "flood"
    metrics = FLOOD_METRICS
    # A scheme change restarts the controller and an engine count resizes the cluster.
    outer = ("scheme", "engines", "view")

    @property
    def existing(self) -> bool:
        """Whether to use a running cluster rather than start one."""
        return bool(self.profile or self.cluster_id or self.url_file)

    def applies(self, name: str) -> bool:
        return {"size": self.test == "echo", "duration": self.test == "map"}.get(name, True)

    def _check_combinations(self) -> None:
        if self.existing and len(self.scheme) > 1:
            msg = (
                f"scheme {' '.join(self.scheme)}: a running cluster keeps its own scheduler; "
                "sweep schemes on a cluster the project starts (leave out --profile, "
                "--cluster-id and --url-file)"
            )
            raise ValueError(msg)


BENCHMARKS: dict[str, type[BenchParams]] = {
    "thr": ThroughputParams,
    "lat": LatencyParams,
    "flood": FloodParams,
}

COLUMN_TITLES = {p.name: p.title for cls in BENCHMARKS.values() for p in cls.fields()} | {
    m.name: m.title for m in METRICS.values()
}

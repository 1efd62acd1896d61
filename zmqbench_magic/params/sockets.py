"""The ZeroMQ benchmarks' parameters and metrics (``%zmqthr``, ``%zmqlat``), and the
queue-memory rules their sizes obey."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .common import (
    CPU,
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
from .declare import BenchParams, Column, Param, param_field
from .far_end import CURVE, REMOTE, REMOTE_PYTHON, SECRET_FILE, check_remote
from .interpreter import KERNEL, arm_names
from .kinds import KINDS, Kind
from .memory import HWM, check_memory, few_messages_caution, unlimited_queues_caution
from .patterns import (
    CLIENTS,
    MANDATORY,
    NODROP,
    PATTERN,
    PATTERN_COLUMNS,
    PEERS,
    PUBLISHERS,
    SEQUENCE,
    check_clients,
    check_pattern,
    check_sequence,
    crowded_clients,
    crowded_cores,
)
from .point_record import Settings
from .pressure import (
    CONFLATE,
    HELD_FRACTION,
    IDLE,
    RATE,
    SLOW_PEERS,
    WORK,
    check_conflate,
    check_joiner,
    check_pressure,
)
from .socket_point import (
    COPY,
    COPY_THRESHOLD,
    IO_THREADS,
    LOOP,
    PEER,
    PYTHON,
    TRANSPORT,
    SocketPoint,
    resolve_peer,
)
from .zmq_metrics import LAT_METRICS, LAT_POOLED, THR_METRICS

# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
COUNT = Param(
    "count", 0, "messages (round trips) per sample; 0 calibrates so a sample lasts min-time",
    "messages per sample", "int", low=0, high=10**9, short="n",
)
ADDRESS = Param(
    "address", "127.0.0.1",
    "tcp interface to bind, optionally with a port (127.0.0.1, 127.0.0.1:5555, [::1]); "
    "a free port is chosen when none is given",
    "tcp address", "address",
)

# Who runs the loops: the kernel itself, or fresh processes of one interpreter or of
# several compared side by side.
DRIVER = Param(
    "driver", "kernel",
    "who runs the driver's loop: kernel (this process, the Python you are in: its "
    "state is part of the figure) or process (both ends of every round in fresh "
    "processes the kernel starts, as pyperf's workers: the rounds are then "
    "independent, and their spread includes the between-process variance); --python "
    "implies process",
    "driver", "choice", choices=("kernel", "process"),
)
# fmt: on


def _open_loop_count_caution(count: int, rates: tuple[float, ...]) -> list[str]:
    """A fixed count at a low offered rate makes long samples: say how long."""
    slowest = min(r for r in rates if r)
    seconds = count / slowest
    if seconds < 10:
        return []
    return [f"count {count:,} at {RATE.label(slowest)} msgs/s: each sample lasts {seconds:,.0f} s"]


# What a ZeroMQ sample row records about itself, beyond every kind's columns.
ZMQ_COLUMNS = (
    Column(
        "count",
        f"messages (round trips) in the sample, from each sender (client) where a "
        f"pattern has several: {COUNT.option}, or as calibrated",
    ),
    Column("frames", "frames per message (a cell's multipart payload)"),
    Column(
        "queue_hwm",
        f"the high-water mark each data socket had, messages: {HWM.option}'s, or set by "
        "the message size (0: no limit)",
    ),
    Column("far_end", "the far end's process id, or its thread's id"),
    Column("cpu_clock", "which clock counted the CPU columns: process or thread"),
    Column("elapsed_s", "the sample's measured time, seconds"),
)


@dataclass(frozen=True)
class CrowdSettings:
    """A run's settings for a pattern's far ends that no point varies."""

    nodrop: bool = NODROP.default
    publishers: int = PUBLISHERS.default
    mandatory: bool = MANDATORY.default
    sequence: bool = SEQUENCE.default
    slow_peers: int = SLOW_PEERS.default


@dataclass(frozen=True)
class ZmqParams(BenchParams):
    """Settings shared by the ZeroMQ benchmarks; list-valued fields are swept."""

    size: tuple[int, ...] = param_field(SIZE)
    copy: tuple[bool, ...] = param_field(COPY)
    transport: tuple[str, ...] = param_field(TRANSPORT)
    peer: tuple[str, ...] = param_field(PEER)
    loop: tuple[str, ...] = param_field(LOOP)
    copy_threshold: tuple[int, ...] = param_field(COPY_THRESHOLD)
    io_threads: tuple[int, ...] = param_field(IO_THREADS)
    curve: tuple[bool, ...] = param_field(CURVE)
    python: tuple[str, ...] = param_field(PYTHON)
    hwm: tuple[int | str, ...] = param_field(HWM)
    count: int = param_field(COUNT)
    repeat: int = param_field(REPEAT)
    warmup: int = param_field(WARMUP)
    min_time: float = param_field(MIN_TIME)
    precision: float = param_field(PRECISION)
    until: str = param_field(UNTIL)
    tolerance: float = param_field(TOLERANCE)
    max_time: float = param_field(MAX_TIME)
    timeout: float = param_field(TIMEOUT)
    driver: str = param_field(DRIVER)
    address: str = param_field(ADDRESS)
    remote: str = param_field(REMOTE)
    secret_file: str = param_field(SECRET_FILE)
    remote_python: str = param_field(REMOTE_PYTHON)
    cpu: str = param_field(CPU)
    seed: int = param_field(SEED)
    label: str = param_field(LABEL)

    # One far end serves every point of a transport and peer (and environment).
    outer = ("transport", "peer", "python", "pattern", "peers", "clients", "io_threads")

    def applies(self, name: str) -> bool:
        # A column only where asked: by the size is every other run's (queue_hwm).
        if name == "hwm":
            return self.hwm != ("auto",)
        return name != "python" or self.driver == "process"

    def resolve(self, point: Settings) -> Settings:
        if "python" in point:
            point = {**point, "python": arm_names(self.python)[point["python"]]}
        if self.remote:
            return {**point, "peer": "remote"}
        return {**point, "peer": resolve_peer(point["transport"], point["peer"])}

    def interpreters(self) -> dict[str, str]:
        """Each arm's name (the ``python`` column) and its ``--python`` value."""
        return {name: spec for spec, name in arm_names(self.python).items()}

    def points(self) -> Iterator[SocketPoint]:
        """Each combination of the swept values, in measuring order, as a typed record."""
        return (SocketPoint.of(settings) for settings in super().points())

    def runs_as_pattern(self, point: SocketPoint) -> bool:
        """Whether a point of one far end runs as a pattern of one all the same (its
        loops number, pace or work: only a pattern's do)."""
        return False

    def crowd_settings(self) -> CrowdSettings:
        """What the run sets for a pattern's far ends beyond its points (a latency
        run's clients: the declarations' defaults)."""
        return CrowdSettings()

    def _check_combinations(self) -> None:
        if self.python != (KERNEL,) and self.driver == "kernel":
            object.__setattr__(self, "driver", "process")  # another Python needs its own
        if self.driver == "process" and self.remote:
            msg = (
                "driver process (or python) cannot be used with remote: the far end on "
                "another host is driven from this process"
            )
            raise ValueError(msg)
        for transport in self.transport:
            for peer in self.peer:
                resolve_peer(transport, peer)
        if True in self.curve and "inproc" in self.transport:
            msg = "curve true needs tcp or ipc: inproc has no security mechanism"
            raise ValueError(msg)
        if self.remote:
            check_remote(self.remote, self.transport, self.peer, self.secret_file, self.curve)
            if self.io_threads != (1,):
                msg = f"{IO_THREADS.option} sets this machine's ends: leave it out with --remote"
                raise ValueError(msg)
        self._check_memory()

    def _check_memory(self) -> None:
        if "auto" in self.hwm and len(self.hwm) > 1:
            msg = (
                f"hwm auto sets the mark by the message size: sweep numbers only, as "
                f"{HWM.option} 100 10k, or give auto alone"
            )
            raise ValueError(msg)
        for hwm in self.hwm:
            check_memory(max(self.size), hwm)

    def cautions(self) -> list[str]:
        counted = KINDS[self.benchmark].counted
        return [*few_messages_caution(self.size, counted), *unlimited_queues_caution(self.hwm)]


@dataclass(frozen=True)
class ThroughputParams(ZmqParams):
    """PUSH/PULL throughput settings.

    >>> ThroughputParams(size=[100, "64k"], copy=[True, False]).size
    (100, 65536)
    """

    pattern: tuple[str, ...] = param_field(PATTERN)
    peers: tuple[int, ...] = param_field(PEERS)
    nodrop: bool = param_field(NODROP)
    publishers: int = param_field(PUBLISHERS)
    mandatory: bool = param_field(MANDATORY)
    sequence: bool = param_field(SEQUENCE)
    rate: tuple[float, ...] = param_field(RATE)
    work: tuple[float, ...] = param_field(WORK)
    slow_peers: int = param_field(SLOW_PEERS)
    conflate: tuple[bool, ...] = param_field(CONFLATE)

    benchmark = "thr"
    metrics = THR_METRICS
    columns = (
        *ZMQ_COLUMNS,
        *PATTERN_COLUMNS,
        Column(
            "received",
            "messages delivered in the sample, every receiver's together (short of what "
            "was sent: lost)",
        ),
        Column("late", "messages that arrived after a loss was declared, drained"),
        Column("send_elapsed_s", "the sender's send calls alone, all of them, seconds"),
        Column(
            "send_only_count",
            "the first sends the send-only rate times: the count, or the sender's "
            "high-water mark where that is smaller",
        ),
        Column(
            "queue_capacity",
            "messages the two ZeroMQ queues and the kernel's socket buffers hold between the "
            "ends (empty with --hwm 0: ZeroMQ's queues then have no limit)",
        ),
    )

    def runs_as_pattern(self, point: SocketPoint) -> bool:
        return self.sequence or point.under_pressure or point.conflate

    def crowd_settings(self) -> CrowdSettings:
        return CrowdSettings(
            self.nodrop, self.publishers, self.mandatory, self.sequence, self.slow_peers
        )

    def applies(self, name: str) -> bool:
        # A column only where work (a conflating receiver) was asked for: receivers that
        # take messages as they come (and queue them) are every other run.
        used = {"work": any(self.work), "conflate": True in self.conflate}
        return super().applies(name) and used.get(name, True)

    def _check_combinations(self) -> None:
        super()._check_combinations()
        if self.count == 1:
            msg = (
                "count must be 0 (calibrate) or at least 2 for throughput: delivery is "
                "timed from the first to the last receive, got 1"
            )
            raise ValueError(msg)
        check_conflate(self)  # first: its refusals name it, not the settings it needs
        check_sequence(self)
        check_pattern(self)
        check_pressure(self)
        check_joiner(self)

    def cautions(self) -> list[str]:
        if self.remote:  # the peers use other hosts' cores
            return super().cautions()
        return [*super().cautions(), *crowded_cores(self.pattern, self.peers, self.publishers)]


@dataclass(frozen=True)
class LatencyParams(ZmqParams):
    """REQ/REP round-trip latency settings.

    >>> LatencyParams(size="1k", transport=["tcp", "inproc"]).transport
    ('tcp', 'inproc')
    """

    rate: tuple[float, ...] = param_field(RATE)
    idle: tuple[float, ...] = param_field(IDLE)
    clients: tuple[int, ...] = param_field(CLIENTS)

    benchmark = "lat"
    metrics = LAT_METRICS
    columns = (
        *ZMQ_COLUMNS,
        Column("round_trips", "round trips the sample timed, every client's together"),
        Column(
            "first_us",
            "the first round trip over a far end's fresh connection, before any "
            "calibration or warm-up (µs): on the first sample each far end takes, empty on "
            "the others",
        ),
        Column("min_us", "the fastest round trip of the sample (the summary: of the point)"),
        Column(
            "held",
            f"an offered rate answered at {HELD_FRACTION:.0%} or more (the summary: by "
            "every sample)",
        ),
    )

    def applies(self, name: str) -> bool:
        # A column only where a pause was asked for: back to back is every other run.
        return super().applies(name) and (name != "idle" or any(self.idle))

    def _check_combinations(self) -> None:
        super()._check_combinations()
        check_clients(self)
        self._check_idle()
        if any(self.rate) and "asyncio" in self.loop:
            msg = f"{LOOP.option} asyncio runs closed loops: leave out {RATE.option}"
            raise ValueError(msg)
        if self.count == 1 and any(self.rate):
            msg = (
                "count must be 0 (calibrate) or at least 2 with an offered rate: the rate "
                "achieved is timed from the first to the last reply, got 1"
            )
            raise ValueError(msg)

    def _check_idle(self) -> None:
        """A pause is a closed loop's, in Python, shorter than the far end's wait."""
        if not any(self.idle):
            return
        if any(self.rate):
            msg = f"{IDLE.option} pauses a closed loop: leave out {RATE.option}"
            raise ValueError(msg)
        if set(self.loop) - {"python"}:
            msg = f"{IDLE.option}: the {'/'.join(self.loop)} loop runs back to back; use "
            msg += f"{LOOP.option} python"
            raise ValueError(msg)
        if max(self.idle) >= self.timeout:
            msg = (
                f"idle {IDLE.label(max(self.idle))}: the far end waits at most "
                f"{TIMEOUT.option} {TIMEOUT.label(self.timeout)} for each message; give a "
                f"longer {TIMEOUT.option}"
            )
            raise ValueError(msg)

    def cautions(self) -> list[str]:
        said = [*super().cautions(), *([] if self.remote else crowded_clients(self.clients))]
        if self.count and any(self.rate):
            return [*said, *_open_loop_count_caution(self.count, self.rate)]
        return said


THROUGHPUT = Kind(
    name=ThroughputParams.benchmark,
    title="PUSH/PULL throughput",
    params=ThroughputParams,
    counted="messages",
    counts_at=(1,),
    far_end="sink",
    tax_metric="msgs_per_s",
    old_files={
        "driver": "kernel",
        "pattern": "pipeline",
        "peers": 1,
        "io_threads": 1,
        "rate": 0.0,
        "conflate": False,
    },
    magic="zmqthr",
    magic_help="""Measure ZeroMQ PUSH/PULL throughput: delivered and send-only msgs/s, Mbit/s.

    Lists sweep: ``%zmqthr --size 100 1k 64k 1M --copy true false``. As a cell
    magic, the cell runs once in your namespace and its last expression is the
    message (bytes, a buffer such as a numpy array, or a list of them: one frame
    each); ``--size`` is then the message's own.
    """,
)
LATENCY = Kind(
    name=LatencyParams.benchmark,
    title="REQ/REP round-trip latency",
    params=LatencyParams,
    counted="round trips",
    counts_at=(1,),
    far_end="echo",
    pooled_metrics=LAT_POOLED,
    tax_metric="sample_mean_us",
    old_files={"driver": "kernel", "io_threads": 1, "clients": 1},
    magic="zmqlat",
    magic_help="""Measure ZeroMQ REQ/REP round-trip latency with p50/p90/p99/max percentiles.

    Lists sweep: ``%zmqlat --size 1 1k 64k --transport tcp ipc inproc``. As a cell
    magic, the cell's last expression is the message, as for ``%%zmqthr``.
    """,
)

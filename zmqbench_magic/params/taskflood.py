"""The ipyparallel benchmark's parameters and metrics (``%taskflood``)."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .address import split_url
from .backends import BACKENDS
from .common import (
    CPU,
    LABEL,
    MAX_TIME,
    PRECISION,
    REPEAT,
    SEED,
    SIZE,
    TIMEOUT,
    TOLERANCE,
    UNTIL,
    WARMUP,
)
from .declare import BenchParams, Column, Metric, Param, param_field
from .far_end import REMOTE_PYTHON
from .flood_tests import FLOOD_TEST, FLOOD_TESTS, TEST_SETTINGS, VIEWS
from .kinds import Kind
from .point_record import PointRecord

_SSH_HOST = re.compile(r"^([\w.-]+@)?[\w.-]+(:\d+)?$")
# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
TEST = Param(
    "test", FLOOD_TEST.name,
    "; ".join(f"{t.name}: {t.help}" for t in FLOOD_TESTS.values() if t.offered),
    "test", "choice", choices=tuple(t.name for t in FLOOD_TESTS.values() if t.offered),
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
    "queue, tasks dealt round-robin; broadcast: ipyparallel's BroadcastView (each task "
    "runs on every engine, fanned out by the broadcast scheduler), replies one per "
    "engine; coalescing: the same, the replies coalesced into one",
    "view", "choice", choices=VIEWS, sweep=True,
)
CHUNKSIZE = Param(
    "chunksize", 1,
    "map on the load-balanced view: items per message (ipyparallel's chunksize)",
    "chunksize", "int", low=1, high=10**6, sweep=True,
)
BACKEND = Param(
    "backend", "ipyparallel",
    "what runs the tasks, each with --engines single-threaded workers: ipyparallel (the "
    "cluster); processpool (the standard library's ProcessPoolExecutor, a baseline); "
    "dask (a distributed.LocalCluster); ray (a local ray.init). Dask and Ray are the "
    "[dask] and [ray] extras; only ipyparallel has views and schemes",
    "backend", "choice", choices=tuple(BACKENDS), sweep=True,
)
SCHEME = Param(
    "scheme", "leastload",
    "task scheduler scheme of a cluster the project starts (another scheme needs a new "
    "controller, so the cluster is restarted)",
    "scheduler scheme", "choice",
    choices=("leastload", "pure", "lru", "plainrandom", "twobin", "weighted"), sweep=True,
)
TASK_DB = Param(
    "task_db", "none",
    "where the controller of a cluster the project starts records every task: none "
    "(ipcontroller --nodb, the default here), dict (ipyparallel's own default: in the "
    "controller's memory) or sqlite (a file in the cluster's profile, removed with it); "
    "another needs a new controller, so the cluster is restarted",
    "task database", "choice", choices=("none", "dict", "sqlite"), sweep=True,
)
DURATION = Param(
    "duration", 0.0, "how long each map task sleeps (0, 1ms, 10ms, 0.1)",
    "task duration", "duration", unit="s", low=0.0, high=3600.0, sweep=True,
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
ADDRESS = Param(
    "address", "",
    "run on an existing Dask scheduler (tcp://HOST:PORT) or Ray cluster (HOST:PORT) "
    "instead of starting one; with --backend dask or ray alone, and --engines as many "
    "workers (Ray: CPUs) as it has",
    "address", "str",
)
CONNECT_TIMEOUT = Param(
    "connect_timeout", 10.0,
    "longest wait for an existing Dask scheduler or Ray cluster (--address) to answer "
    "before the run gives up and says what did not answer",
    "connect timeout", "float", unit="s", low=0.1, high=3600.0,
)
# How each engine that --address connects to writes its address: the schemes it takes
# (none: a bare HOST:PORT) and an example with its default port.
ADDRESS_FORMS = {
    b.name: (b.address_schemes, b.address_example) for b in BACKENDS.values() if b.connects
}
SSH_HOSTS = Param(
    "ssh_hosts", "",
    "start the engines on these hosts over SSH with ipyparallel's SSH engine launcher: "
    "[user@]host[:port], separated by commas, --engines on each (started with "
    "the cluster, not resized); the project must be installed there (--remote-python); "
    "ssh as for --remote ssh://; the controller listens on the interface that reaches "
    "the first host",
    "engine hosts", "str",
)
SSH_TUNNEL = Param(
    "ssh_tunnel", "",
    "[user@]gateway[:port]: the client reaches the controller through an SSH tunnel "
    "there, as ipyparallel's sshserver (one ssh process of the project's, ended with "
    "the run's cluster or the kernel); a started cluster's controller then listens on "
    "the interface that reaches the gateway",
    "SSH tunnel", "str",
)
ON_ENGINE_LOSS = Param(
    "on_engine_loss", "stop",
    "when an engine goes away mid-run: stop (name it, stop the project's cluster) or "
    "continue (start a new engine in its place and take the sample again; a cluster you "
    "named is never changed, so it stops)",
    "on engine loss", "choice", choices=("stop", "continue"),
)
# Where a task's time goes, in order (see parallel/anatomy.py for each boundary).
STAGES = ("submit", "queue", "run", "return")
# Their columns: each stage's median over a sample's tasks, and its 90th percentile.
STAGE_COLUMNS = tuple(f"{stage}_s" for stage in STAGES)
STAGE_P90_COLUMNS = tuple(f"{stage}_p90_s" for stage in STAGES)
# Task floods are slower than ZeroMQ samples: fewer rounds (6 still give a 95% interval
# for each median), a longer wait.
FLOOD_REPEAT = dataclasses.replace(REPEAT, default=6)
FLOOD_TIMEOUT = dataclasses.replace(
    TIMEOUT, default=60.0,
    help="longest a sample may go with no task submitted or answered, or a cluster's "
    "start or resize with no engine registering: a stall, never the length of a healthy "
    "flood (--max-time caps that); tasks that each run longer need a longer one",
)
# A flood of 100,000 tasks runs for minutes: no cap unless asked for.
FLOOD_MAX_TIME = dataclasses.replace(
    MAX_TIME, default=0.0, off=0.0, off_means="no limit",
    help="the longest the whole run may take: the sample then in progress is abandoned "
    "(its tasks aborted) and the whole rounds kept; with --precision, no round starts "
    f"after it (without it, {MAX_TIME.default:g} s)",
)

# Whose resident memory each flood sample records (zmqbench_magic.method.resident), and
# what that is on each backend.
MEMORY_ROLES = {
    "client": "the client: this kernel (with Dask's scheduler and the process pool's "
    "manager, which run in it)",
    "controller": "ipyparallel's controller with its schedulers, or Ray's own processes "
    "(its GCS and raylet); NaN for Dask and the process pool, whose schedulers run in the "
    "client",
    "engines": "every engine or worker, summed",
}

FLOOD_METRICS = (
    Metric("tasks_per_s", "tasks per second", "tasks completed per second, round trip",
           "higher", unit="tasks/s"),
    Metric("sent_s", "sent", "first submit to the last submit returning", "lower", unit="s"),
    Metric("roundtrip_s", "round trip", "first submit to the last result received",
           "lower", unit="s"),
    Metric("mbit_per_s", "bandwidth",
           "echo: array megabits (10^6) per second, both directions counted; push: to "
           "every engine, one direction", "higher", unit="Mbit/s"),
    Metric("efficiency", "map efficiency",
           "map: ideal parallel time (ceil(tasks / engines) x duration) / actual time",
           "higher", unit="fraction of ideal"),
    Metric("task_s", "task run time", "cell form: the task's own mean run time on an engine",
           "lower", unit="s"),
    Metric("compute_s", "ideal parallel compute",
           "cell form: the tasks' run times summed over engines, divided by the engines", unit="s"),
    Metric("overhead_s", "overhead", "cell form: round trip minus ideal parallel compute",
           "lower", unit="s"),
    Metric("overhead_fraction", "overhead fraction", "cell form: overhead / round trip", "lower"),
    *(
        Metric(column, f"{stage}", f"median over the sample's tasks: {meaning}", "lower", unit="s")
        for stage, column, meaning in zip(STAGES, STAGE_COLUMNS, (
            "the client's call to ipyparallel stamping the message (serialise, build)",
            "stamped to the engine starting it (client IO thread, scheduler, network, "
            "engine queue)",
            "the task running on the engine",
            "the engine done to the client receiving the reply",
        ), strict=True)
    ),
    *(
        metric
        for role, whose in MEMORY_ROLES.items()
        for metric in (
            Metric(f"{role}_peak_mb", f"{role} peak memory",
                   f"{whose}: peak resident memory during the sample (each process's own "
                   "peak, summed); NaN where its processes are not on this host or have none "
                   "of their own", "lower", unit="MB"),
            Metric(f"{role}_kb_per_task", f"{role} memory per task",
                   f"{whose}: how far the peak rose above the resident memory as the sample "
                   "began, per task of the sample (all in flight at once at worst)", "lower",
                   unit="kB/task"),
        )
    ),
    Metric("client_held_kb_per_task", "client heap per task",
           "the client (this kernel): its objects' bytes (glibc's in use plus Python's small "
           "objects) once every result and output were in, less those as the sample began, a "
           "task; counts memory an earlier flood freed and this one reused, unlike the peak; "
           "NaN where the allocators do not tell", "lower", unit="kB/task"),
    Metric("outputs_unread", "outputs unread at the last reply",
           "share of tasks whose IOPub output the client had not read at the last reply, held "
           "on top of their records until read; NaN where some never came", unit="fraction"),
    Metric("reply_overlap", "replies while sending",
           "share of replies the client received before its last submit returned: they "
           "compete with submission (ipyparallel #534)", unit="fraction"),
    *(
        Metric(column, f"{stage} p90",
               f"90th percentile over the sample's tasks of the {stage} stage", "lower", unit="s")
        for stage, column in zip(STAGES, STAGE_P90_COLUMNS, strict=True)
    ),
)
# fmt: on


@dataclass(frozen=True, eq=False)
class FloodPoint(PointRecord):
    """One point of a flood's sweep, as its engines' samples read it: every setting a
    sweep can vary, typed, each one its declaration's default unless the point sets
    it (a test's own setting, such as echo's size, is named only where the test reads
    it); as a mapping, the settings the run names (:class:`.point_record.PointRecord`).
    """

    backend: str = BACKEND.default
    tasks: int = TASKS.default
    engines: int = ENGINES.default
    view: str = VIEW.default
    scheme: str = SCHEME.default
    task_db: str = TASK_DB.default
    size: int = SIZE.default
    duration: float = DURATION.default
    chunksize: int = CHUNKSIZE.default

    called = "a flood's point"


@dataclass(frozen=True)
class FloodParams(BenchParams):
    """ipyparallel task-flood settings; list-valued fields are swept.

    >>> FloodParams(tasks=[16, 256], engines=[1, 2]).tasks
    (16, 256)
    """

    test: str = param_field(TEST)
    backend: tuple[str, ...] = param_field(BACKEND)
    tasks: tuple[int, ...] = param_field(TASKS)
    engines: tuple[int, ...] = param_field(ENGINES)
    view: tuple[str, ...] = param_field(VIEW)
    scheme: tuple[str, ...] = param_field(SCHEME)
    task_db: tuple[str, ...] = param_field(TASK_DB)
    size: tuple[int, ...] = param_field(SIZE)
    duration: tuple[float, ...] = param_field(DURATION)
    chunksize: tuple[int, ...] = param_field(CHUNKSIZE)
    repeat: int = param_field(FLOOD_REPEAT)
    warmup: int = param_field(WARMUP)
    precision: float = param_field(PRECISION)
    until: str = param_field(UNTIL)
    tolerance: float = param_field(TOLERANCE)
    max_time: float = param_field(FLOOD_MAX_TIME)
    timeout: float = param_field(FLOOD_TIMEOUT)
    profile: str = param_field(PROFILE)
    cluster_id: str = param_field(CLUSTER_ID)
    url_file: str = param_field(URL_FILE)
    address: str = param_field(ADDRESS)
    connect_timeout: float = param_field(CONNECT_TIMEOUT)
    ssh_hosts: str = param_field(SSH_HOSTS)
    remote_python: str = param_field(REMOTE_PYTHON)
    ssh_tunnel: str = param_field(SSH_TUNNEL)
    on_engine_loss: str = param_field(ON_ENGINE_LOSS)
    cpu: str = param_field(CPU)
    seed: int = param_field(SEED)
    label: str = param_field(LABEL)

    benchmark = "flood"
    metrics = FLOOD_METRICS
    columns = (
        Column(
            "block",
            "the cluster size's block of rounds (a flood sweeps its engine counts in "
            "blocks, so the cluster is resized once per block)",
        ),
        Column("test", f"the flood's test, a setting of the whole run: {TEST.help}"),
    )
    # A scheme or database change restarts the controller and an engine count resizes
    # the cluster.
    outer = ("backend", "scheme", "task_db", "engines", "view")
    # Each takes a cluster (or pool) of its own, measured in its own block of rounds.
    separate_blocks = ("backend", "scheme", "task_db", "engines")

    @property
    def existing(self) -> bool:
        """Whether to use a running cluster rather than start one."""
        return bool(self.profile or self.cluster_id or self.url_file)

    @property
    def hosts(self) -> tuple[str, ...]:
        """The engine hosts of --ssh-hosts, in order."""
        return tuple(self.ssh_hosts.replace(",", " ").split())

    def points(self) -> Iterator[FloodPoint]:
        """Each combination of the swept values, in measuring order, as a typed record."""
        return (FloodPoint.of(settings) for settings in super().points())

    def applies(self, name: str) -> bool:
        # The task database is a column only when asked for: older results have none.
        asked = name != TASK_DB.name or self.task_db != (TASK_DB.default,)
        return asked and self.applies_to(self.test, name)

    @staticmethod
    def applies_to(test: str, name: str) -> bool:
        """Whether a parameter matters to ``test``: a setting some test alone reads
        (echo's and push's size, map's duration and chunksize) matters to those tests.

        >>> FloodParams.applies_to("map", "size"), FloodParams.applies_to("map", "tasks")
        (False, True)
        """
        return name not in TEST_SETTINGS or name in FLOOD_TESTS[test].settings

    def _check_combinations(self) -> None:
        self._check_views()
        bad = [h for h in self.hosts if not _SSH_HOST.match(h)]
        if bad:
            msg = f"ssh_hosts must be [user@]host[:port], separated by commas, got {bad[0]!r}"
            raise ValueError(msg)
        if self.ssh_tunnel and not _SSH_HOST.match(self.ssh_tunnel):
            msg = f"ssh_tunnel must be one [user@]gateway[:port], got {self.ssh_tunnel!r}"
            raise ValueError(msg)
        if self.address:
            self._check_address()
        if self.cpu and (self.existing or self.hosts or self.address):
            msg = (
                f"cpu {self.cpu}: pins the processes a run starts on this host; a cluster "
                "someone else started, or engines on other hosts, are not the run's"
            )
            raise ValueError(msg)
        if self.hosts and self.existing:
            msg = "ssh_hosts starts a cluster: leave out --profile, --cluster-id and --url-file"
            raise ValueError(msg)
        if self.existing and len(self.scheme) > 1:
            msg = (
                f"scheme {' '.join(self.scheme)}: a running cluster keeps its own scheduler; "
                "sweep schemes on a cluster the project starts (leave out --profile, "
                "--cluster-id and --url-file)"
            )
            raise ValueError(msg)
        if (self.existing or self.address) and self.task_db != (TASK_DB.default,):
            msg = (
                f"task_db {' '.join(self.task_db)}: a running cluster keeps its own task "
                "database; choose one for a cluster the project starts (leave out "
                "--profile, --cluster-id, --url-file and --address)"
            )
            raise ValueError(msg)

    def _check_address(self) -> None:
        """An existing engine's address, in its engine's form, before anything starts."""
        if len(self.backend) != 1 or self.backend[0] not in ADDRESS_FORMS:
            msg = (
                f"address {self.address}: an existing Dask scheduler or Ray cluster, with "
                f"--backend dask or ray alone, got --backend {' '.join(self.backend)}"
            )
            raise ValueError(msg)
        split_url(self.address, *ADDRESS_FORMS[self.backend[0]])

    def _check_views(self) -> None:
        """What each view and backend can run."""
        test = FLOOD_TESTS[self.test]
        broadcast = {"broadcast", "coalescing"} & set(self.view)
        off = sorted(set(self.view) - set(test.views))
        if off:
            msg = f"view {off[0]}: {test.name} {test.off_view}"
            raise ValueError(msg)
        chunked = CHUNKSIZE.name in test.settings
        if chunked and self.chunksize != (1,) and set(self.view) != {"lb"}:
            msg = "chunksize is the load-balanced view's (--view lb); a direct view splits evenly"
            raise ValueError(msg)
        others = [b for b in self.backend if not BACKENDS[b].views]
        if others:
            if not test.futures:
                msg = f"backend {others[0]}: {test.name} is ipyparallel's alone (no counterpart)"
                raise ValueError(msg)
            if len(self.view) > 1 or len(self.scheme) > 1 or broadcast:
                msg = (
                    f"backend {others[0]} has no views or schemes: sweep --view and "
                    "--scheme with --backend ipyparallel alone"
                )
                raise ValueError(msg)
            if len(self.task_db) > 1:
                msg = (
                    f"backend {others[0]} has no ipyparallel controller: sweep "
                    f"{TASK_DB.option} with --backend ipyparallel alone"
                )
                raise ValueError(msg)


FLOOD = Kind(
    name=FloodParams.benchmark,
    title="ipyparallel task flood",
    params=FloodParams,
    counted="tasks",
    counts_at=(0, 1),
    keeps="the cluster this extension started",
    magic="taskflood",
    magic_help="""Flood an ipyparallel cluster with tiny tasks: sent and round-trip time, tasks/s.

    Starts a local cluster (kept for the next call, resized to ``--engines``) unless
    ``--profile``, ``--cluster-id`` or ``--url-file`` names a running one.
    ``%taskflood --stop`` stops the cluster it started. As a cell magic, the cell
    is the task: the names it reads are sent to the engines once, before timing,
    and the result adds each task's own run time and the overhead around it.
    """,
)

"""Fixtures: a real IPython shell with the extension loaded, the two entry points
(function and magic) behind one interface, and a check that nothing is left behind."""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest
from IPython.testing.globalipapp import start_ipython

import zmqbench_magic
from zmqbench_magic.params.units import format_size

# This run's temp folder, inherited by every process it starts (far ends, clusters,
# kernels, servers): the checks for folders left behind then see this run's alone,
# whatever else runs beside it (another test run, a benchmark). Short, since Ray and
# ipc endpoints put socket paths (at most 107 bytes) under it.
# Each test process's beside the others' (pytest-xdist's workers inherit TMPDIR), never
# inside them: a path nested twice is too long for Ray's sockets.
_TEMP_BASE = os.environ.setdefault("ZMQBENCH_TESTS_TEMP_BASE", tempfile.gettempdir())
RUN_TEMP = tempfile.mkdtemp(prefix="zt", dir=_TEMP_BASE)
os.environ["TMPDIR"] = RUN_TEMP
tempfile.tempdir = None  # gettempdir() reads TMPDIR again


def _remove_run_temp() -> None:
    """Remove this run's temp folder. A process of the run still on its way out (a
    kernel, a cluster's engine) may write into it while it is being removed, and the
    folder is then not empty when its turn comes: so again, until it is gone."""
    deadline = time.monotonic() + 10
    shutil.rmtree(RUN_TEMP, ignore_errors=True)
    while os.path.exists(RUN_TEMP) and time.monotonic() < deadline:
        time.sleep(0.1)
        shutil.rmtree(RUN_TEMP, ignore_errors=True)


# Removed last (atexit runs in reverse): after the IPython shell has closed its history.
atexit.register(_remove_run_temp)


def wait_until(
    condition: Callable[[], Any],
    timeout: float = 60.0,
    what: str = "condition",
    every: float = 0.02,
) -> Any:
    """Wait for ``condition()`` to be true and return what it gave; fail, naming
    ``what``, once ``timeout`` seconds pass. Tests wait on an event this way (a far end
    started, a sample begun, a process gone), never on a fixed sleep."""
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, f"{what} not reached within {timeout} s"
        time.sleep(every)
    return found


def far_end_child(parent: psutil.Process | None = None) -> psutil.Process | None:
    """The run's far end among ``parent``'s children (default: this process), if one
    has started: not a helper an earlier test left, such as a process pool's resource
    tracker, which lives as long as this process."""
    for child in (parent or psutil.Process()).children():
        with contextlib.suppress(psutil.Error):
            if "zmqbench_magic.sockets.far_ends.peer" in " ".join(child.cmdline()):
                return child
    return None


def member_processes(parent: psutil.Process | None = None) -> list[psutil.Process]:
    """The far ends of a pattern that ``parent`` (this process) started and still has."""
    found = []
    for child in (parent or psutil.Process()).children():
        with contextlib.suppress(psutil.Error):
            if "zmqbench_magic.sockets.far_ends.member" in " ".join(child.cmdline()):
                found.append(child)
    return found


def killed_mid_sample(run: Callable[[], Any], members: int, victim: int = 1) -> BaseException:
    """Run ``run`` (a pattern's run) in a thread, kill its far end number ``victim`` of
    ``members`` once that one is sampling, and return the error the run ended with."""
    errors: list[BaseException] = []

    def running() -> None:
        try:
            run()
        except BaseException as exc:  # noqa: BLE001 - the caller reads it
            errors.append(exc)

    runner = threading.Thread(target=running)
    runner.start()
    started = wait_until(
        lambda: len(member_processes()) == members and member_processes(),
        30,
        f"{members} far ends",
    )
    wait_until(lambda: sampling(started[victim]), 30, "a sample under way")
    started[victim].kill()
    runner.join(60)
    assert not runner.is_alive()
    (error,) = errors
    return error


def sampling(process: psutil.Process) -> bool:
    """Whether a far end is in its sample's loop: connected to the driver (control and
    data), then busy, or woken by message after message (an open loop at 20 msgs/s
    hardly uses the CPU). Its start-up takes CPU too, so it must be connected first;
    an idle far end wakes only to check its parent, every 0.2 s."""
    with contextlib.suppress(psutil.Error):
        connected = [c for c in process.net_connections("tcp") if c.status == "ESTABLISHED"]
        if len(connected) < 2:
            return False
        before = process.num_ctx_switches().voluntary
        busy = process.cpu_percent(interval=0.3) > 20
        return busy or process.num_ctx_switches().voluntary - before >= 5
    return False


# The settings the tests share, small enough to keep the suite fast and large enough
# to exercise every code path (a file with other needs says why beside its own).
TINY = {"count": 200, "repeat": 2, "warmup": 0}  # a ZeroMQ sweep: two rounds
FLOOD_QUICK = {"repeat": 2, "warmup": 0}  # a flood: two rounds
ONE_ROUND = {"repeat": 1, "warmup": 0}  # a fault's run: one round is enough
RUNNERS = {"thr": zmqbench_magic.run_throughput, "lat": zmqbench_magic.run_latency}
MAGICS = {"thr": "zmqthr", "lat": "zmqlat", "flood": "taskflood"}


@pytest.fixture(scope="session")
def ip() -> Any:
    shell = start_ipython()
    shell.run_line_magic("load_ext", "zmqbench_magic")
    return shell


def _option_value(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int) and value >= 1024:
        return format_size(value)
    return str(value)


def magic_line(**values: Any) -> str:
    """``size=[100, 1024]`` -> ``--size 100 1k``: keyword arguments as magic options."""
    parts = []
    for name, value in values.items():
        items = value if isinstance(value, (list, tuple)) else [value]
        parts.append(f"--{name.replace('_', '-')} " + " ".join(_option_value(v) for v in items))
    return " ".join(parts)


# TINY as a magic's options: "--count 200 --repeat 2 --warmup 0".
TINY_OPTIONS = magic_line(**TINY)


@pytest.fixture(params=["function", "magic"])
def bench(request: pytest.FixtureRequest, ip: Any) -> Callable[..., zmqbench_magic.ResultSet]:
    """``bench("thr", size=[100], ...)``, through the Python API or through the magic."""

    def through_function(benchmark: str, **values: Any) -> zmqbench_magic.ResultSet:
        if benchmark == "flood":
            from zmqbench_magic.parallel.flood import run_taskflood

            return run_taskflood(**values)
        return RUNNERS[benchmark](**values)

    def through_magic(benchmark: str, **values: Any) -> zmqbench_magic.ResultSet:
        line = f"-q -o --no-chart {magic_line(**values)}"
        return ip.run_line_magic(MAGICS[benchmark], line)

    return through_function if request.param == "function" else through_magic


def _open_fds() -> dict[int, str]:
    """fd -> what it points at. Listing /proc/self/fd opens a directory fd of its
    own, gone by the time it is described; an fd closed meanwhile is not open."""
    fds = {}
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
    return fds


# Noise floors the tests measure go to a file of this test run, never the user's.
_NOISE_DIR = tempfile.TemporaryDirectory(prefix="noise-floor-test-")
os.environ["ZMQBENCH_NOISE_FILE"] = os.path.join(_NOISE_DIR.name, "noise.json")

# Every process this test run starts inherits this mark (the far ends, clusters and
# reapers are all started with a copy of our environment), so the leftovers checks
# count only our own processes, not another user's cluster on the same machine.
TEST_RUN_MARK = "ZMQBENCH_TEST_RUN"
os.environ[TEST_RUN_MARK] = f"{os.getpid()}-{uuid.uuid4().hex}"


def started_by_this_run(process: psutil.Process) -> bool:
    try:
        return process.environ().get(TEST_RUN_MARK) == os.environ[TEST_RUN_MARK]
    except (psutil.Error, OSError):
        return False  # gone, or not ours to read


def cluster_processes() -> list[psutil.Process]:
    """Every ipyparallel controller, engine or nanny, and reaper this test run started."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        ours = "ipyparallel." in cmdline or "zmqbench_magic.parallel.clusters.reaper" in cmdline
        if ours and started_by_this_run(process):
            found.append(process)
    return found


def tagged_processes() -> list[psutil.Process]:
    """Every process of a Dask or Ray engine the project started in this test run, found
    by its tag (not another run's beside it)."""
    from zmqbench_magic.parallel.clusters.reaper import TAG_VARIABLE

    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if TAG_VARIABLE in process.environ() and started_by_this_run(process):
                found.append(process)
    return found


def _snapshot() -> dict[str, Any]:
    me = psutil.Process()
    return {
        "children": {p.pid for p in me.children(recursive=True)},
        "fds": _open_fds(),
        "threads": {(t.ident, t.name) for t in threading.enumerate()},
        "ipc_dirs": set(glob.glob(os.path.join(tempfile.gettempdir(), "zmqbench-*"))),
    }


def _came(moment: Callable[[], bool], finished: threading.Event) -> bool:
    """Wait until ``moment()`` holds (True), or the test has finished (False)."""
    while not moment():
        if finished.wait(0.005):
            return False
    return True


@pytest.fixture
def kernel_sigint(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``interrupt(after, when=...)``: a kernel interrupt (SIGINT to the main thread)
    ``after`` seconds from now (from when ``when()`` first holds, if given), with
    SIGINT raising KeyboardInterrupt as in a kernel.

    A shell starts background jobs with SIGINT ignored, and Python then installs no
    handler of its own, so a test run from one would never see the interrupt; this
    installs it. And an interrupt that lands while the main thread runs a finalizer
    (a ``__del__``, a weakref callback; ipyparallel and pyzmq have many) is printed
    and dropped by Python itself, as a kernel's Interrupt button would then have to be
    pressed again: so it is sent again, only then (never during the cleanup)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    dropped, finished = threading.Event(), threading.Event()
    report = sys.unraisablehook

    def unraisable(info: Any) -> None:
        if isinstance(info.exc_value, KeyboardInterrupt):
            print(f"kernel_sigint: the interrupt was dropped in {info.object!r}; sent again")
            dropped.set()
        else:
            report(info)

    monkeypatch.setattr(sys, "unraisablehook", unraisable)
    main = threading.main_thread().ident
    senders: list[threading.Thread] = []

    def press_interrupt(after: float, when: Callable[[], bool]) -> None:
        if not _came(when, finished) or finished.wait(after):
            return
        while not finished.is_set():
            signal.pthread_kill(main, signal.SIGINT)
            while not (dropped.is_set() or finished.wait(0.05)):
                pass
            dropped.clear()

    def interrupt(after: float, when: Callable[[], bool] = lambda: True) -> None:
        sender = threading.Thread(target=press_interrupt, args=(after, when), name="test-interrupt")
        senders.append(sender)
        sender.start()

    yield interrupt
    finished.set()
    for sender in senders:
        sender.join(5)
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def process_singletons() -> None:
    """Start what other libraries keep for the life of the process before any
    snapshot, so it is not counted as ours: pyzmq's zero-copy garbage collector (a
    thread with its own context), vl-convert's JavaScript runtime, and the event loop
    jupyter_client's blocking calls run on (jupyter_core's, kept for the thread, or on
    a thread of its own where the thread runs a loop already)."""
    import asyncio

    import altair as alt
    import zmq
    from jupyter_core.utils import run_sync

    from zmqbench_magic.charts import chart_to_svg

    chart_to_svg(alt.Chart(alt.Data(values=[{"x": 1}])).mark_point().encode(x="x:Q"))

    with zmq.Context() as ctx, ctx.socket(zmq.PAIR) as a, ctx.socket(zmq.PAIR) as b:
        a.bind("inproc://warm-up")
        b.connect("inproc://warm-up")
        a.send(b" " * (1 << 20), copy=False)  # above the copy threshold: really zero-copy
        b.recv()

    run_sync(asyncio.sleep)(0)

    # ... and, called where the thread already runs a loop (a notebook's kernel), the
    # thread it keeps to run them on ("MainThread - runner").
    async def in_a_running_loop() -> None:
        run_sync(asyncio.sleep)(0)

    asyncio.run(in_a_running_loop())


@pytest.fixture
def python_startup(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """``python_startup(code)``: every Python started from here on (a far end, an
    engine) runs ``code`` first, as its ``sitecustomize``: a start slowed or stalled
    however fast the machine."""

    def runs_first(code: str) -> None:
        (tmp_path / "sitecustomize.py").write_text(code)
        paths = [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))

    return runs_first


@pytest.fixture
def no_leftovers(process_singletons: None) -> Iterator[None]:
    """Fail the test if it leaves a process, fd, thread or ipc directory behind."""
    before = _snapshot()
    yield
    after = _snapshot()
    assert after["children"] - before["children"] == set(), "child processes left running"
    assert after["threads"] - before["threads"] == set(), "threads left running"
    assert after["ipc_dirs"] - before["ipc_dirs"] == set(), "ipc directories left behind"
    # An fd may close a moment after the test returns, in a thread of no test's own:
    # libzmq's I/O threads close their connections themselves. One left open is
    # one still open once that moment has passed.
    deadline = time.monotonic() + _FD_SETTLE_S
    while (leaked := _new_fds(before["fds"])) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leaked == {}, "file descriptors left open"


_FD_SETTLE_S = 2.0


def _new_fds(before: dict[int, str]) -> dict[int, str]:
    """fd -> what it points at (a socket with its addresses), for each fd not open
    as it was in ``before``."""
    return {fd: _with_addresses(kind) for fd, kind in _open_fds().items() if before.get(fd) != kind}


def _with_addresses(kind: str) -> str:
    """``socket:[inode]``, with its line of /proc/net/{tcp,tcp6,udp,unix} when found:
    whose socket a leak is says which test or library left it."""
    inode = kind.removeprefix("socket:[").removesuffix("]")
    if inode == kind:
        return kind
    for table in ("tcp", "tcp6", "udp", "udp6", "unix"):
        with contextlib.suppress(OSError), open(f"/proc/net/{table}") as lines:
            for line in lines:
                if inode in line.split():
                    return f"{kind} {table}: {' '.join(line.split())}"
    return kind


# What must run in one test process, in order, when the suite runs in several
# (pytest-xdist): a notebook's cells share its kernel; Ray's clusters and the test
# hosts' network namespaces are the machine's, so their tests take turns.
_TOGETHER = {
    "tests/sockets/test_remote.py": "test-hosts",
    "tests/sockets/test_spread.py": "test-hosts",
    "examples/06_two_hosts.ipynb": "test-hosts",
    "tests/parallel/test_engines.py": "ray",
    "examples/09_engines.ipynb": "ray",
    "tests/test_bench.py::test_engines_bench_quick_prints_a_ratio_per_backend_and_leaves_nothing": (
        "ray"
    ),
    # The charts' frames are real measurements, taken once per process (chart_frames
    # keeps them, and each chart's SVG): the browser's chart test draws the same charts
    # as the layout tests.
    "tests/charts/test_charts.py": "charts",
    "tests/test_browser.py::test_no_text_of_any_chart_leaves_its_canvas_in_a_real_browser": (
        "charts"
    ),
}


def _scope(nodeid: str) -> str:
    """The unit one test process runs whole, in order: a group above, or a file (a
    notebook's cells share its kernel, a module's tests its fixtures)."""
    path = nodeid.split("::")[0]
    return _TOGETHER.get(nodeid) or _TOGETHER.get(path) or path


# The units that take longest in one process (about a minute to three each, measured
# on the 2-core machine), dealt out first and longest first, so that no process is
# left with a long one while the other has finished; the rest follow, largest first.
# A stale order costs only time.
_LONGEST_FIRST = (
    "ray",
    "tests/test_browser.py",
    "test-hosts",
    "tests/test_bench.py",
    "examples/03_taskflood.ipynb",
    "examples/08_upgrade_ab.ipynb",
    "tests/parallel/test_flood.py",
    "examples/05_python_vs_native.ipynb",
    "tests/parallel/test_cluster_faults.py",
    "examples/01_throughput.ipynb",
    "examples/04_dashboard.ipynb",
)


def _dealing_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` grouped by unit, the units in dealing order; a unit's own order kept."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(_scope(item.nodeid), []).append(item)

    def rank(scope: str) -> tuple[int, int]:
        known = _LONGEST_FIRST.index(scope) if scope in _LONGEST_FIRST else len(_LONGEST_FIRST)
        return known, -len(units[scope])

    return [item for scope in sorted(units, key=rank) for item in units[scope]]


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Units dealt out whole, in the order the collection puts them in
    (:func:`_dealing_order`): pytest-xdist's loadscope scheduler, scoped by
    :func:`_scope`. Not ``--dist loadgroup``'s marks: pytest 9.2's node ids lose the
    group it writes into them (pytest-xdist #1386), and cells of one notebook then ran
    in fresh kernels."""
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    # Its own reordering counts tests, which says nothing of how long a unit takes.
    config.option.loadscopereorder = False
    return Grouped(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The example notebooks (collected by nbval, ``scripts/test.sh examples``, with
    this conftest as a plugin) run real benchmarks in a real kernel, two of them on a
    cluster: all in the slow set. In a process of several (pytest-xdist's workers), the
    items in dealing order."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
    if hasattr(config, "workerinput"):
        items[:] = _dealing_order(items)

"""Dask and Ray beside ipyparallel and the process pool, on real local clusters: every
test on every backend with the same columns, the cell form, a worker killed mid-flood
(named), a killed kernel (its reaper ends every tagged process), a missing extra, and
the memory a run takes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import NamedTuple

import psutil
import pytest
from conftest import FLOOD_QUICK, started_by_this_run, tagged_processes, wait_until
from IPython.core.error import UsageError

from zmqbench_magic.parallel.clusters.reaper import TAG_VARIABLE
from zmqbench_magic.parallel.engines.futures import FuturesSession
from zmqbench_magic.parallel.flood import run_taskflood
from zmqbench_magic.params.backends import DASK, PROCESS_POOL
from zmqbench_magic.params.flood_tests import FLOOD_TEST
from zmqbench_magic.params.taskflood import STAGE_COLUMNS, FloodPoint

FUTURES = ["processpool", "dask", "ray"]


def _ray_folders() -> list[str]:
    import glob
    import tempfile

    return glob.glob(os.path.join(tempfile.gettempdir(), "zmqbench-ray-*"))


def _left_nothing() -> None:
    wait_until(lambda: not tagged_processes(), 30, "every tagged process to end")
    assert _ray_folders() == []
    assert TAG_VARIABLE not in os.environ


def _ray_cluster_for(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The module's existing Ray cluster (:func:`ray_cluster`), its token set for the
    runs that connect to it: its address."""
    cluster = request.getfixturevalue("ray_cluster")
    for name, value in cluster.token.items():
        monkeypatch.setenv(name, value)
    return cluster.address


@pytest.mark.slow  # real Dask and Ray clusters
@pytest.mark.parametrize("backend", ["dask", "ray"])
def test_flood_and_map_run_on_the_backend_with_the_pools_columns(backend, request, monkeypatch):
    flood = run_taskflood(
        backend=["processpool", backend], tasks=[16, 64], engines=2, **FLOOD_QUICK
    )
    df = flood.df
    ours, pool = df[df["backend"] == backend], df[df["backend"] == "processpool"]
    assert len(ours) == len(pool) == 4
    assert list(ours.columns) == list(pool.columns)
    assert (ours["tasks_per_s"] > 0).all() and (ours["sent_s"] > 0).all()
    assert (ours["roundtrip_s"] >= ours["sent_s"]).all()
    assert f"2 workers {backend}" in str(flood)
    # Each task's run, on its worker: Dask's task stream stamps it, Ray's tasks time it.
    assert ours["run_s"].notna().all() and (ours["run_s"] < ours["roundtrip_s"]).all()
    assert ours[[c for c in STAGE_COLUMNS if c != "run_s"]].isna().all().all()
    assert any(note.startswith(f"stages, {backend}:") for note in flood.metadata["notes"])
    (advice,) = [a for a in flood.advice() if "tasks must last" in a and backend.capitalize() in a]
    assert advice.startswith(f"with {backend.capitalize()} on 2 workers, tasks must last")
    # Memory on every backend: the kernel and the workers; a controller only where it
    # has processes of its own (Ray's), not where it runs in the kernel (Dask, the pool).
    for role in ("client", "engines"):
        assert (ours[f"{role}_peak_mb"] > 0).all() and (pool[f"{role}_peak_mb"] > 0).all()
    assert pool["controller_peak_mb"].isna().all()
    assert ours["controller_peak_mb"].notna().all() == (backend == "ray")
    (memory,) = [a for a in flood.advice() if "in flight" in a and backend.capitalize() in a]
    assert ("in the controller" in memory) == (backend == "ray")

    # The map on Ray's existing cluster of the module: the flood above started Ray's
    # own (its controller's memory is measured there alone), and a second start of its
    # own would cost half a minute on 2 busy cores for the same map.
    address = _ray_cluster_for(request, monkeypatch) if backend == "ray" else ""
    mapped = run_taskflood(
        backend=backend,
        address=address,
        test="map",
        tasks=8,
        engines=2,
        duration=0.02,
        chunksize=[1, 4],
        **FLOOD_QUICK,
    )
    # 8 sleeps of 20 ms on 2 workers take at least 80 ms: efficiency is at most 1.
    efficiency = mapped.df["efficiency"]
    assert (efficiency > 0).all() and (efficiency <= 1.01).all(), efficiency
    # The known answer of the run stage: a chunk of n sleeps of 20 ms runs n x 20 ms at
    # least (one message per chunk), and not much more on an idle worker.
    ran = mapped.df[mapped.df["backend"] == backend]
    assert (ran["run_s"] >= 0.02 * ran["chunksize"]).all(), ran[["chunksize", "run_s"]]
    assert sorted(set(mapped.df["chunksize"])) == [1, 4]
    _left_nothing()


@pytest.mark.slow  # real Dask and Ray clusters
@pytest.mark.parametrize("backend", FUTURES)
def test_the_cell_form_runs_the_users_task_with_its_names_on_the_backend(
    ip, backend, request, monkeypatch
):
    # Ray's runs on the module's existing cluster (2 CPUs, so 2 workers each): the cell
    # is sent and run the same way there, and its own start, twice, would cost a minute
    # on 2 busy cores (the other tests start Ray's own).
    where, engines = "", 1
    if backend == "ray":
        where, engines = f" --address {_ray_cluster_for(request, monkeypatch)}", 2
    ip.run_cell("import math as m\nscale = 3")
    result = ip.run_cell_magic(
        "taskflood",
        f"-q --no-chart -o --backend {backend}{where} -n 8 -e 2 -r 1 --warmup 0",
        "total = sum(m.sqrt(i) * scale for i in range(2000))",
    )
    (row,) = result.df.to_dict("records")
    assert row["test"] == "cell" and row["backend"] == backend
    assert 0 < row["task_s"] < row["roundtrip_s"]
    assert 0 < row["overhead_fraction"] < 1
    broken = "undefined_name + 1"
    with pytest.raises(Exception, match="undefined_name"):
        ip.run_cell_magic(
            "taskflood",
            f"-q --no-chart --backend {backend}{where} -n 2 -e {engines} -r 1 --warmup 0",
            broken,
        )
    _left_nothing()


def _command(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _kill_a_worker_mid_flood(backend: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Flood ``backend`` with 20,000 tasks and SIGKILL one of its workers once the
    sample has begun (not while the workers start, however slow the machine); return
    what the error said."""
    killed_at: list[float] = []
    parent = psutil.Process()
    sampling = threading.Event()
    sample = FuturesSession.sample

    def sample_begun(session: FuturesSession, point: dict) -> dict:
        sampling.set()
        return sample(session, point)

    monkeypatch.setattr(FuturesSession, "sample", sample_begun)

    def workers() -> list[psutil.Process]:
        if backend == "processpool":
            return [p for p in parent.children(recursive=True) if "spawn_main" in _command(p)]
        tagged = tagged_processes()
        if backend == "ray":  # Ray names its worker processes by what they run
            helpers = ("ray::Dashboard", "ray::RuntimeEnv")
            named = [(p, _command(p)) for p in tagged]
            return [
                p for p, said in named if said.startswith("ray::") and not said.startswith(helpers)
            ]
        # Dask's workers: spawned processes (not multiprocessing's resource tracker).
        return [p for p in tagged if "spawn_main" in _command(p)]

    def kill() -> None:
        wait_until(sampling.is_set, 120, "the sample to begin")
        victims = wait_until(lambda: len(workers()) >= 2 and workers(), 60, "the workers")
        time.sleep(0.2)  # into the 20,000 tasks, which last seconds on any machine
        killed_at.append(time.monotonic())
        victims[-1].kill()

    killer = threading.Thread(target=kill, daemon=True)
    killer.start()
    with pytest.raises(RuntimeError) as err:
        run_taskflood(backend=backend, tasks=20_000, engines=2, repeat=1, warmup=0)
    killer.join(5)
    assert killed_at, f"no worker was killed: {err.value}"
    return str(err.value)


@pytest.mark.slow  # a real Dask cluster
def test_a_dask_flood_looking_out_for_its_tasks_leaves_nothing_waiting_per_look():
    """Each quarter-second look at a sample's tasks adds at most one waiter to the
    client's loop, not one per task: 20 looks at 2,000 tasks not yet run added 40,000
    (gigabytes a minute, on a busy machine, in a flood of 20,000). The client's own
    tasks come and go meanwhile (a busy machine's run counted one more): the bound
    allows them as many again, three orders of magnitude below one per task."""
    from zmqbench_magic.parallel.engines import session_for

    async def tasks_on_the_loop() -> int:
        return len(asyncio.all_tasks())

    session = session_for(DASK, workers=1, timeout=30, test=FLOOD_TEST)
    try:
        futures = session._submit_many(time.sleep, [5.0] * 2000)
        before = session.client.sync(tasks_on_the_loop)
        for _ in range(20):
            assert session._wait(futures, 0.01) < len(futures)
        added = session.client.sync(tasks_on_the_loop) - before
        assert added <= 40, f"{added} tasks were left on the client's loop by 20 looks"
        session.client.cancel(futures)
    finally:
        session.close()
    assert tagged_processes() == []


@pytest.mark.slow  # a real Dask cluster
def test_dask_stages_are_the_samples_own_tasks_however_far_a_workers_clock_estimate_is():
    """A worker shifts its tasks' stamps by its estimate of its clock's offset from the
    scheduler's (from heartbeats; a busy machine's are late). Set 60 s out, its stamps
    fall outside any wall-clock window of the sample: the run stage still comes from
    the sample's own tasks."""
    from zmqbench_magic.parallel.engines import session_for

    session = session_for(DASK, workers=1, timeout=30, test=FLOOD_TEST)
    try:

        def clock_estimate_60_s_out(dask_worker):
            dask_worker.periodic_callbacks["heartbeat"].stop()  # no estimate replaces it
            dask_worker.scheduler_delay = 60.0

        session.client.run(clock_estimate_60_s_out)
        row = session.sample(FloodPoint.of({"tasks": 16}))
        assert row["run_s"] > 0 and row["run_s"] < row["roundtrip_s"]
    finally:
        session.close()
    assert tagged_processes() == []


def test_a_pool_broken_before_its_flood_is_sent_names_the_worker_that_died():
    """A worker killed before (or while) the tasks are submitted breaks the pool in
    ``submit``, not in the wait for results: still the worker and its end are named."""
    from zmqbench_magic.parallel.engines import session_for
    from zmqbench_magic.parallel.engines.futures import WorkerLost

    session = session_for(PROCESS_POOL, workers=2, timeout=30, test=FLOOD_TEST)
    try:
        os.kill(session.pids[1], signal.SIGKILL)  # not reaped here: the pool reaps its own
        wait_until(lambda: session.executor._broken, 30, "the pool to find its worker gone")
        with pytest.raises(WorkerLost, match=r"worker 1 \(pid \d+\) exited: killed by signal 9"):
            session.sample(FloodPoint.of({"tasks": 100}))
    finally:
        session.close()


@pytest.mark.slow  # real Dask and Ray clusters
@pytest.mark.parametrize("backend", FUTURES)
def test_a_worker_killed_mid_flood_is_named(backend, monkeypatch):
    said = _kill_a_worker_mid_flood(backend, monkeypatch)
    assert "20,000 tasks on 2" in said, said
    assert re.search(rf"{backend} worker \d \(pid \d+\) exited: ", said), said
    if backend == "processpool":  # the kernel's own child: how it ended is known
        assert "killed by signal 9 (SIGKILL)" in said, said
    assert "the workers were shut down" in said, said
    _left_nothing()


@pytest.mark.slow  # a real Dask cluster
def test_a_dask_worker_killed_while_the_workers_start_is_named():
    """distributed says only "Nanny failed to start."; the run says what happened."""

    def kill_the_first_worker() -> None:
        spawned = wait_until(
            lambda: [p for p in tagged_processes() if "spawn_main" in _command(p)],
            120,
            "a dask worker process",
            every=0.005,
        )
        spawned[0].kill()

    killer = threading.Thread(target=kill_the_first_worker, daemon=True)
    killer.start()
    with pytest.raises(RuntimeError) as err:
        run_taskflood(backend="dask", tasks=16, engines=2, **FLOOD_QUICK)
    killer.join(5)
    said = str(err.value)
    assert "a dask worker exited while the 2 workers started" in said, said
    assert "the workers were shut down" in said, said
    _left_nothing()


_KERNEL = """
import sys
from zmqbench_magic.parallel.flood import run_taskflood
if __name__ == "__main__":
    run_taskflood(backend=sys.argv[1], tasks=200_000, engines=2, repeat=5, warmup=0,
                  timeout=600)
"""


@pytest.mark.slow  # real Dask and Ray clusters
@pytest.mark.parametrize("backend", ["dask", "ray"])
def test_a_killed_kernel_leaves_no_process_of_the_backend(tmp_path, backend):
    script = tmp_path / "kernel.py"
    script.write_text(_KERNEL)
    kernel = subprocess.Popen(
        [sys.executable, str(script), backend], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        # Its engine is up (both workers at least) and flooded.
        wait_until(lambda: len(tagged_processes()) >= 2, 120, f"{backend}'s processes")
        time.sleep(2)
        kernel.send_signal(signal.SIGKILL)
        kernel.wait(10)
        wait_until(lambda: not tagged_processes(), 60, "the reaper to end every tagged process")
        wait_until(lambda: not _ray_folders(), 30, "ray's folder to be removed")
    finally:
        with contextlib.suppress(ProcessLookupError):
            kernel.kill()
        for process in tagged_processes():
            with contextlib.suppress(psutil.Error):
                process.kill()


def _listening(process: psutil.Process) -> set[str]:
    try:
        return {c.laddr.ip for c in process.net_connections("inet") if c.status == "LISTEN"}
    except psutil.Error:
        return set()


@pytest.mark.slow  # real Dask and Ray clusters
@pytest.mark.parametrize("backend", ["dask", "ray"])
def test_the_engine_listens_on_loopback_alone_and_200_mb_of_echoes_fit_in_4_gb(backend):
    """An echo run, 200 arrays of 1 MB a sample, looked at after each sample (its
    progress), while the engine is up: every socket its processes listen on is
    loopback's, and together they stay under 4 GB. All in one start: a Ray start is
    the slowest part of the suite."""
    kernel = psutil.Process()
    before = _listening(kernel)
    listening: set[str] = set()
    totals: list[int] = []

    def look(done: int, total: int) -> None:
        processes = tagged_processes()
        if done == 0 or not processes:
            return  # not started yet
        listening.update(_listening(kernel) - before)
        memory = kernel.memory_info().rss
        for process in processes:
            listening.update(_listening(process))
            with contextlib.suppress(psutil.Error):
                memory += process.memory_info().rss
        totals.append(memory)

    echo = run_taskflood(
        backend=backend,
        test="echo",
        size=[1024, 1 << 20],
        tasks=200,
        engines=2,
        repeat=1,
        warmup=0,
        progress=look,
    )
    assert len(echo.df) == 2 and (echo.df["mbit_per_s"] > 0).all()
    assert listening, "no listening socket found"
    assert listening <= {"127.0.0.1", "::ffff:127.0.0.1", "::1"}, listening
    assert totals, "the run's progress never came while its engine was up"
    assert max(totals) < 4 * 2**30, f"{max(totals) / 2**30:.2f} GiB"
    _left_nothing()


@contextlib.contextmanager
def _dask_scheduler(tmp_path, workers: int):
    """A Dask scheduler and ``workers`` worker processes someone else started (on
    127.0.0.1, no dashboard): its address; stopped after."""
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    file = tmp_path / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    command = [
        dask,
        "scheduler",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--no-dashboard",
        "--scheduler-file",
        str(file),
    ]
    started = [subprocess.Popen(command, **quiet)]
    try:
        wait_until(file.exists, 60, "the scheduler's file")
        started.append(
            subprocess.Popen(
                [
                    dask,
                    "worker",
                    "--scheduler-file",
                    str(file),
                    "--nworkers",
                    str(workers),
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                ],
                **quiet,
            )
        )
        import json

        yield json.loads(file.read_text())["address"], started
    finally:
        for process in reversed(started):
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


@pytest.mark.slow  # a real Dask scheduler and workers
def test_an_existing_dask_scheduler_is_used_and_left_running(tmp_path):
    with _dask_scheduler(tmp_path, 2) as (address, started):
        from distributed import Client

        with Client(address, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)
        result = run_taskflood(
            backend="dask", address=address, tasks=[16, 32], engines=2, **FLOOD_QUICK
        )
        assert len(result.df) == 4 and (result.df["tasks_per_s"] > 0).all()
        assert all(process.poll() is None for process in started), "it stopped their cluster"
        with pytest.raises(
            ValueError, match=f"the dask cluster at {address} has 2 workers: give --engines 2"
        ):
            run_taskflood(backend="dask", address=address, tasks=4, engines=3, **FLOOD_QUICK)
        assert all(process.poll() is None for process in started)
    assert not tagged_processes()


def _of_this_ray_head(process: psutil.Process, folder: str) -> bool:
    """A process of the Ray cluster the test started itself (its temp folder on the
    command line, or its token mode inherited), in this test run alone."""
    with contextlib.suppress(psutil.Error):
        if not started_by_this_run(process):
            return False
        return folder in " ".join(process.cmdline()) or (
            process.environ().get("RAY_AUTH_MODE") == "token"
            and "ray" in " ".join(process.cmdline())
        )
    return False


class RayCluster(NamedTuple):
    address: str  # its GCS's, as --address takes it
    env: dict[str, str]  # what its owner's `ray` commands run with
    token: dict[str, str]  # what a driver sets: the cluster asks its drivers for a token


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    """Someone else's Ray cluster (``ray start --head``, 2 CPUs, on 127.0.0.1). One for
    the module, started when a test first asks for it: a Ray start is the slowest part
    of the suite, and a test of a run on an existing cluster (``--address``) needs one
    that is up, not one of its own. Each run connects and disconnects, as a user's
    does; stopped after the module's last test."""
    import shutil
    import socket
    import tempfile

    ray = os.path.join(os.path.dirname(sys.executable), "ray")
    with socket.socket() as probe:  # a free port for its GCS
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tempfile.mkdtemp(prefix="zr-")  # short: Ray's unix sockets live under it
    # A cluster that asks its drivers for a token, as Ray's own local ones do, whether or
    # not an earlier local run wrote ~/.ray/auth_token (else `ray start` decides by that).
    # The token is that file's, made if missing: this process's Ray caches what it read.
    token = {"RAY_AUTH_MODE": "token"}
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        **token,
    }
    subprocess.run(
        [ray, "get-auth-token", "--generate"], env=env, check=True, capture_output=True, timeout=60
    )
    start = [
        ray,
        "start",
        "--head",
        "--num-cpus",
        "2",
        "--node-ip-address",
        "127.0.0.1",
        "--port",
        str(port),
        "--include-dashboard",
        "false",
        "--temp-dir",
        folder,
        "--disable-usage-stats",
    ]
    subprocess.run(start, env=env, check=True, capture_output=True, timeout=120)
    try:
        yield RayCluster(f"127.0.0.1:{port}", env, token)
    finally:
        # Its own processes alone (`ray stop` would stop every Ray on this machine).
        head = [
            process
            for process in psutil.process_iter()
            if process.pid != os.getpid() and _of_this_ray_head(process, folder)
        ]
        for process in head:  # as `ray stop --force` does
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(head, timeout=20)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow  # a real Ray cluster
@pytest.mark.timeout(300)
def test_an_existing_ray_cluster_is_used_and_left_running(monkeypatch, ray_cluster):
    for name, value in ray_cluster.token.items():
        monkeypatch.setenv(name, value)
    address = ray_cluster.address
    result = run_taskflood(backend="ray", address=address, tasks=[16, 32], engines=2, **FLOOD_QUICK)
    assert len(result.df) == 4 and (result.df["tasks_per_s"] > 0).all()
    status = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ray"), "status", "--address", address],
        env=ray_cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert status.returncode == 0, f"it stopped their cluster: {status.stderr}"
    # Without --address the run's own Ray is started, even where RAY_ADDRESS names
    # a cluster (ray.init()'s default would join that one, and refuse num_cpus).
    monkeypatch.setenv("RAY_ADDRESS", address)
    own = run_taskflood(backend="ray", tasks=[16], engines=1, **FLOOD_QUICK)
    assert len(own.df) == 2 and (own.df["engines"] == 1).all()


@pytest.mark.parametrize(
    "line", ["--address tcp://127.0.0.1:8786", "--backend dask ray --address 127.0.0.1:6379"]
)
def test_an_address_needs_dask_or_ray_alone(ip, line):
    with pytest.raises(UsageError, match="with --backend dask or ray alone"):
        ip.run_line_magic("taskflood", f"-q --no-chart {line}")


@pytest.mark.parametrize(("backend", "module"), [("dask", "distributed"), ("ray", "ray")])
def test_a_missing_extra_is_a_usage_error_naming_it(ip, monkeypatch, backend, module):
    monkeypatch.setitem(sys.modules, module, None)  # as if the package were not installed
    with pytest.raises(UsageError, match=rf"pip install {module} \(or '\.\[{backend}\]'"):
        ip.run_line_magic("taskflood", f"-q --no-chart --backend {backend} -n 2 -e 1")
    assert not tagged_processes()


@pytest.mark.parametrize("backend", ["dask", "ray"])
def test_views_schemes_and_push_are_refused_on_the_backend(ip, backend):
    with pytest.raises(UsageError, match=f"backend {backend}: push is ipyparallel's alone"):
        ip.run_line_magic(
            "taskflood", f"-q --no-chart --backend {backend} --test push --view direct"
        )
    with pytest.raises(UsageError, match=f"backend {backend} has no views or schemes"):
        ip.run_line_magic("taskflood", f"-q --no-chart --backend {backend} --view lb direct")


@contextlib.contextmanager
def _silent_listener():
    """A port where a TCP listener accepts connections and never says a word: not a
    scheduler, nor a GCS. Yields the port; closed after."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        held: list[socket.socket] = []

        def accept() -> None:
            with contextlib.suppress(OSError):  # closed at the end of the test
                while True:
                    held.append(listener.accept()[0])

        threading.Thread(target=accept, daemon=True).start()
        try:
            yield listener.getsockname()[1]
        finally:
            for connection in held:
                connection.close()


def _closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then let go)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


_ADDRESS = {"dask": "tcp://127.0.0.1:{}", "ray": "127.0.0.1:{}"}


def _flood_at(backend: str, address: str, *more: str) -> subprocess.CompletedProcess[str]:
    """``zmqbench flood --backend BACKEND --address ADDRESS ...`` in a fresh process."""
    command = [sys.executable, "-m", "zmqbench_magic.cli", "flood", "--backend", backend]
    return subprocess.run(
        [*command, "--address", address, *more], capture_output=True, text=True, timeout=60
    )


_WHAT = {"dask": "a Dask scheduler", "ray": "a Ray cluster"}


@pytest.mark.parametrize("backend", ["dask", "ray"])
def test_an_address_where_nothing_listens_is_one_line_and_exit_status_1(backend):
    address = _ADDRESS[backend].format(_closed_port())
    # The bound is a hang guard: both libraries alone wait 40-120 s or more here.
    done = _flood_at(backend, address, "--tasks", "10", "-r", "1")
    assert done.returncode == 1, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("zmqbench:")]
    assert said == [
        f"zmqbench: could not connect to {_WHAT[backend]} at {address}: nothing listens "
        "there (connection refused); " + said[0].partition("connection refused); ")[2]
    ], done.stderr
    assert "check that the " in said[0] and "that this host can reach it" in said[0]
    # One line of ours, nothing of the library's (no traceback, no GCS warnings).
    others = done.stderr.replace(said[0], "")
    assert "Traceback" not in others and "Failed to connect" not in others, done.stderr
    assert not tagged_processes() and _ray_folders() == []


@pytest.mark.parametrize("backend", ["dask", "ray"])
def test_a_listener_that_says_nothing_is_a_usage_error_after_the_connect_timeout(ip, backend):
    with _silent_listener() as port:
        address = _ADDRESS[backend].format(port)
        with pytest.raises(UsageError) as err:
            ip.run_line_magic(
                "taskflood",
                f"-q --no-chart --backend {backend} --address "
                f"{address} --connect-timeout 0.5 -n 2 -e 1 -r 1",
            )
    said = str(err.value)
    assert said.startswith(
        f"could not connect to {_WHAT[backend]} at {address}: the "
        "connection was accepted but nothing answered"
    ), said
    assert "within 0.5 s; check that the " in said, said
    assert not tagged_processes() and _ray_folders() == []
    if backend == "ray":
        import ray

        assert not ray.is_initialized()


@pytest.mark.parametrize(
    ("backend", "address", "words"),
    [
        ("dask", "127.0.0.1", "address '127.0.0.1': give HOST:PORT, e.g. tcp://127.0.0.1:8786"),
        ("dask", "http://127.0.0.1:8786", "the scheme is tcp:// or tls:// or ws:// or wss://"),
        ("ray", "tcp://127.0.0.1:6379", "e.g. 127.0.0.1:6379 with no scheme"),
        ("ray", "127.0.0.1:99999", "port must be from 1 to 65535"),
    ],
)
def test_an_address_not_in_the_engines_form_is_refused_before_anything_starts(
    ip, backend, address, words
):
    with pytest.raises(UsageError, match=re.escape(words)):
        ip.run_line_magic("taskflood", f"-q --no-chart --backend {backend} --address {address}")
    done = _flood_at(backend, address)
    assert done.returncode == 2 and words in done.stderr, done.stderr


@pytest.mark.slow  # a real Dask scheduler and workers
def test_a_scheduler_killed_mid_flood_is_named_and_its_workers_left(tmp_path):
    from distributed import Client

    with _dask_scheduler(tmp_path, 2) as (address, started):
        with Client(address, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)

            def running() -> int:
                return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))

            def kill_when_tasks_run() -> None:
                wait_until(running, 120, "tasks on the scheduler", every=0.1)
                started[0].kill()  # the scheduler

            killer = threading.Thread(target=kill_when_tasks_run, daemon=True)
            killer.start()
            with pytest.raises(RuntimeError) as err:
                run_taskflood(
                    backend="dask", address=address, tasks=20_000, engines=2, repeat=5, warmup=0
                )
            killer.join(10)
            client.close(timeout=5)
        said = str(err.value)
        assert started[0].poll() is not None, f"stopped before the kill: {said}"
        assert said.startswith(
            f"20,000 tasks on 2 dask workers: the dask scheduler at {address} stopped answering"
        ), said
        assert said.endswith(f"the cluster at {address} was left as it is"), said
        assert len(said) < 300, said  # not one line per lost future
        assert started[1].poll() is None, "the workers (someone else's) were stopped"
    assert not tagged_processes()


@pytest.mark.slow  # real Dask and Ray clusters
@pytest.mark.parametrize("backend", ["dask", "ray"])
def test_cpu_pins_the_thread_that_runs_each_task_on_the_backends_workers(backend):
    """The known answer, read where the task runs: with ``--cpu D/F`` each task's own
    thread on a worker may run on F alone (Dask runs tasks on a thread of its worker's
    pool, which may start before the run pins the worker)."""
    usable = sorted(os.sched_getaffinity(0))
    far = usable[-1]
    check = (
        "import os\n"
        f"assert sorted(os.sched_getaffinity(0)) == [{far}], sorted(os.sched_getaffinity(0))"
    )
    result = run_taskflood(
        task=check,
        backend=backend,
        tasks=4,
        engines=2,
        cpu=f"{usable[0]}/{far}",
        repeat=1,
        warmup=0,
    )
    assert len(result.df) == 1
    assert sorted(os.sched_getaffinity(0)) == usable  # the kernel's thread let go
    _left_nothing()

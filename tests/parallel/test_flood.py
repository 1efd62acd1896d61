"""%taskflood against a real ipyparallel cluster: flood, echo, map, resize, schemes,
an existing cluster, stop, interrupt, a killed kernel, bad input."""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from typing import Any

import ipyparallel as ipp
import numpy as np
import psutil
import pytest
from conftest import FLOOD_QUICK, cluster_processes, wait_until
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.parallel.clusters.reaper import processes_of
from zmqbench_magic.parallel.flood import run_taskflood, samples
from zmqbench_magic.parallel.flood.samples import hub_queues
from zmqbench_magic.params.taskflood import MEMORY_ROLES

# Every test here runs a real ipyparallel cluster.
pytestmark = pytest.mark.slow


@contextlib.contextmanager
def outside_cluster(profile: str, engines: int):
    """A cluster started the plain ipyparallel way, as a user would, outside the project.

    Its own stop leaves the engines' nannies running for a while, which the next
    test would count, so those are ended too."""
    from zmqbench_magic.parallel.clusters.reaper import end_cluster_processes

    outside = ipp.Cluster(
        n=engines,
        profile=profile,
        controller_args=["--ping=250", "--nodb"],
        log_level=40,
        shutdown_atexit=False,
    )
    outside.start_cluster_sync()
    try:
        client = outside.connect_client_sync()
        client.wait_for_engines(engines, timeout=60, interactive=False)
        yield outside, client
        client.close()
    finally:
        outside.stop_cluster_sync()
        end_cluster_processes(outside.profile_dir)


@pytest.fixture(scope="module", autouse=True)
def nothing_left_after_stop():
    """The module shares the project's cluster (reuse is the point); stopping it must
    leave no controller, engine, nanny, reaper or profile directory behind."""
    assert cluster_processes() == [], "ipyparallel processes running before the tests"
    yield
    handle = own_cluster.current()
    profile_dir = handle.profile_dir if handle else None
    own_cluster.stop()
    assert cluster_processes() == []
    assert profile_dir is None or not __import__("os").path.exists(profile_dir)


def test_flood_through_function_and_magic(bench):
    result = bench("flood", tasks=[8, 32], engines=2, **FLOOD_QUICK)
    df = result.df
    assert {
        "benchmark",
        "test",
        "tasks",
        "engines",
        "view",
        "scheme",
        "sample",
        "sent_s",
        "roundtrip_s",
        "tasks_per_s",
    } <= set(df.columns)
    assert len(df) == 2 * FLOOD_QUICK["repeat"]
    assert set(df["benchmark"]) == {"flood"} and set(df["test"]) == {"flood"}
    assert (df["sent_s"] > 0).all() and (df["sent_s"] <= df["roundtrip_s"]).all()
    assert list(df["tasks_per_s"]) == pytest.approx(list(df["tasks"] / df["roundtrip_s"]))
    assert set(df["scheme"]) == {"leastload"} and set(df["view"]) == {"lb"}
    assert len(own_cluster.current().engine_ids()) == 2
    # Every role's memory: the kernel, the controller with its schedulers, the engines.
    for role in MEMORY_ROLES:
        assert (df[f"{role}_peak_mb"] > 0).all() and df[f"{role}_kb_per_task"].notna().all()
    # The kernel's heap is read (glibc and CPython here). Its figure is not asserted:
    # with the collector on, a flood of a few tasks may free more garbage than it holds.
    assert df["client_held_kb_per_task"].notna().all()
    # Every output came, so the share still unread at the last reply is known.
    assert df["outputs_unread"].between(0, 1).all()
    assert "task_db" not in df.columns  # the default: a column only when asked for


@pytest.mark.slow  # a real cluster
def test_a_floods_outputs_are_all_read_before_the_next_sample(monkeypatch):
    """Each task's engine publishes its status on IOPub, busy and then idle, which the
    client's IO thread reads after the replies: thousands were still queued when a
    large flood's last reply was in, and drained during the next sample, whose heap
    then read low. A sample ends once every one of its tasks' messages is read:
    counted here as they are, two a task, when the sample hands the cluster on. Each
    is handed to the client 0.4 s late (less than the second the wait allows with
    none read), so that a backlog such as a flood of tens of thousands leaves here
    comes of a thousand tasks on any machine."""
    run_taskflood(tasks=16, engines=2, repeat=1, warmup=0)
    client = own_cluster.current().client
    read, hooked, at_the_end = [0], threading.Event(), []
    settle = samples.settle

    def ended(*args: Any) -> None:
        at_the_end.append(read[0])
        settle(*args)

    monkeypatch.setattr(samples, "settle", ended)

    def read_late(message: list[Any]) -> None:
        client._io_loop.call_later(0.4, counted, message)

    def counted(message: list[Any]) -> None:
        read[0] += 1
        client._dispatch_iopub(message)

    def hook(handler: Callable[[list[Any]], None]) -> None:
        # On the IO thread, which reads the stream: a handler swapped from here could
        # race a message.
        def swap() -> None:
            client._iopub_stream.on_recv(handler, copy=False)
            hooked.set()

        hooked.clear()
        client._io_loop.add_callback(swap)
        assert hooked.wait(10), "the client's IO thread did not take the handler"

    hook(read_late)
    try:
        run_taskflood(tasks=1000, engines=2, repeat=1, warmup=0)
        assert at_the_end == [2 * 1000]
    finally:
        hook(client._dispatch_iopub)


def test_each_task_database_gets_a_controller_and_dict_keeps_each_echoed_array():
    """The known answer: ipyparallel's in-memory task database keeps each task's 1 MB
    request and reply for good, so its controller's peak climbs by about 64 x 2 MB =
    128 MB a sample; without a database nothing is kept, and the peak stays level
    (give or take the arrays in flight, which a busy machine moves). Three samples on:
    about 384 MB, of which at least half is asked for."""
    databases = ["none", "dict", "sqlite"]
    result = run_taskflood(
        test="echo", size=10**6, tasks=64, engines=2, task_db=databases, repeat=4, warmup=0
    )
    peaks = result.df.pivot_table(index="sample", columns="task_db", values="controller_peak_mb")
    climb = peaks.iloc[-1] - peaks.iloc[0]
    assert climb["dict"] - climb["none"] > 192, peaks
    assert "started a leastload cluster with task database dict" in " ".join(
        result.metadata["notes"]
    )
    # Each on a controller of its own, the last (SQLite's) still running.
    handle = own_cluster.current()
    assert handle.task_db == "sqlite"
    assert "--sqlitedb" in psutil.Process(handle.controller_pids()[0]).cmdline()
    assert "task database sqlite needs a new controller" in " ".join(result.metadata["notes"])
    # The advice speaks of each database's cluster, with the kernel's cost per task.
    memory = [a for a in result.advice() if "each task in flight took" in a]
    assert [a.split("task database ")[1].split(")")[0] for a in memory] == databases


def test_echo_bandwidth_counts_both_directions():
    df = run_taskflood(test="echo", size=[1024, 65536], tasks=8, engines=2, **FLOOD_QUICK).df
    assert sorted(df["size"].unique()) == [1024, 65536]
    expected = 2 * df["size"] * df["tasks"] * 8 / df["roundtrip_s"] / 1e6
    assert list(df["mbit_per_s"]) == pytest.approx(list(expected))


def test_map_efficiency_is_ideal_over_actual():
    df = run_taskflood(
        test="map", duration=[0.0, 0.02], tasks=5, engines=2, view=["lb", "direct"], **FLOOD_QUICK
    ).df
    assert sorted(df["duration"].unique()) == [0.0, 0.02]
    # 5 tasks on 2 engines: one engine runs 3 of them, so the ideal is 3 durations, not 2.5.
    ideal = df["duration"] * np.ceil(df["tasks"] / df["engines"])
    assert list(df["efficiency"]) == pytest.approx(list(ideal / df["roundtrip_s"]))
    # Sleeping takes at least the ideal parallel time: efficiency cannot pass 1.
    assert (df["efficiency"] <= 1.0).all()
    assert (df[df["duration"] > 0]["efficiency"] > 0).all()


def test_engine_sweep_resizes_the_cluster_without_restarting_it():
    before = own_cluster.managed(2, "leastload", 60)
    # Whatever setting it up took (a start, a resize: it depends on the tests before)
    # is not this run's to report.
    before.events.clear()
    controller_pid = before.cluster.controller.process.pid
    result = run_taskflood(tasks=8, engines=[1, 3, 2], **FLOOD_QUICK)
    assert list(result.df["engines"].unique()) == [1, 3, 2]
    notes = result.metadata["notes"]
    assert [n.split(" in ")[0] for n in notes] == [
        "resized the cluster from 2 to 1 engine",
        "resized the cluster from 1 to 3 engines",
        "resized the cluster from 3 to 2 engines",
    ]
    after = own_cluster.current()
    assert after is before and after.cluster.controller.process.pid == controller_pid
    assert len(after.engine_ids()) == 2


def test_another_scheme_restarts_the_controller_and_says_so(ip):
    ip.run_line_magic("taskflood", "-q --no-chart -n 8 -e 2 -r 1 --warmup 0")
    result = ip.run_line_magic(
        "taskflood", "-q -o --no-chart -n 8 -e 2 -r 1 --warmup 0 --scheme pure"
    )
    assert set(result.df["scheme"]) == {"pure"}
    assert "scheme pure needs a new controller" in result.metadata["notes"][0]
    assert "note: scheme pure needs a new controller" in str(result)


def test_a_flood_runs_with_the_garbage_collector_on_as_a_users_session(monkeypatch):
    """A flood's futures and messages leave cyclic garbage only the collector frees:
    with it off, a flood would hold more than a user's, more the longer it ran."""
    seen = []
    waiting = samples._wait

    def watched(pulse):
        seen.append(gc.isenabled())
        return waiting(pulse)

    monkeypatch.setattr(samples, "_wait", watched)
    result = run_taskflood(tasks=8, engines=1, repeat=2, warmup=0)
    assert seen == [True, True]
    assert result.metadata["gc"].startswith("on, as in any session")


def test_direct_view_deals_tasks_to_every_engine():
    df = run_taskflood(tasks=16, engines=2, view="direct", **FLOOD_QUICK).df
    assert set(df["view"]) == {"direct"} and (df["tasks_per_s"] > 0).all()


def test_two_views_of_one_cluster_are_decided_round_by_round():
    """Both views run on the block's one cluster, in the same rounds: a comparison to
    decide (the engine counts, each a cluster size, are refused: see the params)."""
    r = run_taskflood(tasks=16, engines=2, view=["lb", "direct"], until="decided", max_time=20)
    (row,) = r.versus("view", "lb", "direct").to_dict("records")
    counts = r.df.groupby("view").size()
    assert counts["lb"] == counts["direct"] == row["n"] >= 2
    if row["verdict"] == "inconclusive":  # only where the minute was spent first
        assert row["reason"].startswith(f"undecided after {row['n']} round(s)")
    else:
        assert row["verdict"] in ("faster", "slower", "same")


def test_stop_leaves_nothing_and_a_next_call_starts_afresh(ip):
    run_taskflood(tasks=4, engines=1, repeat=1, warmup=0)
    profile_dir = own_cluster.current().profile_dir
    cluster_id = own_cluster.current().cluster.cluster_id
    with capture_output() as captured:
        ip.run_line_magic("taskflood", "--stop")
    # One sentence, wrapped at spaces to 100 columns as every line printed.
    assert " ".join(captured.stdout.split()) == (
        f"stopped the cluster zmqbench_magic started (cluster id {cluster_id}, scheme "
        "leastload): its controller and 1 engine"
    )
    assert all(len(line) <= 100 for line in captured.stdout.splitlines())
    with capture_output() as captured:
        ip.run_line_magic("taskflood", "--stop")
    assert "nothing to stop" in captured.stdout
    assert own_cluster.current() is None
    assert cluster_processes() == []
    assert not __import__("os").path.exists(profile_dir)
    result = run_taskflood(tasks=4, engines=1, repeat=1, warmup=0)
    assert result.metadata["notes"][0].startswith("started a leastload cluster of 1 engine in")


def test_an_existing_cluster_is_used_but_never_resized_or_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))
    with outside_cluster("outside", engines=2) as (outside, client):
        by_profile = run_taskflood(
            profile="outside", cluster_id=outside.cluster_id, tasks=8, engines=[1, 2], **FLOOD_QUICK
        )
        assert list(by_profile.df["engines"].unique()) == [1, 2]
        assert any("controller unregisters them" in n for n in by_profile.metadata["notes"])
        assert set(by_profile.df["scheme"]) == {"unknown"}
        url_file = next((tmp_path / "profile_outside" / "security").glob("*-client.json"))
        by_url = run_taskflood(url_file=str(url_file), tasks=8, engines=2, **FLOOD_QUICK)
        assert len(by_url.df) == FLOOD_QUICK["repeat"]
        with pytest.raises(ValueError, match="has 2 engines, and the project never resizes"):
            run_taskflood(url_file=str(url_file), tasks=8, engines=3)
        assert len(client.ids) == 2  # still running, still 2 engines


def test_an_interrupt_while_the_cluster_starts_leaves_nothing(kernel_sigint):
    own_cluster.stop()
    kernel_sigint(
        0,
        when=lambda: any(
            "ipyparallel.engine" in " ".join(p.cmdline()) for p in cluster_processes()
        ),
    )
    with pytest.raises(KeyboardInterrupt):
        run_taskflood(tasks=4, engines=2, repeat=1, warmup=0)
    assert own_cluster.current() is None
    assert cluster_processes() == []
    result = run_taskflood(tasks=8, engines=2, repeat=1, warmup=0)
    assert result.metadata["notes"][0].startswith("started a leastload cluster of 2 engines")


def test_a_task_timeout_names_the_point_and_stops_the_cluster(caplog):
    own_cluster.managed(1, "leastload", 60)  # so the short timeout below covers only the tasks
    with pytest.raises(
        TimeoutError,
        match=r"map 4 tasks, 1 engine, lb/leastload, 2s sleeps: "
        r"no task was submitted or answered for 1 s",
    ):
        run_taskflood(test="map", duration=2, tasks=4, engines=1, repeat=1, warmup=0, timeout=1)
    assert own_cluster.current() is None
    assert cluster_processes() == []
    # The words above say it all: not ipyparallel's traceback of the aborted map's
    # result, which it cannot join ("'TaskAborted' object is not iterable"), logged
    # (a terminal's stderr, a notebook's cell) by the futures' callback runner.
    logged = [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]
    assert logged == [], [r.getMessage() for r in logged]


def test_an_engine_lost_from_someone_elses_cluster_is_named_through_its_controller(
    tmp_path, monkeypatch
):
    import os
    import threading
    import time

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))
    with outside_cluster("outside3", engines=2) as (outside, client):
        victim = client[client.ids[0]].apply_sync(os.getpid)
        killed_at: list[float] = []

        def seen() -> int:
            """Tasks the hub has been sent: held (queued, running, unassigned) or done."""
            status = hub_queues(client, 30)
            held = status.pop("unassigned")
            return held + sum(q["queue"] + q["tasks"] + q["completed"] for q in status.values())

        def kill() -> None:
            # Mid-submission: a thousand of the 20,000 tasks have reached the hub.
            wait_until(lambda: seen() > 1000, 120, "1,000 tasks at the hub", every=0.05)
            killed_at.append(time.monotonic())
            os.kill(victim, 9)

        threading.Thread(target=kill, daemon=True).start()
        # Named through the controller's registrations, whether the client first hears of
        # the death as the unregistration or as a task's EngineError (both happen), and
        # not as a stall or a task's own failure.
        with pytest.raises(RuntimeError, match=r"engine \d+ of 2 unregistered") as err:
            run_taskflood(
                profile="outside3",
                cluster_id=outside.cluster_id,
                tasks=20_000,
                engines=2,
                repeat=1,
                warmup=0,
            )
        assert killed_at, "the flood ended before the engine was killed"
        assert "heartbeat" in str(err.value) and "had no result" in str(err.value)
        assert len(client.ids) == 1  # the rest of it left running


def test_an_existing_cluster_is_left_running_after_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))
    with outside_cluster("outside2", engines=1) as (outside, client):
        with pytest.raises(TimeoutError):
            run_taskflood(
                profile="outside2",
                cluster_id=outside.cluster_id,
                test="map",
                duration=2,
                tasks=2,
                engines=1,
                repeat=1,
                warmup=0,
                timeout=1,
            )
        client.wait(timeout=10)  # the sleeps finish on the cluster that is still there
        assert len(client.ids) == 1


def test_engines_that_never_register_time_out_and_leave_nothing(python_startup):
    own_cluster.stop()
    # Engines that hang before they register, however fast the machine or late the wait.
    python_startup(
        "import sys, time\n"
        "if 'ipyparallel.engine' in ' '.join(sys.orig_argv):\n"
        "    time.sleep(600)\n"
    )
    stalled = r"registered, not 2: no engine registered or left for 0\.5 s"
    with pytest.raises(TimeoutError, match=stalled):
        run_taskflood(tasks=4, engines=2, timeout=0.5)
    assert own_cluster.current() is None
    assert [(p.cmdline(), p.ppid()) for p in cluster_processes()] == []


def test_a_killed_kernel_leaves_no_cluster(tmp_path):
    """SIGKILL skips every cleanup in the process that started the cluster; the reaper
    beside the cluster must stop it."""
    script = textwrap.dedent(
        """
        import json, time
        from zmqbench_magic.parallel.clusters import own as own_cluster
        from zmqbench_magic.parallel.flood import run_taskflood
        from zmqbench_magic.parallel.clusters.reaper import processes_of
        run_taskflood(tasks=4, engines=2, repeat=1, warmup=0)
        handle = own_cluster.current()
        pids = [p.pid for p in processes_of(handle.profile_dir)]
        print(json.dumps({"pids": pids, "profile_dir": handle.profile_dir}), flush=True)
        time.sleep(600)
        """
    )
    kernel = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        started = json.loads(kernel.stdout.readline())
        assert len(started["pids"]) >= 5  # controller, its schedulers, 2 engines, 2 nannies
        kernel.kill()
        kernel.wait(10)
        _, alive = psutil.wait_procs(
            [psutil.Process(p) for p in started["pids"] if psutil.pid_exists(p)], timeout=30
        )
        assert alive == []
        # Its own cluster's processes, not another this test process still holds.
        wait_until(
            lambda: processes_of(started["profile_dir"]) == [],
            60,
            "every process of its cluster gone",
        )
        assert not os.path.exists(started["profile_dir"])
    finally:
        kernel.kill()
        kernel.stdout.close()


def test_a_reaper_makes_no_folder_again_in_a_temp_folder_removed_while_it_stops(
    tmp_path, monkeypatch
):
    """A killed kernel's cluster is stopped by its reaper while whoever owns the temp
    folder around its profile (a test run, the machine's clean-up) may be removing it:
    stopping must not make that folder again (it was left, empty, after a run of the
    example notebooks)."""
    from zmqbench_magic.parallel.clusters.reaper import end_cluster_processes, reap

    temp = tmp_path / "zt"
    temp.mkdir()
    profile_dir = str(temp / "zmqbench-ipp-test")
    cluster = ipp.Cluster(
        n=1,
        profile_dir=profile_dir,
        controller_args=["--ping=250", "--nodb"],
        log_level=40,
        shutdown_atexit=False,
    )
    cluster.start_cluster_sync()
    read = ipp.Cluster.from_file

    def read_then_removed(*args, **kwargs):
        found = read(*args, **kwargs)
        shutil.rmtree(temp)  # gone the moment the reaper has read what it stops
        return found

    monkeypatch.setattr(ipp.Cluster, "from_file", read_then_removed)
    try:
        reap(cluster.cluster_file, profile_dir)
        assert processes_of(profile_dir) == []
        assert not temp.exists(), f"made again: {sorted(temp.rglob('*'))}"
    finally:
        end_cluster_processes(profile_dir)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("-n 0", ["tasks must be from 1", "got 0"]),
        ("-e 0", ["engines must be from 1", "got 0"]),
        ("-e 1000", ["engines must be from 1 to", "got 1000"]),
        ("--scheme fastest", ["scheme must be one of leastload, pure", "got fastest"]),
        ("--view remote", ["view must be one of lb, direct", "got remote"]),
        ("--test sprint", ["test must be one of flood, echo, map", "got sprint"]),
        ("--duration 5parsecs", ["duration", "'5parsecs'"]),
        (
            "--profile no_such_profile_zz",
            ["no running cluster found for profile 'no_such_profile_zz'"],
        ),
        ("--url-file /nonexistent/client.json", ["no running cluster found for url file"]),
        ("--profile x --scheme pure lru", ["a running cluster keeps its own scheduler"]),
        ("--ssh-hosts a,b@@c", ["ssh_hosts must be [user@]host[:port]", "got 'b@@c'"]),
        ("--ssh-tunnel a,b", ["ssh_tunnel must be one [user@]gateway[:port]", "got 'a,b'"]),
        ("--task-db mongo", ["task_db must be one of none, dict, sqlite", "got mongo"]),
        ("--profile x --task-db dict", ["a running cluster keeps its own task database"]),
        (
            "--backend processpool --task-db none dict",
            ["backend processpool has no ipyparallel controller"],
        ),
    ],
)
def test_bad_input_is_a_usage_error_and_starts_nothing(ip, line, words):
    running = own_cluster.current()
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("taskflood", f"-q --no-chart {line}")
    for word in words:
        assert word in str(caught.value)
    assert own_cluster.current() is running


def test_the_pure_scheduler_is_restarted_rather_than_resized():
    result = run_taskflood(tasks=16, engines=[2, 1, 3], scheme="pure", **FLOOD_QUICK)
    assert list(result.df["engines"].unique()) == [2, 1, 3]
    assert sum("pure scheduler cannot be resized" in n for n in result.metadata["notes"]) >= 2
    assert (result.df["tasks_per_s"] > 0).all()


def test_a_pure_cluster_whose_client_stops_sending_as_it_starts_is_started_anew(monkeypatch):
    """The second client a pure cluster connects (the one that sees every engine at
    once) is made to stop farming, as ipyparallel's client does on an id gap, after
    which it refuses every task: the start tries once more on a fresh controller and
    says why."""
    connect = own_cluster.ClusterHandle.connect_client
    connects: list[int] = []

    def connect_then_stop_farming_once(handle, timeout):
        connect(handle, timeout)
        connects.append(1)
        if len(connects) == 2:  # the first start's second client
            with pytest.warns(RuntimeWarning):
                handle.client._stop_scheduling_tasks()

    own_cluster.stop()
    monkeypatch.setattr(own_cluster.ClusterHandle, "connect_client", connect_then_stop_farming_once)
    result = run_taskflood(tasks=16, engines=2, scheme="pure", **FLOOD_QUICK)
    assert len(connects) == 4 and (result.df["tasks_per_s"] > 0).all()
    (anew,) = [n for n in result.metadata["notes"] if "started the cluster anew" in n]
    assert "stopped sending tasks to the pure scheduler (engine ids 0, 1:" in anew


def test_engine_logs_and_progress_bars_stay_out_of_the_cell(ip, capfd):
    """Stopping engines (a shrink, a scheme change, --stop) made ipyparallel print each
    engine's whole log; starting printed progress bars. None of it may reach the user."""
    ip.run_line_magic("taskflood", "-q --no-chart -n 16 -e 2 1 -r 1 --warmup 0")
    ip.run_line_magic("taskflood", "-q --no-chart -n 16 -e 1 -r 1 --warmup 0 --scheme lru")
    ip.run_line_magic("taskflood", "--stop")
    out, err = capfd.readouterr()
    for noise in ("Output for", "apply_request", "engine set stopped", "RuntimeWarning", "it/s]"):
        assert noise not in out + err


def test_a_cell_task_reads_the_users_names_and_its_times_are_what_it_did(ip):
    import time as clock

    ip.user_ns.update(nap=0.02, clock_alias=clock)
    result = ip.run_cell_magic(
        "taskflood", "-q -o --no-chart -n 8 16 -e 2 -r 2 --warmup 0", "clock_alias.sleep(nap)"
    )
    df = result.df
    assert set(df["test"]) == {"cell"} and len(df) == 2 * 2
    # Each task sleeps 20 ms: its own time on the engine is at least that (how much
    # more is the scheduler's wake-up, which a busy machine makes long), and lies
    # within its sample's round trip; 8 tasks on 2 engines are 4 naps each, 80 ms of
    # work per engine, 16 tasks 160 ms; the round trip cannot be shorter than that
    # work, and the two engines' work cannot be longer than two round trips.
    assert (df["task_s"] >= 0.02).all() and (df["task_s"] <= df["roundtrip_s"]).all()
    work = df["tasks"].map({8: 0.08, 16: 0.16})
    assert (df["compute_s"] >= work).all() and (df["compute_s"] <= 2 * df["roundtrip_s"]).all()
    assert (df["roundtrip_s"] >= work).all()
    assert df["overhead_s"].between(0, df["roundtrip_s"]).all()
    assert df["overhead_fraction"].between(0, 1).all()


def test_a_cell_task_is_the_same_through_the_function():
    result = run_taskflood(
        task="y = [k for k in range(n)]",
        namespace={"n": 100},
        tasks=4,
        engines=1,
        repeat=1,
        warmup=0,
    )
    assert set(result.df["test"]) == {"cell"} and (result.df["task_s"] > 0).all()


def test_a_task_that_raises_on_an_engine_shows_its_traceback_once_and_stops_all(ip, capfd):
    returned = ip.run_cell_magic(
        "taskflood",
        "-q -o --no-chart -n 1 -e 2 -r 1 --warmup 0",
        "if True:\n    raise ValueError('broken on the engine')",
    )
    assert returned is None
    out, err = capfd.readouterr()
    shown = re.sub(r"\x1b\[[0-9;]*m", "", out + err)  # without the terminal colours
    assert shown.count("ValueError: broken on the engine") == 1
    assert "raise ValueError('broken on the engine')" in shown  # the cell's own line
    assert own_cluster.current() is None and cluster_processes() == []


def test_cell_task_bad_input(ip, capfd):
    running = own_cluster.current()
    with pytest.raises(UsageError, match="--test does not apply to the cell form"):
        ip.run_cell_magic("taskflood", "-q --no-chart --test map", "x = 1")
    assert ip.run_cell_magic("taskflood", "-q --no-chart", "x = (") is None
    assert "SyntaxError" in "".join(capfd.readouterr())
    assert own_cluster.current() is running


class _Phases:
    """A progress display that keeps what it was told, in order."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def __call__(self, done: int, total: int) -> None:
        self.said.append(f"{done} of {total} samples")

    def doing(self, text: str) -> None:
        self.said.append(text)

    def phase(self, text: str) -> None:
        self.said.append(text)


def test_progress_names_each_phase_before_the_samples():
    """A cluster's start, a resize and a warm-up are named as they happen: before, a
    panel said "0 of 6 samples" while the cluster started and "6 of 6 samples" beside
    a resize."""
    own_cluster.stop()
    progress = _Phases()
    run_taskflood(tasks=8, engines=[1, 2], repeat=1, warmup=1, progress=progress)
    said = progress.said
    started = said.index("starting the cluster: the controller")
    registered = said.index("starting the cluster: 1 of 1 engine registered")
    resizing = said.index("resizing the cluster to 2 engines")
    grown = said.index("resizing the cluster to 2 engines: 2 of 2 engines registered")
    warmups = [i for i, text in enumerate(said) if text == "warm-up sample 1 of 1 (not kept)"]
    assert started < registered < warmups[0] < resizing < grown < warmups[1], said
    assert said[-1] == "2 of 2 samples", said
    own_cluster.stop()

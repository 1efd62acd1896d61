"""Where a task's time goes (stages from ipyparallel's own stamps), broadcast views and
push, map chunksize, the process-pool baseline and the advisor, on a real cluster."""

from __future__ import annotations

import contextlib
import re
import time

import numpy as np
import psutil
import pytest
from conftest import FLOOD_QUICK
from IPython.core.error import UsageError

from zmqbench_magic.parallel.anatomy import engine_offsets, stage_times, stamps
from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.parallel.flood import run_taskflood
from zmqbench_magic.parallel.tasks import echo
from zmqbench_magic.params.taskflood import STAGES
from zmqbench_magic.results import ResultSet

STAGE_COLUMNS = [f"{stage}_s" for stage in STAGES]
# ipyparallel's stamps are datetimes: microseconds.
RESOLUTION_S = 1e-6


@pytest.fixture(scope="module", autouse=True)
def stopped_at_the_end():
    yield
    own_cluster.stop()


@pytest.mark.slow  # a real cluster
def test_every_stage_is_non_negative_and_they_add_up_to_the_round_trip():
    handle = own_cluster.managed(2, "leastload", 60)
    view = handle.client.load_balanced_view()
    called, results = [], []
    began = time.time()
    for _ in range(64):
        called.append(time.time())
        results.append(view.apply_async(echo, ""))
    for result in results:
        result.get(timeout=30)
    ended = time.time()
    times = stamps(called, results)
    assert times.shape == (64, 6) and not np.isnan(times).any()
    stages = np.diff(times[:, :5], axis=1)
    assert (stages >= -RESOLUTION_S).all(), stages.min(axis=0)
    # The stages cover the sample: from the first call to the last reply, which came
    # in before the wait for it returned.
    covered = times[:, 4].max() - times[:, 0].min()
    assert times[:, 0].min() >= began - RESOLUTION_S
    assert times[:, 4].max() <= ended + RESOLUTION_S
    assert (ended - began) - covered >= -2 * RESOLUTION_S
    assert set(times[:, 5]) == set(handle.engine_ids())  # each message knows its engine


@pytest.mark.slow  # a real cluster
def test_a_flood_reports_each_stage_and_run_is_the_engines_own_time():
    flood = run_taskflood(tasks=[16, 64], engines=2, **FLOOD_QUICK)
    df = flood.df
    for column in [*STAGE_COLUMNS, *(f"{s}_p90_s" for s in STAGES)]:
        assert df[column].notna().all() and (df[column] >= 0).all(), column
    assert (df["run_s"] < df["queue_s"] + df["return_s"]).all()  # an echo is next to nothing
    # A map's message is one chunk: its run stage is its items' sleeps.
    mapped = run_taskflood(
        test="map", tasks=8, engines=2, duration=0.01, chunksize=[1, 4], **FLOOD_QUICK
    )
    run = mapped.summary().set_index("chunksize")["run_s"]
    assert run[1] >= 0.0099 and run[4] >= 0.0399 and run[4] > run[1]
    assert "per task" in str(flood) and "(submit/queue/run/return)" in str(flood)


def test_engine_clocks_of_other_hosts_are_estimated_from_the_fastest_message_each_way():
    rows = []
    for engine, offset in ((0, 0.0), (1, 5.0)):  # engine 1's clock is 5 s ahead
        for i in range(20):
            called = 100.0 + i * 0.01
            submitted = called + 0.0001
            started = submitted + 0.001 + (i % 3) * 0.001 + offset
            completed = started + 0.002
            received = completed - offset + 0.001 + (i % 2) * 0.001
            rows.append((called, submitted, started, completed, received, engine))
    times = np.array(rows)
    offsets = engine_offsets(times)
    assert offsets[0] == pytest.approx(0.0, abs=1e-9)
    assert offsets[1] == pytest.approx(5.0, abs=1e-9)
    as_if_one_clock = stage_times(times, other_hosts=False)
    assert as_if_one_clock["return_s"] < -1  # what an uncorrected clock would say
    corrected = stage_times(times, other_hosts=True)
    assert corrected["run_s"] == pytest.approx(0.002)
    assert 0.001 <= corrected["queue_s"] <= 0.003 and 0.001 <= corrected["return_s"] <= 0.002


@pytest.mark.slow  # a real cluster
def test_broadcast_views_run_each_task_on_every_engine_and_push_to_all():
    handle = own_cluster.managed(2, "leastload", 60)
    # Each task runs on each engine: a reply from each, or one reply naming both.
    for coalescing, messages in ((False, 10), (True, 5)):
        view = handle.client.broadcast_view(targets=[0, 1], is_coalescing=coalescing)
        called = [time.time() for _ in range(5)]
        results = [view.apply_async(echo, "") for _ in range(5)]
        for result in results:
            assert result.get(timeout=30) == ["", ""]
        times = stamps(called, results)
        assert len(times) == messages and (np.diff(times[:, :5], axis=1) >= -RESOLUTION_S).all()
    handle.client.outstanding.clear()  # what the calls above left (see below)
    flood = run_taskflood(tasks=10, engines=2, view=["broadcast", "coalescing"], repeat=1, warmup=0)
    assert sorted(flood.df["view"]) == ["broadcast", "coalescing"]
    assert (flood.df[STAGE_COLUMNS] >= 0).all().all()
    # Nothing is left outstanding (ipyparallel leaves a broadcast's own id there): a
    # later sample's clean-up would wait for it in vain.
    assert not handle.client.outstanding
    pushed = run_taskflood(
        test="push",
        tasks=4,
        engines=2,
        size="256k",
        view=["direct", "broadcast", "coalescing"],
        **FLOOD_QUICK,
    )
    df = pushed.df
    assert (df["mbit_per_s"] > 0).all() and (df[STAGE_COLUMNS] >= 0).all().all()
    assert set(df["view"]) == {"direct", "broadcast", "coalescing"}


def _pool_workers() -> list[psutil.Process]:
    """The pool's workers (not multiprocessing's resource tracker, which spawn starts
    once and which ends with this process). A child that ends as it is looked at (a
    zombie by then: a stopping cluster's engine) runs nothing, and is not one."""
    found = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
    return found


@pytest.mark.slow  # a real cluster beside the pool
def test_the_process_pool_baseline_has_the_same_rows_and_no_stages():
    result = run_taskflood(
        backend=["ipyparallel", "processpool"], tasks=64, engines=2, **FLOOD_QUICK
    )
    df = result.df
    pool, ipp_rows = df[df["backend"] == "processpool"], df[df["backend"] == "ipyparallel"]
    assert len(pool) == len(ipp_rows) == 2
    assert (pool["tasks_per_s"] > 0).all() and (pool["sent_s"] > 0).all()
    assert pool[STAGE_COLUMNS].isna().all().all() and ipp_rows[STAGE_COLUMNS].notna().all().all()
    assert "2 workers processpool" in str(result)
    mapped = run_taskflood(
        backend="processpool",
        test="map",
        tasks=8,
        engines=2,
        duration=0.01,
        chunksize=[1, 4],
        **FLOOD_QUICK,
    )
    # Sleeps on 2 workers: at most 1 (how far below is the machine's load to say).
    assert (mapped.df["efficiency"] > 0).all() and (mapped.df["efficiency"] <= 1.01).all()
    assert _pool_workers() == []  # the workers went with the run


def test_the_advisor_works_out_a_known_flood_by_hand():
    """Two engines running 200 tiny tasks a second spend 2 / 200 = 10 ms of engine time
    on each task's overhead; 90% efficiency needs tasks of 9 x 10 = 90 ms, and 1 ms
    items chunked by 9 x 10 / 1 = 90. Six samples of 160-240 tasks/s: their median
    overhead is 10 ms, the interval's ends 2/240 and 2/160 s, so 75 to 112.5 ms."""
    rows = [
        {
            "test": "flood",
            "tasks": 128,
            "engines": 2,
            "view": "lb",
            "scheme": "leastload",
            "tasks_per_s": rate,
            "sample": i,
            "sent_s": 0.1,
            "roundtrip_s": 128 / rate,
        }
        for i, rate in enumerate([160, 180, 200, 200, 220, 240])
    ]
    (sentence,) = ResultSet("flood", rows).advice()
    assert sentence.startswith(
        "with 2 engines (lb view, leastload scheme), tasks must last at least 90 ms ("
    )
    assert "CI 75 ms to 112 ms" in sentence or "CI 75 ms to 113 ms" in sentence, sentence
    assert "or be chunked by at least 90 for 1 ms tasks" in sentence, sentence
    assert "from 6 samples of a flood of 128 tiny tasks" in sentence, sentence


def test_the_map_advice_reads_its_longest_tasks_whose_overhead_grew():
    """Maps of 1 ms sleeps at 1/6 efficiency (5 ms of overhead a task) and of 100 ms
    sleeps at 100/115 (15 ms: the sleeps overshoot in proportion): tasks must last
    9 x 15 = 135 ms, read from the longest tasks alone; the 5 ms of the short ones would
    advise 45 ms, which the 100 ms map itself (87%) shows is not enough."""
    rows = [
        {
            "test": "map",
            "backend": "ipyparallel",
            "tasks": 16,
            "engines": 2,
            "view": "lb",
            "scheme": "leastload",
            "chunksize": 1,
            "duration": duration,
            "efficiency": duration / (duration + overhead),
            "sample": i,
            "tasks_per_s": 10.0,
        }
        for duration, overhead in ((0.001, 0.005), (0.1, 0.015))
        for i in range(6)
    ]
    (sentence,) = ResultSet("flood", rows).advice()
    assert "tasks must last at least 135 ms" in sentence, sentence
    assert "overhead 15 ms of engine time per task, from 6 samples of a map of 100 ms " in sentence
    assert sentence.endswith("sleeps, the longest measured)")


def test_the_memory_advice_extrapolates_a_known_flood_by_hand():
    """Six samples of a 1,000-task flood whose client rose 18 to 23 kB a task (median
    20.5) and a controller that rose 1,000 to 1,500 kB (median 1.25 MB); the engines'
    figure is no advice. Both are peaks, which reuse of freed memory holds down by as
    much as the allocator kept: given a task, not forecast for 100,000 tasks."""
    rows = [
        {
            "test": "flood",
            "backend": "ipyparallel",
            "tasks": tasks,
            "engines": 2,
            "view": "lb",
            "scheme": "leastload",
            "tasks_per_s": 200.0,
            "sample": i,
            "sent_s": 0.1,
            "roundtrip_s": tasks / 200,
            "client_kb_per_task": client,
            "controller_kb_per_task": controller,
            "engines_kb_per_task": 1.0,
        }
        for tasks in (10, 1000)
        for i, (client, controller) in enumerate(
            zip([18, 19, 20, 21, 22, 23], [1000, 1100, 1200, 1300, 1400, 1500], strict=True)
        )
    ]
    (sentence,) = [a for a in ResultSet("flood", rows).advice() if "in flight" in a]
    assert sentence == (
        "with 2 engines (lb view, leastload scheme), each task in flight took about 20.5 kB "
        "in this kernel's peak and 1.25 MB in the controller's peak (medians of 6 samples of "
        "a flood of 1,000 tasks); this kernel's peak and the controller's peak are not "
        "forecast: memory an earlier flood freed is reused before a peak rises, by as much "
        "as the allocator kept, so a peak's rise a task does not scale to a larger flood"
    )
    # Where the controller could not be measured (Dask's runs in the kernel): left out.
    for row in rows:
        row["controller_kb_per_task"] = float("nan")
    (sentence,) = [a for a in ResultSet("flood", rows).advice() if "in flight" in a]
    assert "the controller" not in sentence and "this kernel's peak is not forecast" in sentence
    # A kernel whose peak never rose (a process pool's futures): no "0 B" and no flood
    # of it, but what the figure can and cannot tell.
    for row in rows:
        row["client_kb_per_task"] = 0.0
    (sentence,) = [a for a in ResultSet("flood", rows).advice() if "in flight" in a]
    assert sentence == (
        "with 2 engines (lb view, leastload scheme), each task in flight showed no growth in "
        "this kernel's peak (under 1.02 B a task, one kilobyte over the flood) (medians of 6 "
        "samples of a flood of 1,000 tasks)"
    )


@pytest.mark.slow  # a real cluster
def test_the_advisor_speaks_after_a_real_flood():
    result = run_taskflood(tasks=[16, 128], engines=2, repeat=6, warmup=1)
    (sentence,) = [a for a in result.advice() if "tasks must last" in a]
    shape = (
        r"with 2 engines \(lb view, leastload scheme\), tasks must last at least [\d.]+ m?s "
        r"\(9\d% CI [\d.]+ m?s to [\d.]+ m?s\)"
    )
    assert re.match(shape, sentence), sentence
    assert "for 90% efficiency" in sentence and "from 6 samples of a flood of 128" in sentence
    # Printed whole, wrapped at spaces to 100 columns.
    assert f"advice: {sentence}" in " ".join(str(result).split())


@pytest.mark.slow  # a real cluster, restarted for the pure scheme
def test_broadcast_views_work_with_the_pure_scheduler_too():
    result = run_taskflood(
        tasks=8, engines=2, view=["broadcast", "coalescing"], scheme="pure", repeat=1, warmup=0
    )
    assert (result.df["tasks_per_s"] > 0).all() and set(result.df["scheme"]) == {"pure"}


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("--test map --chunksize 0", ["chunksize must be from 1", "got 0"]),
        ("--test push --view lb", ["view lb: push goes to every engine"]),
        ("--test map --view broadcast", ["view broadcast: map runs on the lb or direct view"]),
        ("--test map --view direct --chunksize 4", ["chunksize is the load-balanced view's"]),
        ("--backend processpool --test push --view direct", ["push is ipyparallel's alone"]),
        ("--backend processpool --view lb direct", ["backend processpool has no views"]),
        (
            "--backend threads",
            ["backend must be one of ipyparallel, processpool, dask, ray", "got threads"],
        ),
    ],
)
def test_bad_anatomy_settings_are_usage_errors(ip, line, words):
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("taskflood", f"-q --no-chart {line}")
    for word in words:
        assert word in str(caught.value)


@pytest.mark.slow  # a real cluster and a pool
def test_the_magic_sweeps_backends_views_and_chunksizes(ip):
    result = ip.run_line_magic(
        "taskflood",
        "-q --no-chart -o --test map -n 8 -e 2 --duration 1ms --chunksize 1 4 "
        "--backend ipyparallel processpool -r 1 --warmup 0",
    )
    assert sorted(set(zip(result.df["backend"], result.df["chunksize"], strict=True))) == [
        ("ipyparallel", 1),
        ("ipyparallel", 4),
        ("processpool", 1),
        ("processpool", 4),
    ]
    pushed = ip.run_line_magic(
        "taskflood",
        "-q --no-chart -o --test push --view direct coalescing -n 4 -e 2 "
        "--size 64k -r 1 --warmup 0",
    )
    assert sorted(pushed.df["view"]) == ["coalescing", "direct"]


@pytest.mark.slow  # a real cluster and a pool
def test_the_panel_runs_the_process_pool_and_chunked_maps():
    from zmqbench_magic.widgets import TaskFloodPanel

    panel = TaskFloodPanel(
        test="map", tasks=[8, 8], engines=2, duration=[0.001, 0.001], repeat=1, warmup=0
    )
    assert not panel.controls["chunksize"].disabled
    panel.controls["chunksize"].value = 4
    panel.controls["backend"].value = "processpool"
    panel.run()
    df = panel.result.df
    assert list(df["backend"]) == ["processpool"] and list(df["chunksize"]) == [4]
    panel.controls["test"].value = "flood"
    assert panel.controls["chunksize"].disabled
    panel.controls["backend"].value = "ipyparallel"
    panel.controls["view"].value = "coalescing"
    panel.run()
    assert panel.result.df["view"].iloc[-1] == "coalescing"
    # A flood on ipyparallel has stages: their chart stands beside the flood's.
    assert "Where a task" in panel.chart.to_json()
    assert _pool_workers() == []

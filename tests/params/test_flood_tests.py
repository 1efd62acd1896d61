"""The flood's test records (params/taskflood.py): each declares what its tasks carry,
what its rows fill, where it runs and its words, and the options, the panel's greying
and the advice follow from the record alone."""

from __future__ import annotations

import dataclasses

import pytest

from zmqbench_magic.params import METRICS
from zmqbench_magic.params.flood_tests import (
    CELL_TEST,
    ECHO_TEST,
    FLOOD_TEST,
    FLOOD_TESTS,
    MAP_TEST,
    PUSH_TEST,
)
from zmqbench_magic.params.taskflood import TEST, VIEW, FloodParams
from zmqbench_magic.results import ResultSet

SWEPT = {p.name for p in FloodParams.sweep_fields()}
# The settings and metrics some test alone has.
OWN_SETTINGS = {name for test in FLOOD_TESTS.values() for name in test.settings}
OWN_METRICS = {name for test in FLOOD_TESTS.values() for name in test.metrics}
OFFERED = [test for test in FLOOD_TESTS.values() if test.offered]


@pytest.mark.parametrize("test", FLOOD_TESTS.values(), ids=list(FLOOD_TESTS))
def test_each_record_names_declared_settings_metrics_and_views(test):
    assert set(test.settings) <= SWEPT
    assert set(test.metrics) <= set(METRICS)
    assert test.chart_metric in ("", *test.metrics)
    assert test.overhead_from in ("", "tasks_per_s", *test.metrics)
    assert set(test.views) <= set(VIEW.choices) and test.views
    # A test that cannot run on some view says why, in the words after its name.
    assert bool(test.off_view) == (set(test.views) != set(VIEW.choices))
    assert test.sends_arrays == ("size" in test.settings)
    assert test.to_every_engine <= test.sends_arrays
    # Its words in the memory advice take its array's size where it sends one.
    assert ("{size}" in test.memory_words) == (test.sends_arrays and bool(test.memory_words))


def test_test_offers_the_offered_records_in_order_with_their_help():
    assert TEST.choices == ("flood", "echo", "map", "push")
    assert TEST.default == FLOOD_TEST.name and CELL_TEST.name not in TEST.choices
    assert TEST.help == (
        "flood: tiny tasks (an echo of an empty string) as fast as possible; echo: numpy "
        "arrays of --size bytes there and back; map: map_async of time.sleep over --duration; "
        "push: an array of --size bytes pushed to every engine (direct, broadcast or "
        "coalescing view)"
    )


def test_bandwidth_counts_each_crossing_and_each_engine_as_the_record_says():
    assert FLOOD_TEST.mbit_per_s(1000, 10, 4, 1.0) == 0.0
    assert ECHO_TEST.mbit_per_s(1000, 10, 4, 1.0) == 2 * 1000 * 10 * 8 / 1e6
    assert PUSH_TEST.mbit_per_s(1000, 10, 4, 1.0) == 4 * 1000 * 10 * 8 / 1e6


@pytest.mark.parametrize("test", FLOOD_TESTS.values(), ids=list(FLOOD_TESTS))
def test_a_setting_applies_to_the_tests_whose_record_names_it(test):
    for name in SWEPT:
        expected = name not in OWN_SETTINGS or name in test.settings
        assert FloodParams.applies_to(test.name, name) == expected, name


@pytest.mark.parametrize("test", OFFERED, ids=lambda t: t.name)
@pytest.mark.parametrize("view", VIEW.choices)
def test_a_view_is_refused_where_the_tests_record_leaves_it_out(test, view):
    if view in test.views:
        FloodParams(test=test.name, view=view)
    else:
        with pytest.raises(ValueError, match=f"^view {view}: {test.name} {test.off_view}$"):
            FloodParams(test=test.name, view=view)


@pytest.mark.parametrize("test", OFFERED, ids=lambda t: t.name)
def test_a_futures_backend_runs_the_tests_whose_record_says_it_has_a_counterpart(test):
    settings = {"test": test.name, "backend": "processpool", "view": test.views[0]}
    if test.futures:
        FloodParams(**settings)
    else:
        with pytest.raises(ValueError, match=f"{test.name} is ipyparallel's alone"):
            FloodParams(**settings)


def test_chunks_are_refused_off_the_lb_view_for_a_test_that_reads_them():
    FloodParams(test=MAP_TEST.name, view="lb", chunksize=4)
    with pytest.raises(ValueError, match="chunksize is the load-balanced view's"):
        FloodParams(test=MAP_TEST.name, view="direct", chunksize=4)


def _rows(test: str, **metrics: float) -> list[dict]:
    """Six samples of a 2-engine lb flood of 128 tasks at 200 tasks/s."""
    return [
        {
            "test": test,
            "backend": "ipyparallel",
            "tasks": 128,
            "engines": 2,
            "view": "lb",
            "scheme": "leastload",
            "chunksize": 1,
            "size": 1024,
            "duration": 0.01,
            "tasks_per_s": 200.0,
            "sample": i,
            "sent_s": 0.1,
            "roundtrip_s": 0.64,
            "client_kb_per_task": 20.0,
            "controller_kb_per_task": float("nan"),
            "engines_kb_per_task": float("nan"),
            **metrics,
        }
        for i in range(6)
    ]


def test_the_advice_reads_which_tests_it_applies_to_from_their_records(monkeypatch):
    def advised(test: str, **metrics: float) -> list[str]:
        return ResultSet("flood", _rows(test, **metrics)).advice()

    # flood: overhead from its task rate, and memory per task.
    (size, memory) = advised("flood")
    assert "from 6 samples of a flood of 128 tiny tasks" in size and "of 128 tasks)" in memory
    # echo: memory per echo of its arrays, no overhead; map: overhead from its efficiency.
    (memory,) = advised("echo", mbit_per_s=10.0)
    assert "of 128 echoes of 1k B arrays" in memory
    (size,) = advised("map", efficiency=0.5)
    assert "from 6 samples of a map of 10 ms sleeps, the longest measured" in size
    assert advised("push", mbit_per_s=10.0) == []
    # A record that says otherwise is followed: push advised as a flood is.
    as_flood = dataclasses.replace(
        PUSH_TEST, overhead_from="tasks_per_s", memory_words="pushes of {size} B arrays"
    )
    monkeypatch.setitem(FLOOD_TESTS, PUSH_TEST.name, as_flood)
    (size, memory) = advised("push", mbit_per_s=10.0)
    assert "tiny tasks" in size and "of 128 pushes of 1k B arrays" in memory

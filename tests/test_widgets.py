"""The panels from Python: every control against its declaration, Run, Stop, Clear,
accumulation, export and the engines slider, on real sockets and a real cluster.
(What a person sees in a browser is tests/test_browser.py.)"""

from __future__ import annotations

import html
import itertools
import os
import re
import sys
import threading

import ipywidgets as widgets
import pandas as pd
import pytest
from conftest import TINY, cluster_processes, wait_until
from IPython.core.error import UsageError

import zmqbench_magic
from zmqbench_magic.panels.panel import NOT_CONTROLS
from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.params.flood_tests import FLOOD_TESTS
from zmqbench_magic.params.units import KiB, parse_messages
from zmqbench_magic.sockets.kernel.measure import run_throughput
from zmqbench_magic.widgets import PANELS, LatencyPanel, TaskFloodPanel, ThroughputPanel

FLOOD_TINY = {"repeat": 1, "warmup": 0}
# What each range slider offers, worked out from the declared ranges: sizes 1 B to 1 GiB
# in powers of two (31 values); tasks 1 to 10^6 (2^0 to 2^19); durations 0 and 1-2-5
# steps from 0.1 ms to 3,600 s (2,000 s the last); rates 0 (closed loop) and 1-2-5 steps
# from 10 to 10M msgs/s.
EXPECTED_RANGES = {
    "size": [2**i for i in range(31)],
    "tasks": [2**i for i in range(20)],
    "duration": [
        0,
        1e-4,
        2e-4,
        5e-4,
        1e-3,
        2e-3,
        5e-3,
        0.01,
        0.02,
        0.05,
        0.1,
        0.2,
        0.5,
        1,
        2,
        5,
        10,
        20,
        50,
        100,
        200,
        500,
        1000,
        2000,
    ],
    "rate": [
        0,
        10,
        20,
        50,
        100,
        200,
        500,
        1e3,
        2e3,
        5e3,
        1e4,
        2e4,
        5e4,
        1e5,
        2e5,
        5e5,
        1e6,
        2e6,
        5e6,
        1e7,
    ],
}


def svg_of(panel):
    (output,) = panel.output.outputs  # one output: redrawn in place, never appended
    return output["data"].get("image/svg+xml")


@pytest.mark.parametrize("benchmark", sorted(PANELS))
def test_every_parameter_has_a_control_built_from_its_declaration(benchmark):
    panel = PANELS[benchmark]()
    # Every one but --until: a panel measures one value of each setting a run, so it
    # never has two arms to decide between.
    fields = [p for p in panel.params_class.fields() if p.name not in NOT_CONTROLS]
    assert NOT_CONTROLS == ("until",)
    assert list(panel.controls) == [p.name for p in fields]
    for param in fields:
        control = panel.controls[param.name]
        assert control.description == param.axis_title
        assert control.tooltip == param.help
        value = control.value
        if isinstance(control, widgets.SelectionRangeSlider):
            assert value == (param.default, param.default)
            options = [v for _, v in control.options]
            assert options == pytest.approx(EXPECTED_RANGES[param.name]), param.name
        else:
            assert value == param.default, param.name
        if param.choices:
            assert [v for _, v in control.options] == list(param.choices)
        if isinstance(
            control, (widgets.IntSlider, widgets.BoundedIntText, widgets.BoundedFloatText)
        ):
            # A value that turns the feature off may lie below the range (max-time 0).
            low = param.low if param.off is None else min(param.low, param.off)
            assert (control.min, control.max) == (low, param.high)
    # The defaults read back are the params' defaults.
    assert panel.params() == panel.params_class()


# Settings whose other value is one of this machine's, given as such.
_OWN_VALUES = {
    "remote": "tcp://127.0.0.1:5555",  # a standing far end on loopback (nothing is reached)
    "server_url": "http://127.0.0.1:8888/",  # a running Jupyter server's (nothing is reached)
    "python": sys.executable,  # an interpreter: this one, by its path
    "idle": 0.001,  # a pause shorter than the far end's wait (--timeout)
}


def _another_value(control, name: str = "", benchmark: str = ""):
    """A value the control can show other than its current one, and what it stands for."""
    if name in _OWN_VALUES:
        return _OWN_VALUES[name], _OWN_VALUES[name]
    if (benchmark, name) == ("flood", "address"):  # a Dask scheduler's (nothing is reached)
        return "tcp://127.0.0.1:8786", "tcp://127.0.0.1:8786"
    if name == "cpu":  # a CPU this process may use
        first = str(min(os.sched_getaffinity(0)))
        return first, first
    if isinstance(control, widgets.SelectionRangeSlider):
        low, high = control.options[1][1], control.options[2][1]
        return (low, high), [low, high]
    if isinstance(control, (widgets.SelectionSlider, widgets.ToggleButtons, widgets.Dropdown)):
        other = next(v for _, v in reversed(control.options) if v != control.value)
        return other, other
    if isinstance(control, widgets.Combobox):  # a count of messages, picked or typed
        return control.options[-1], parse_messages(control.options[-1])
    if isinstance(control, widgets.Text):
        # A valid address too (a loopback one: a host name would be looked up).
        return "127.0.0.2", "127.0.0.2"
    return control.max, control.max  # the numeric boxes and sliders


# Settings that only one pattern has a use for: only a publisher drops, only a ROUTER
# routes, publishers feed a proxy.
PATTERN_IT_NEEDS = {"nodrop": "pubsub", "mandatory": "router", "publishers": "proxy"}


@pytest.mark.parametrize("benchmark", sorted(PANELS))
def test_each_control_sets_its_own_parameter(benchmark):
    for param in PANELS[benchmark].params_class.fields():
        panel = PANELS[benchmark]()
        if param.name == "until":  # one value of each setting: no two arms to decide
            assert param.name not in panel.controls
            continue
        if benchmark == "flood" and param.name == "address":  # a Dask scheduler: --backend dask
            panel.controls["backend"].value = "dask"
        if param.name == "server_url":  # the server --via server goes through
            panel.controls["via"].value = "server"
        if param.name in PATTERN_IT_NEEDS:
            panel.controls["pattern"].value = PATTERN_IT_NEEDS[param.name]
        if param.name == "pattern":  # a joiner joins a publisher already sending
            panel.controls["rate"].value = _another_value(
                panel.controls["rate"], "rate", benchmark
            )[0]
        if param.name == "conflate":  # a read's age comes from numbered, paced messages
            panel.controls["sequence"].value = True
            panel.controls["rate"].value = _another_value(
                panel.controls["rate"], "rate", benchmark
            )[0]
        if param.name == "slow_peers":  # only receivers that work are slow
            panel.controls["work"].value = _another_value(
                panel.controls["work"], "work", benchmark
            )[0]
        shown, meant = _another_value(panel.controls[param.name], param.name, benchmark)
        panel.controls[param.name].value = shown
        expected = tuple(meant) if isinstance(meant, list) else meant
        if param.sweep and not isinstance(meant, list):
            expected = (meant,)
        assert getattr(panel.params(), param.name) == expected, param.name


def test_the_controls_are_the_kinds_a_user_expects():
    thr, flood = ThroughputPanel(), TaskFloodPanel()
    assert isinstance(thr.controls["size"], widgets.SelectionRangeSlider)
    sizes = [v for _, v in thr.controls["size"].options]
    assert sizes[0] == 1 and sizes[-1] == 1 << 30
    assert all(b == 2 * a for a, b in itertools.pairwise(sizes))  # powers of two
    assert [label for label, _ in thr.controls["size"].options][10] == "1k"
    assert isinstance(thr.controls["copy"], widgets.ToggleButtons)
    assert [label for label, _ in thr.controls["copy"].options] == ["copy", "zero-copy"]
    assert isinstance(thr.controls["transport"], widgets.ToggleButtons)
    assert isinstance(thr.controls["count"], widgets.BoundedIntText)
    hwm = thr.controls["hwm"]
    assert isinstance(hwm, widgets.Combobox) and hwm.value == "auto"
    assert list(hwm.options) == ["auto", "0", "10", "100", "1k", "10k", "100k"]
    assert isinstance(flood.controls["engines"], widgets.IntSlider)
    assert flood.controls["engines"].min == 1
    assert isinstance(flood.controls["tasks"], widgets.SelectionRangeSlider)
    assert isinstance(flood.controls["scheme"], widgets.Dropdown)


@pytest.mark.parametrize(
    "test", [t for t in FLOOD_TESTS.values() if t.offered], ids=lambda t: t.name
)
def test_the_flood_panel_greys_and_moves_as_the_chosen_tests_record_says(test):
    panel = TaskFloodPanel(view="lb")
    panel.controls["test"].value = test.name
    for name in ("size", "duration", "chunksize"):
        assert panel.controls[name].disabled == (name not in test.settings), name
    # A test that goes to every engine has none to pick on the load-balanced view.
    moved = test.to_every_engine
    assert panel.controls["view"].value == (test.views[0] if moved else "lb")
    assert ("goes to every engine: the view is now" in panel.status.value) == moved


def test_the_controls_read_back_as_the_sweep_they_show():
    panel = ThroughputPanel()
    panel.controls["size"].value = (1 * KiB, 8 * KiB)
    panel.controls["copy"].value = False
    panel.controls["transport"].value = "ipc"
    panel.controls["count"].value = 500
    params = panel.params()
    assert params.size == (1024, 2048, 4096, 8192)
    assert (params.copy, params.transport, params.count) == ((False,), ("ipc",), 500)


def test_a_prefill_off_the_grid_is_kept_and_bad_ones_are_refused():
    panel = ThroughputPanel(size=[100, "1k"])
    assert panel.controls["size"].value == (100, 1024)
    assert panel.params().size == (100, 128, 256, 512, 1024)
    with pytest.raises(ValueError, match="size must be from 1 B to 1G"):
        ThroughputPanel(size=0)
    with pytest.raises(ValueError, match="copy: a panel takes one value per run, got copy, zero"):
        ThroughputPanel(copy=[True, False])


def test_settings_that_do_not_go_together_are_reported_and_start_nothing(no_leftovers):
    panel = ThroughputPanel()
    panel.controls["transport"].value = "inproc"
    panel.controls["peer"].value = "process"
    with pytest.raises(ValueError, match="peer process cannot be used with transport inproc"):
        panel.run()
    panel.run_button.click()  # the button says so in the panel instead of raising
    assert "error: peer process cannot be used" in panel.status.value
    assert not panel.running and panel.result is None


def test_runs_accumulate_and_the_chart_is_redrawn_in_place(no_leftovers):
    panel = ThroughputPanel(size=["1k", "4k"], **TINY)
    result = panel.run()
    assert result is panel.result and len(result.df) == 3 * TINY["repeat"]
    # Progress counts samples: 3 sizes x 2 rounds.
    assert (panel.progress.value, panel.progress.max) == (6, 6)
    first_svg = svg_of(panel)
    assert "3 sizes" in first_svg and "1k B copy" in panel.status.value
    panel.controls["copy"].value = False
    panel.run()
    df = panel.result.df
    assert sorted(df["copy"].unique()) == [False, True] and len(df) == 6 * TINY["repeat"]
    second_svg = svg_of(panel)
    assert second_svg != first_svg and "zero-copy" in second_svg
    # Both copy modes on one transport: the chart gains the zero-copy speed-up beside it.
    assert "Relative speed of zero-copy sends" in second_svg
    assert panel.chart.to_dict()["hconcat"]


def test_the_pattern_dropdown_and_peers_slider_rerun_and_redraw_in_place(no_leftovers):
    panel = ThroughputPanel(size=["1k"], **TINY)
    assert isinstance(panel.controls["pattern"], (widgets.Dropdown, widgets.ToggleButtons))
    assert isinstance(panel.controls["peers"], (widgets.IntSlider, widgets.BoundedIntText))
    panel.run()
    first_svg = svg_of(panel)
    panel.controls["pattern"].value = "pubsub"
    panel.controls["peers"].value = 2
    panel.run()
    df = panel.result.df
    assert set(zip(df["pattern"], df["peers"], strict=True)) == {("pipeline", 1), ("pubsub", 2)}
    second_svg = svg_of(panel)
    assert second_svg != first_svg and "ZeroMQ patterns" in second_svg
    assert "pubsub 2 peers" in panel.status.value


def _chart_points(panel) -> list[dict]:
    """The delivered-rate points the chart draws (with their sample counts)."""
    datasets = panel.chart.to_dict()["datasets"].values()
    return [
        point
        for data in datasets
        for point in data
        if "samples" in point and point.get("metric") == "delivered (msgs/s)"
    ]


def test_the_summary_shows_the_runs_the_chart_pools(no_leftovers):
    """After a second Run on the same sizes, and a third in the other copy mode, each
    summary line carries the chart's figures for its point: the pooled median, the
    pooled samples and the level of the pooled interval."""
    panel = ThroughputPanel(size=["1k", "2k"], **TINY)
    panel.run()
    panel.run()
    panel.controls["copy"].value = False
    panel.run()
    text = html.unescape(panel.status.value)
    assert "the 3 runs on the chart" in text
    points = _chart_points(panel)
    assert sorted(p["samples"] for p in points) == [2, 2, 4, 4]  # pooled, as drawn
    for point in points:
        where = rf"tcp {point['size_label']} {point['mode']} *:"
        (line,) = [s for s in text.splitlines() if re.match(where, s)]
        figures = f"{point['value']:,.0f} msgs/s delivered"
        interval = f"(n={point['samples']}, {point['ci_level']:.0%} CI"
        assert figures in line and interval in line, (line, point)
    # One line a point: the runs are not listed apart.
    assert len([s for s in text.splitlines() if "msgs/s delivered" in s]) == len(points)
    # A warning is one run's: only the latest run's are shown, and said to be its.
    pooled = text.partition("the latest run's warnings")[0]
    assert "warning:" not in pooled


def test_the_run_button_runs_in_the_background_and_greys_the_controls(no_leftovers):
    panel = LatencyPanel(size=["1k", "4k"], count=2000, repeat=2, warmup=0)
    panel.run_button.click()
    # The click returns at once: the run is marked as going before its thread starts.
    assert panel.running and panel.result is None
    assert panel.controls["size"].disabled and panel.run_button.disabled
    assert not panel.stop_button.disabled
    result = panel.wait(timeout=60)
    assert set(result.df["size"]) == {1024, 2048, 4096} and "p50" in panel.status.value
    assert not panel.controls["size"].disabled and panel.stop_button.disabled
    assert "round trip" in svg_of(panel)


@pytest.mark.slow  # real sockets through the shell or a panel, several seconds: the full run
def test_stop_ends_the_run_between_samples_keeping_whole_rounds(no_leftovers):
    panel = ThroughputPanel(size=["1k", "1M"], count=0, min_time=0.05, repeat=3, warmup=0)
    panel.run(wait=False)
    # One round is one sample of each of the 11 sizes: stop inside the second.
    wait_until(lambda: panel.progress.value >= 12, what="the second round")
    panel.stop_button.click()
    result = panel.wait(timeout=60)
    samples = result.df.groupby("size").size()
    # Only whole rounds: every size, each with the same number of samples.
    assert len(samples) == 11 and samples.nunique() == 1 and 1 <= samples.iloc[0] < 3
    assert any("stopped on request after" in n for n in result.metadata["notes"])
    assert "stopped on request" in panel.status.value and svg_of(panel)
    assert not panel.running and not panel.controls["size"].disabled
    # The panel is ready for another run.
    panel.controls["size"].value = (1024, 1024)
    panel.controls["count"].value = 200
    assert len(panel.run().df) == len(result.df) + 3  # one more point, its 3 samples


def test_a_kernel_interrupt_while_waiting_stops_the_run(no_leftovers, kernel_sigint):
    panel = ThroughputPanel(size=["1k", "1M"], count=0, min_time=0.05, warmup=0)
    kernel_sigint(0.7)
    with pytest.raises(KeyboardInterrupt):
        panel.run()
    assert not panel.running
    # The run ended at a sample boundary, with its points so far, and said why.
    assert "stopped on request" in str(panel.result)


def test_clear_forgets_the_result_and_empties_the_chart(no_leftovers):
    panel = ThroughputPanel(**TINY)
    panel.run()
    assert panel.chart is not None
    panel.clear_button.click()
    assert panel.result is None and panel.chart is None
    assert svg_of(panel) is None and "press Run" in panel.output.outputs[0]["data"]["text/plain"]
    panel.run()
    assert len(panel.result.df) == TINY["repeat"]  # the old samples are gone


def test_export_writes_csv_and_the_project_json(no_leftovers, tmp_path, monkeypatch):
    panel = ThroughputPanel(**TINY)
    with pytest.raises(ValueError, match="nothing to export yet"):
        panel.to_csv()
    panel.run()
    loaded = zmqbench_magic.load(panel.save(tmp_path / "r.json"))
    pd.testing.assert_frame_equal(loaded.df, panel.result.df)
    csv = panel.to_csv(tmp_path / "r.csv").read_text().splitlines()
    assert len(csv) == 1 + len(panel.result.rows) and csv[0].startswith("size,")
    monkeypatch.chdir(tmp_path)
    panel.csv_button.click()
    panel.json_button.click()
    assert (tmp_path / "zmqbench-thr.csv").is_file()
    again = zmqbench_magic.load(tmp_path / "zmqbench-thr.json")
    pd.testing.assert_frame_equal(again.df, panel.result.df)
    assert str(tmp_path / "zmqbench-thr.json") in panel.status.value
    # A second press after another run keeps the first file and numbers the next.
    first = (tmp_path / "zmqbench-thr.json").read_bytes()
    panel.run()
    panel.json_button.click()
    assert (tmp_path / "zmqbench-thr.json").read_bytes() == first
    assert len(zmqbench_magic.load(tmp_path / "zmqbench-thr-2.json").runs) == 2
    assert str(tmp_path / "zmqbench-thr-2.json") in panel.status.value
    with pytest.raises(FileExistsError, match="append=True"):
        panel.save(tmp_path / "r.json")


def test_the_core_stop_flag_keeps_the_whole_rounds_before_it():
    stop = threading.Event()

    def progress(done, _total):
        if done == 4:  # the first sample of the second round
            stop.set()

    result = run_throughput(size=[64, 128, 256], progress=progress, stop=stop, **TINY)
    assert list(result.df["size"]) == [64, 128, 256] and set(result.df["sample"]) == {0}
    assert result.metadata["notes"] == [
        "stopped on request after 1 whole round(s) of 2: 3 samples kept, "
        "the round in progress was dropped"
    ]


def test_the_magic_widget_option_prefills_the_panel(ip):
    panel = ip.run_line_magic("zmqthr", "--widget --size 64k 1M --copy false -t ipc")
    assert isinstance(panel, ThroughputPanel) and panel.result is None
    assert panel.controls["size"].value == (65536, 1 << 20)
    assert (panel.controls["copy"].value, panel.controls["transport"].value) == (False, "ipc")
    flood = ip.run_line_magic("taskflood", "--widget -e 1 --test echo -v P")
    assert ip.user_ns["P"] is flood and flood.controls["engines"].value == 1
    assert not flood.controls["size"].disabled and flood.controls["duration"].disabled
    assert own_cluster.current() is None  # a panel starts nothing until Run
    flood.controls["engines"].value = 2
    assert "no cluster yet: Run starts one of 2 engines" in flood.status.value
    assert own_cluster.current() is None and not flood.running
    with pytest.raises(UsageError, match="a panel takes one value per run"):
        ip.run_line_magic("zmqlat", "--widget --transport tcp ipc")
    with pytest.raises(UsageError, match="--widget is for the line magic"):
        ip.run_cell_magic("zmqthr", "--widget", "b'x'")


@pytest.fixture(scope="module")
def flood_panel():
    """One flood panel (and so one cluster) for the module; nothing left at the end."""
    assert cluster_processes() == [], "ipyparallel processes running before the tests"
    panel = TaskFloodPanel(tasks=[8, 16], engines=1, **FLOOD_TINY)
    yield panel
    own_cluster.stop()
    assert cluster_processes() == []
    assert not [t for t in threading.enumerate() if t.name.startswith("zmqbench-")]


@pytest.mark.slow  # a real cluster
def test_the_flood_panel_resizes_its_cluster_when_engines_move(flood_panel):
    flood_panel.run()
    handle = own_cluster.current()
    assert len(handle.engine_ids()) == 1
    cluster_id = handle.cluster.cluster_id
    flood_panel.controls["engines"].value = 2
    flood_panel.wait(timeout=120)
    assert own_cluster.current() is handle and handle.cluster.cluster_id == cluster_id
    assert len(handle.engine_ids()) == 2
    assert "resized the cluster from 1 to 2 engines" in flood_panel.status.value
    flood_panel.run()
    df = flood_panel.result.df
    assert sorted(df["engines"].unique()) == [1, 2]
    # Two engine counts: the tasks/s-by-engines chart joins the flood chart.
    assert "by number of engines" in svg_of(flood_panel)


@pytest.mark.slow  # a real cluster
def test_a_stopped_flood_leaves_the_cluster_idle_and_reusable(flood_panel):
    handle = own_cluster.current()
    flood_panel.controls["tasks"].value = (8, 1024)
    flood_panel.controls["repeat"].value = 3
    before = len(flood_panel.result.rows)
    flood_panel.run(wait=False)
    # A round is one sample of each of the 8 task counts: stop inside the second.
    wait_until(lambda: flood_panel.progress.value >= 9, what="the second flood round")
    flood_panel.stop()
    flood_panel.wait(timeout=120)
    added = flood_panel.result.df.iloc[before:].groupby("tasks").size()
    assert len(added) == 8 and added.nunique() == 1 and added.iloc[0] < 3  # whole rounds
    assert own_cluster.current() is handle and not handle.client.outstanding
    flood_panel.controls["test"].value = "echo"
    assert not flood_panel.controls["size"].disabled
    flood_panel.controls["tasks"].value = (8, 8)
    flood_panel.controls["size"].value = (1024, 4096)
    flood_panel.run()
    assert own_cluster.current() is handle
    # The chart shows the latest test; the result keeps every run.
    assert "array echo" in svg_of(flood_panel)
    assert set(flood_panel.result.df["test"]) == {"flood", "echo"}

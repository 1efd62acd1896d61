"""A history of runs and its step detector, on synthetic series with a known answer:
how often a 5% step is found within one run of where it was put, how often a flat
series is called stepped, and the history's table, order, words, chart and errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from zmqbench_magic.charts import chart_to_svg, history_chart
from zmqbench_magic.results import ResultSet, load_runs
from zmqbench_magic.results.statistics.history import find_steps
from zmqbench_magic.results.words.history_text import history_lines

RUNS, RUN_NOISE, STEP = 20, 0.015, 0.05  # a run's median varies by 1.5% (lognormal)


def _series(rng: np.random.Generator, at: int | None, runs: int = RUNS) -> np.ndarray:
    values = 1000 * rng.lognormal(0, RUN_NOISE, runs)
    if at is not None:
        values[at:] *= 1 + STEP
    return values


def test_a_5_percent_step_is_found_within_one_run_in_90_percent_of_series():
    rng = np.random.default_rng(20261126)
    found = []
    for trial in range(300):
        at = int(rng.integers(3, RUNS - 2))  # at least 3 runs on each side
        steps, _ = find_steps(_series(rng, at), tolerance=0.01, seed=trial)
        found.append(any(abs(step.at - at) <= 1 and step.after > step.before for step in steps))
    assert np.mean(found) >= 0.90, np.mean(found)


def test_a_flat_series_is_called_stepped_in_at_most_5_percent_of_series():
    rng = np.random.default_rng(20261127)
    stepped = [bool(find_steps(_series(rng, None), 0.01, seed=t)[0]) for t in range(400)]
    assert np.mean(stepped) <= 0.05, np.mean(stepped)


def test_two_steps_are_both_found_and_a_small_one_is_not_called():
    values = [100.0] * 8 + [110.0] * 8 + [99.0] * 8
    steps, best = find_steps(values, tolerance=0.01)
    assert [step.at for step in steps] == [8, 16] and best is not None
    assert steps[0].after / steps[0].before == pytest.approx(1.1)
    # A clear 0.5% shift is inside a 1% tolerance: never a step.
    assert find_steps([100.0] * 10 + [100.5] * 10, tolerance=0.01)[0] == []
    assert find_steps([1.0, 2.0], tolerance=0.01) == ([], None)  # too short to test


def _runs(levels: list[float], versions: list[str], seed: int = 1) -> ResultSet:
    """Runs of a two-size sweep: 1k at ``levels`` (one a run), 64k flat."""
    rng = np.random.default_rng(seed)
    joined = None
    for i, (level, version) in enumerate(zip(levels, versions, strict=True)):
        rows = [
            {
                "size": size,
                "copy": True,
                "transport": "tcp",
                "run": f"r{i}",
                "sample": j,
                "msgs_per_s": (level if size == 1024 else 1000) * rng.lognormal(0, 0.005),
            }
            for size in (1024, 65536)
            for j in range(6)
        ]
        meta = {
            "run": f"r{i}",
            "run_id": f"id{i}",
            "pyzmq": version,
            "date": f"2026-11-{10 + i:02d}T00:00:00+00:00",
        }
        run = ResultSet("thr", tuple(rows), metadata=meta)
        joined = run if joined is None else joined + run
    assert joined is not None
    return joined


def test_a_history_orders_runs_and_calls_the_step_where_it_is():
    result = _runs([1000] * 6 + [1100] * 6, [f"27.{i}.0" for i in range(12)])
    series, steps = result.history(tolerance=0.01)
    assert len(series) == 24 and series.groupby("size")["order"].max().tolist() == [11, 11]
    (step,) = steps[steps["called"]].to_dict("records")
    assert (step["size"], step["run"], step["at"]) == (1024, "r6", 6)
    assert step["ratio"] == pytest.approx(1.1, rel=0.01) and step["p_adjusted"] < 0.05
    (flat,) = steps[~steps["called"]].to_dict("records")
    assert flat["size"] == 65536 and "not under 0.05" in flat["reason"]
    # The levels step only where a step was called.
    levels = series.groupby("size")["level"].nunique().to_dict()
    assert levels == {1024: 2, 65536: 1}
    lines = history_lines(series, steps)
    assert lines[0].startswith("1k B: 12 runs (2026-11-10 to 2026-11-21), last ")
    assert "step at run r6 (2026-11-16)" in lines[0] and "no step; the likeliest" in lines[1]


def test_versions_order_as_numbers_and_a_step_follows_the_version():
    # Dates and versions disagree: 27.10.0 ran first, but is newer than 27.9.0.
    versions = ["27.10.0", "27.11.0", "27.12.0"] + [f"27.{minor}.0" for minor in range(1, 10)]
    levels = [1100.0] * 3 + [1000.0] * 9  # faster from 27.10.0 on
    series, steps = _runs(levels, versions).history(by="pyzmq", tolerance=0.01)
    in_order = series[series["size"] == 1024]["version"].tolist()
    assert in_order[8:] == ["27.9.0", "27.10.0", "27.11.0", "27.12.0"]
    (step,) = steps[steps["called"]].to_dict("records")
    assert step["run"] == "r0" and step["ratio"] > 1.05  # 27.10.0, the 10th in version order


def test_the_chart_marks_the_step_and_draws_the_band():
    series, steps = _runs([1000] * 6 + [1100] * 6, ["1"] * 12).history(tolerance=0.02)
    spec = history_chart(series, steps).to_dict()
    assert spec["title"]["text"].startswith("History of delivered (msgs/s), 12 runs")
    assert len(spec["layer"]) == 5  # band, level, intervals, medians, the step's rule
    assert "±2.0%" in " ".join(spec["title"]["subtitle"])
    assert chart_to_svg(history_chart(series, steps)).lstrip().startswith("<svg")


def test_bad_histories_are_named(tmp_path):
    one = _runs([1000.0], ["1"])
    with pytest.raises(ValueError, match="a history needs at least 2 runs, got 1"):
        one.history()
    two = _runs([1000.0, 1000.0], ["1", "2"])
    with pytest.raises(ValueError, match="history order must be one of date, python"):
        two.history(by="colour")
    with pytest.raises(ValueError, match="metric must be one of msgs_per_s"):
        two.history(metric="tasks_per_s")
    two.save(tmp_path / "two.json")
    ResultSet("lat", ({"size": 1, "mean_us": 50.0, "run": "x"},)).save(tmp_path / "lat.json")
    with pytest.raises(ValueError, match="holds a thr run, the files before it lat runs"):
        load_runs([tmp_path])
    (tmp_path / "lat.json").unlink()
    (tmp_path / "notes.json").write_text(json.dumps({"a": 1}))
    with pytest.raises(ValueError, match=r"notes\.json is not a zmqbench result file"):
        load_runs([tmp_path])
    with pytest.raises(ValueError, match="no such file or folder"):
        load_runs([tmp_path / "gone"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no result file"):
        load_runs([tmp_path / "empty"])


def test_a_run_of_one_environment_is_ordered_by_the_versions_that_ran_its_loops():
    from zmqbench_magic.results.statistics.history import ran_with, run_order

    kernel = {"pyzmq": "27.3.0", "date": "2026-11-02"}
    older = {**kernel, "date": "2026-11-01", "environments": {"old": {"pyzmq": "26.4.0"}}}
    assert ran_with(older, "pyzmq") == "26.4.0" and ran_with(kernel, "pyzmq") == "27.3.0"
    both = {**kernel, "environments": {"a": {"pyzmq": "26.4.0"}, "b": {"pyzmq": "25.1.2"}}}
    assert ran_with(both, "pyzmq") == "27.3.0"  # two arms: no one version ran the run
    result = _runs([1000.0, 1000.0], ["x", "y"])
    runs = dict(result.runs)
    runs["r0"], runs["r1"] = {**runs["r0"], **kernel}, {**runs["r1"], **older}
    reordered = ResultSet("thr", result.rows, metadata=result.metadata, runs=runs)
    assert run_order(reordered, "pyzmq") == ["r1", "r0"]

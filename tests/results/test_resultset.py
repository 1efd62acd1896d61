"""Results: tidy DataFrame, summary, JSON save/load, adding runs, crossover analysis."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import zmqbench_magic
from zmqbench_magic.results import ResultSet, spread_warnings
from zmqbench_magic.results.statistics.analysis import (
    crossover_size,
    zero_copy_speedup,
    zero_copy_threshold,
)


def _rows(speedups: dict[int, float], copy_rate: float = 1000.0, samples: int = 3) -> list[dict]:
    rows = []
    for size, speedup in speedups.items():
        for copy, rate in ((True, copy_rate), (False, copy_rate * speedup)):
            for sample in range(samples):
                rows.append(
                    {
                        "size": size,
                        "copy": copy,
                        "transport": "tcp",
                        "peer": "process",
                        "copy_threshold": 65536,
                        "frames": 1,
                        "count": 100,
                        "sample": sample,
                        "msgs_per_s": rate,
                        "send_msgs_per_s": rate,
                        "mbit_per_s": 1.0,
                        "benchmark": "thr",
                    }
                )
    return rows


def test_save_and_load_round_trip(tmp_path):
    result = ResultSet("thr", _rows({100: 0.5, 65536: 1.5}), {"repeat": 3}, {"host": "h"}, ("w",))
    path = result.save(tmp_path / "r.json")
    data = json.loads(path.read_text())
    assert data["format"] == "zmqbench-result" and data["version"] == 4
    loaded = zmqbench_magic.load(path)
    assert loaded == result
    pd.testing.assert_frame_equal(loaded.df, result.df)


def test_a_file_from_before_hwm_was_swept_keeps_its_marks_apart_from_the_points(tmp_path):
    rows = [{**row, "hwm": 1000} for row in _rows({100: 0.5})]
    data = ResultSet("thr", rows, {"hwm": 0}).to_json() | {"version": 3}
    (tmp_path / "old.json").write_text(json.dumps(data))
    loaded = zmqbench_magic.load(tmp_path / "old.json")
    assert "hwm" not in loaded.point_columns and "hwm" not in loaded.df
    assert (loaded.df["queue_hwm"] == 1000).all()


def test_save_keeps_a_saved_file_unless_told_to_append_or_replace(tmp_path):
    def run(name: str) -> ResultSet:
        meta = {"run": name, "run_id": f"id-{name}"}
        rows = [{**row, "run": name} for row in _rows({100: 0.5})]
        return ResultSet("thr", rows, {"repeat": 3}, meta)

    path = run("monday").save(tmp_path / "r.json")
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match=r"r\.json exists: .*append=True.*replace=True"):
        run("tuesday").save(path)
    assert path.read_bytes() == before
    with pytest.raises(ValueError, match="not both"):
        run("tuesday").save(path, append=True, replace=True)

    run("tuesday").save(path, append=True)
    both = zmqbench_magic.load(path)
    assert list(both.runs) == ["monday", "tuesday"]
    assert len(both.df) == 2 * 6 and set(both.df["run"]) == {"monday", "tuesday"}
    run("wednesday").save(path, replace=True)
    assert list(zmqbench_magic.load(path).runs) == ["wednesday"]
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no partial file left
    with pytest.raises(ValueError, match="cannot add lat results to thr results"):
        ResultSet("lat", []).save(path, append=True)
    assert list(zmqbench_magic.load(path).runs) == ["wednesday"]


def test_load_refuses_other_files_and_versions(tmp_path):
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(ValueError, match="not a zmqbench result"):
        zmqbench_magic.load(tmp_path / "other.json")
    data = ResultSet("lat", []).to_json() | {"version": 99}
    (tmp_path / "future.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="version 99"):
        zmqbench_magic.load(tmp_path / "future.json")


def test_summary_is_one_row_per_point_with_medians():
    rows = _rows({100: 0.5})
    rows[0]["msgs_per_s"] = 10.0  # one slow sample of the copy point
    summary = ResultSet("thr", rows).summary()
    assert len(summary) == 2
    copy_point = summary[summary["copy"]].iloc[0]
    assert copy_point["n"] == 3
    assert copy_point["msgs_per_s"] == 1000.0  # the median ignores the outlier
    assert copy_point["msgs_per_s_min"] == 10.0
    assert copy_point["spread"] > 0.1


def test_adding_results_accumulates_and_checks_the_benchmark():
    a, b = ResultSet("thr", _rows({100: 1.0})), ResultSet("thr", _rows({1024: 1.0}))
    assert len((a + b).df) == len(a.df) + len(b.df)
    with pytest.raises(ValueError, match="cannot add lat results to thr"):
        a + ResultSet("lat", [])


def test_spread_warning_follows_pyperf_thresholds_in_one_line_per_run():
    steady = [{"m": v} for v in (100, 101, 99, 100)]
    noisy = [{"m": v} for v in (100, 100, 100, 180)]  # stdev 34.6, 29% of the mean 120
    outlier = [{"m": v} for v in [100] * 40 + [152]]  # stdev 8% of the mean, one 52% off
    assert spread_warnings([("a", steady)], "m") == []
    points = [(f"p{i}", noisy) for i in range(5)] + [("steady", steady), ("out", outlier)]
    (warning,) = spread_warnings(points, "m")
    # pyperf's two rules: stdev >= 10% of the mean, or one sample > 50% from the median.
    assert warning.startswith("m samples vary at 6 of 7 points (stdev over mean: p0 29%, ")
    assert "and 2 more" in warning and "steady" not in warning
    assert spread_warnings([("out", outlier)], "m")[0].endswith(
        "(stdev over mean: out 8%); "
        "their intervals are wide: more "
        "--repeat, a longer --min-time or "
        "--precision narrow them"
    )


def test_crossover_is_interpolated_from_the_data():
    df = pd.DataFrame(_rows({1000: 0.6, 10000: 0.9, 100000: 1.5, 1000000: 2.0}, samples=10))
    speedup = zero_copy_speedup(df)
    assert list(speedup["speedup"]) == pytest.approx([0.6, 0.9, 1.5, 2.0])
    # log-log interpolation between (1e4, 0.9) and (1e5, 1.5)
    assert crossover_size(df) == pytest.approx(16079, rel=1e-3)


def test_no_crossover_within_the_sizes_is_none():
    assert crossover_size(pd.DataFrame(_rows({100: 0.5, 1000: 0.8}, samples=10))) is None
    assert crossover_size(pd.DataFrame(_rows({100: 1.5, 1000: 2.0}, samples=10))) is None
    # Only the last rise through 1 counts: zero-copy must stay ahead above it.
    rising = _rows({100: 0.5, 1000: 1.2, 10000: 0.9, 100000: 1.1}, samples=10)
    assert crossover_size(pd.DataFrame(rising)) > 10000
    # Three rounds cannot establish anything, however large the ratio: no crossover.
    assert crossover_size(pd.DataFrame(_rows({100: 0.5, 1000: 3.0}))) is None


def test_half_efficiency_duration_is_interpolated_from_the_data():
    from zmqbench_magic.results.statistics.analysis import half_efficiency_duration

    df = pd.DataFrame({"duration": [0.0, 0.001, 0.01, 0.1], "efficiency": [0.0, 0.2, 0.6, 0.95]})
    # between (1 ms, 0.2) and (10 ms, 0.6): a quarter of the way along a log scale
    assert half_efficiency_duration(df) == pytest.approx(10 ** (-3 + 0.75), rel=1e-9)
    assert half_efficiency_duration(df.assign(efficiency=[0.0, 0.1, 0.2, 0.3])) is None


def test_a_crossover_is_claimed_in_one_phrase_even_where_it_cannot_be_interpolated():
    """Zero-copy ahead at 8k B but within the tolerance there (not called): the claim
    stands between 8k B and 64k B, with no interpolated size, and the short phrase a
    table prints is the one the sentence opens with."""
    found = zero_copy_threshold(
        pd.DataFrame(_rows({1024: 0.5, 8192: 1.005, 65536: 1.5}, samples=10))
    )
    assert found.stable and found.estimate is None
    assert found.where == "between 8k B and 64k B"
    assert found.message.startswith(f"zero-copy crossover {found.where}: ")
    interpolated = zero_copy_threshold(pd.DataFrame(_rows({1024: 0.5, 65536: 1.5}, samples=10)))
    assert interpolated.where.startswith("between 1k B and 64k B (about ")
    assert interpolated.message.startswith(f"zero-copy crossover {interpolated.where}: ")
    none = zero_copy_threshold(pd.DataFrame(_rows({1024: 0.5, 65536: 0.8}, samples=10)))
    assert not none.stable and none.where == "none in the measured range"

"""Every chart the project makes, over sweeps of 1, 2 and 7 values: it fits a 900 px
output area, no text is cut, legends sit with the chart they explain, a single value
gets a point axis, titles agree in number, axes span the data, and the display bundle
carries a Vega 5 view, a PNG and an SVG. tests/test_browser.py measures the same
charts' text in a real browser; tests/test_kernel_output.py checks a real kernel's
output."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import altair as alt
import pandas as pd
import pytest
import vl_convert
from chart_frames import (
    CASES,
    CHART_KINDS,
    QUICK,
    SIZES,
    SWEEPS,
    chart_of,
    flood_frame,
    lat_result,
    patterns_result,
    pressure_result,
    svg_of,
    thr_result,
)

from zmqbench_magic.charts import (
    VEGA_MIMETYPE,
    chart_bundle,
    chart_to_svg,
    default_chart,
    echo_chart,
    flood_chart,
    latency_chart,
    map_chart,
    memory_chart,
    speedup_chart,
    throughput_chart,
)
from zmqbench_magic.charts.layout import MAX_WIDTH, plural, x_axis
from zmqbench_magic.charts.pressure_chart import pressure_frame
from zmqbench_magic.params import COLUMN_TITLES
from zmqbench_magic.params.backends import BACKENDS, IPYPARALLEL
from zmqbench_magic.params.units import format_size
from zmqbench_magic.sockets.kernel.measure import run_throughput


def _scenegraph(chart: alt.TopLevelMixin) -> dict[str, Any]:
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    return vl_convert.vegalite_to_scenegraph(chart.to_dict(), vl_version=f"v{major}_{minor}")


def _items(node: dict[str, Any], x: float = 0, y: float = 0) -> Iterator[tuple[dict, float, float]]:
    """Every mark item with its absolute position (groups offset their children)."""
    for item in node.get("items", []):
        yield item, x + item.get("x", 0), y + item.get("y", 0)
        if "items" in item:
            yield from _items(item, x + item.get("x", 0), y + item.get("y", 0))


def _texts(scene: dict[str, Any]) -> list[str]:
    return [item["text"] for item, _, _ in _items(scene["scenegraph"]) if "text" in item]


@pytest.mark.parametrize(("kind", "values"), CASES)
def test_every_chart_fits_900_px_and_no_text_is_cut(kind, values):
    chart = chart_of(kind, values)
    svg = svg_of(kind, values)
    width = float(re.search(r'<svg[^>]*?width="([\d.]+)"', svg).group(1))
    assert width <= MAX_WIDTH, f"{kind} over {values} values is {width:.0f} px wide"
    scene = _scenegraph(chart)
    texts = _texts(scene)
    assert texts, "the chart has no text at all"
    # vega cuts a label that is over its limit and ends it with an ellipsis.
    cut = [t for t in texts if isinstance(t, str) and t.endswith("…")]
    assert cut == [], f"{kind}: cut text {cut}"
    # Every text's anchor is on the canvas (the browser test measures whole words).
    origin_x, origin_y = scene["origin"]
    for item, x, y in _items(scene["scenegraph"]):
        if "text" in item and item.get("opacity", 1) and item["text"] != "":
            assert -origin_x - 1 <= x <= scene["width"] - origin_x + 1, (kind, item["text"])
            assert -origin_y - 1 <= y <= scene["height"] - origin_y + 1, (kind, item["text"])


@pytest.mark.parametrize("kind", ["thr default", "lat default", "flood default"])
def test_legends_sit_with_the_chart_they_explain(kind):
    """In a figure of two charts, each legend is drawn inside its own chart's cell (a
    shared legend is drawn at the top level, to the right of both)."""
    scene = _scenegraph(chart_of(kind, 7))
    (root,) = scene["scenegraph"]["items"]
    cells = [g for g in root["items"] if g.get("role") == "scope"]
    assert len(cells) == 2, f"{kind} is not two charts side by side"
    assert [g for g in root["items"] if g.get("role") == "legend"] == []  # none shared
    found = 0
    for number, cell in enumerate(cells):
        (view,) = cell["items"]
        # A legend starts within its own chart and ends before the next one begins.
        right = cells[1]["items"][0]["x"] if number == 0 else scene["width"]
        for legend in (g for g in view["items"] if g.get("role") == "legend"):
            (box,) = legend["items"]
            x = view["x"] + box["x"]
            assert view["x"] - 1 <= x and x + box["width"] <= right, (cell["name"], x)
            found += 1
    assert found, f"{kind} has no legend"


@pytest.mark.parametrize("kind", ["throughput", "latency", "bandwidth", "echo", "flood"])
def test_a_single_value_gets_a_point_axis_and_two_get_a_log_axis(kind):
    one = chart_of(kind, 1).to_dict()
    two = chart_of(kind, 2).to_dict()
    assert _x_encoding(one)["type"] == "ordinal"
    assert _x_encoding(two)["type"] == "quantitative"
    assert _x_encoding(two)["scale"]["type"] == "log"


def _x_encoding(spec: dict[str, Any]) -> dict[str, Any]:
    while "encoding" not in spec or "x" not in spec["encoding"]:
        spec = (spec.get("layer") or spec.get("spec", {}).get("layer") or [spec.get("spec")])[0]
    return spec["encoding"]["x"]


def test_the_x_axis_spans_the_data_exactly():
    """No decade of empty axis past the data (the latency axis ran to ~8M for 1M)."""
    x = _x_encoding(chart_of("latency", 7).to_dict())
    sizes = sorted(lat_result(7).df["size"].unique())
    assert x["scale"]["domain"] == [sizes[0], sizes[-1]]
    assert x["scale"]["nice"] is False
    assert x["axis"]["values"] == sizes  # a tick at every measured size


def test_titles_and_legends_agree_in_number():
    assert plural(1, "size") == "1 size" and plural(7, "size") == "7 sizes"
    one = json.dumps(chart_of("thr default", 1).to_dict())
    assert "1 size " in one and "1 sizes" not in one
    flood = json.dumps(chart_of("flood default", 2).to_dict())
    assert "1 engine" in flood and "1 engines" not in flood and "2 engines" in flood


@pytest.mark.parametrize(
    ("test", "chart", "title"),
    [
        ("flood", flood_chart, "Task flood by backend, up to 10 tasks"),
        ("map", map_chart, "Map of time.sleep: efficiency by backend"),
        ("echo", echo_chart, "Array echo bandwidth by backend"),
    ],
)
def test_engines_side_by_side_get_a_line_each_named_by_backend(test, chart, title):
    frame = pd.concat(
        [flood_frame(test, 2).assign(backend=name) for name in ("ipyparallel", "dask")]
    )
    spec = json.dumps(chart(frame).to_dict())
    assert title in spec
    assert '"backend"' in spec and '"dask"' in spec and '"ipyparallel"' in spec
    one = json.dumps(chart(flood_frame(test, 2).assign(backend="ray")).to_dict())
    assert "by backend" not in one and "Ray " in one


@pytest.mark.parametrize("backend", BACKENDS.values(), ids=list(BACKENDS))
def test_a_backends_lines_and_titles_are_in_its_records_words(backend):
    """Dask's and Ray's workers are workers, the pool is the process pool (not its
    option's name); ipyparallel's lines count engines, as they always have."""
    frame = flood_frame("flood", 2, engines=(1, 2)).assign(backend=backend.name)
    flood = json.dumps(flood_chart(frame).to_dict())
    assert f'"{backend.workers(1)}"' in flood and f'"{backend.workers(2)}"' in flood
    assert f"{backend.heading} task flood" in flood
    engines = json.dumps(default_chart("flood", frame).to_dict())
    assert f"Tiny tasks per second by number of {backend.noun(2)}" in engines
    mapped = json.dumps(map_chart(flood_frame("map", 2).assign(backend=backend.name)).to_dict())
    assert (backend.map_call or f"{backend.heading} map of") in mapped
    labels = {row["series"] for row in _rows(flood_chart(frame).to_dict())}
    assert labels == {backend.workers(1), backend.workers(2)}
    if backend is not IPYPARALLEL:
        assert "processpool" not in flood.replace('"processpool"', "")  # only as the column's
    else:
        assert '"1 engine"' in flood and '"2 engines"' in flood
        assert "map_async(time.sleep) efficiency" in mapped


def test_a_legend_of_one_entry_is_dropped_and_the_value_named_in_the_subtitle():
    df = thr_result(2).df
    # Delivered alone (a result whose samples did not time send-only): one series.
    chart = throughput_chart(df[df["copy"]].assign(send_msgs_per_s=float("nan"))).to_dict()
    lines = chart["title"]["subtitle"]
    assert lines[0].startswith("inproc, copy sends")
    # The bars' level as the data have it (3 samples: a 75% interval), never a typed 95%.
    assert lines[1] == "bars: 75% intervals"
    color = chart["layer"][0]["encoding"]["color"] if "layer" in chart else None
    assert color is not None and color["legend"] is None


def _axis_titles(spec: Any) -> Iterator[str]:
    if isinstance(spec, dict):
        for channel in ("x", "y"):
            title = spec.get("encoding", {}).get(channel, {}).get("title")
            if isinstance(title, str):
                yield title
        for value in spec.values():
            yield from _axis_titles(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from _axis_titles(value)


# Counts, settings and fractions: no unit to give.
UNITLESS = {"fraction of round trips at or below", "engines", "tasks", "peers", "clients"}


@pytest.mark.parametrize("kind", CHART_KINDS)
def test_every_axis_title_carries_a_unit(kind):
    titles = set(_axis_titles(chart_of(kind, 2).to_dict()))
    assert titles, f"{kind} has no axis titles"
    for title in titles - UNITLESS:
        assert re.search(r"\(.+\)$", title), f"{kind}: axis title without a unit: {title!r}"


def test_the_bundle_is_a_vega5_view_a_png_and_an_svg_with_nothing_to_fetch():
    data, metadata = chart_bundle(chart_of("thr default", 2))
    assert set(data) == {VEGA_MIMETYPE, "image/png", "image/svg+xml", "text/plain"}
    vega = data[VEGA_MIMETYPE]
    assert vega["$schema"].endswith("/vega/v5.json")
    assert "tooltip" in json.dumps(vega)  # the hover
    assert any(s.get("name", "").startswith("pick_") for s in vega.get("signals", [])) or (
        "pick_" in json.dumps(vega)
    )  # the legend selection
    png = base64.b64decode(data["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert data["image/svg+xml"].lstrip().startswith("<svg")
    assert data["text/plain"] == "<chart: ZeroMQ PUSH/PULL throughput, 2 sizes (median of samples)>"
    assert metadata[VEGA_MIMETYPE]["embed_options"]["actions"]["editor"] is False
    everything = json.dumps(data)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", everything))
    assert {u for u in urls if "w3.org" not in u and "vega.github.io/schema" not in u} == set()
    # Vega 5 draws the spec: compile it again with vega's own parser through vl-convert.
    assert vl_convert.vega_to_svg(vega).lstrip().startswith("<svg")


def test_a_figure_is_saved_in_the_format_its_file_name_says(tmp_path):
    from zmqbench_magic.charts import Figure

    figure = Figure(chart_of("thr default", 2))
    assert figure.save(tmp_path / "t.png").read_bytes().startswith(b"\x89PNG")
    assert figure.save(tmp_path / "t.svg").read_text().lstrip().startswith("<svg")
    with pytest.raises(ValueError, match=r"x\.png: a svg chart's file name ends in \.svg"):
        figure.save(tmp_path / "x.png", kind="svg")
    assert not (tmp_path / "x.png").exists()


def test_a_notebook_viewer_without_vega_shows_the_picture():
    """nbconvert (what notebook viewers on code hosts run) draws the SVG beside the
    Vega spec, and nothing it writes for the chart comes from a CDN."""
    import nbformat
    from nbconvert import HTMLExporter

    data, metadata = chart_bundle(chart_of("thr default", 2))
    cell = nbformat.v4.new_code_cell("%zmqthr", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=metadata)]
    html, _ = HTMLExporter().from_notebook_node(nbformat.v4.new_notebook(cells=[cell]))
    (output,) = re.findall(r'<div class="jp-RenderedSVG[^>]*>(.*?)</div>', html, re.S)
    (picture,) = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', output)
    assert "PUSH/PULL throughput" in base64.b64decode(picture).decode()
    assert not re.search(r"<script[^>]*vega", html)  # no vega loaded from anywhere


def test_size_labels_on_an_axis_are_spelled_as_the_options_take_them():
    """The axis spells sizes in vega's expression language (it cannot call Python):
    the two spellings of one rule must agree."""
    sizes = [1, 100, 1000, 1024, 1536, 65536, 3 * 1024 * 1024, 1024**3]
    frame = pd.DataFrame({"size": sizes, "value": 1.0})
    axis = alt.Chart(frame).mark_point().encode(x=x_axis(frame, "size", sizes=True), y="value:Q")
    labels = [t for t in _texts(_scenegraph(axis)) if t not in ("message size (B)", "value")]
    assert labels[: len(sizes)] == [format_size(s) for s in sizes]


def _layers(spec: Any) -> Iterator[dict[str, Any]]:
    """Every unit spec (one with a mark) inside a chart's spec."""
    if isinstance(spec, dict):
        if "mark" in spec:
            yield spec
        for value in spec.values():
            yield from _layers(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from _layers(value)


def _tooltips(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for layer in _layers(spec) for t in layer.get("encoding", {}).get("tooltip", [])]


def _rows(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for rows in spec.get("datasets", {}).values() for row in rows]


@pytest.mark.parametrize("repeat", [3, 6, 10])
def test_the_tooltips_interval_level_is_the_texts(repeat):
    """What the hover says of a point's interval is what the summary line says."""
    result = run_throughput(size=1024, transport="inproc", count=200, repeat=repeat, warmup=0)
    (line,) = [ln for ln in str(result).splitlines() if "msgs/s delivered" in ln]
    said = re.search(r"(\d+)% CI", line)
    assert said, line
    spec = throughput_chart(result.df).to_dict()
    (level,) = [t for t in _tooltips(spec) if t["field"] == "ci_level"]
    assert level["format"] == ".0%"
    delivered = [row for row in _rows(spec) if row["metric"].startswith("delivered")]
    levels = {f"{row['ci_level']:.0%}" for row in delivered}
    assert levels == {f"{said[1]}%"}, (levels, line)
    # The order-statistic interval of the median: 75% of 3, 97% of 6, 98% of 10.
    assert said[1] == {3: "75", 6: "97", 10: "98"}[repeat]


def test_tooltips_spell_sizes_as_the_axis_and_say_each_fact_once():
    spec = chart_of("throughput", 2).to_dict()
    tips = _tooltips(spec)
    titles = [t.get("title") for t in tips]
    assert len(titles) == len(set(titles)), titles
    (size,) = [t for t in tips if t.get("title") == COLUMN_TITLES["size"]]
    spelled = {row[size["field"]] for row in _rows(spec)}
    assert spelled == {"1 B", "1M B"}, spelled  # as the axis: 1M, never 1048576
    assert not [t for t in tips if t["field"] == "copy"], "the copy mode is said by mode"


def test_two_values_are_points_and_three_a_line():
    def marks(kind: str, values: int) -> set[str]:
        spec = chart_of(kind, values).to_dict()
        return {m if isinstance(m, str) else m["type"] for m in (s["mark"] for s in _layers(spec))}

    assert "line" not in marks("throughput", 2) and "point" in marks("throughput", 2)
    assert "line" in marks("throughput", 7)


def test_the_memory_chart_draws_each_role_that_was_measured():
    """A line per role, named as its column is; a role not measured (Dask's controller
    runs in the client: NaN) is left out, never drawn at zero."""
    frame = flood_frame("flood", 2)
    svg = chart_to_svg(memory_chart(frame))
    for role in ("client", "controller", "engines"):
        assert f"{role} peak memory" in svg
    assert "peak resident memory (MB)" in svg
    svg = chart_to_svg(memory_chart(frame.assign(controller_peak_mb=float("nan"))))
    assert "client peak memory" in svg and "controller peak memory" not in svg


def test_metrics_of_one_series_get_a_colour_and_a_shape_each():
    df = lat_result(2).df
    spec = latency_chart(df[(df["transport"] == "tcp")], lat_result(2).distributions).to_dict()
    encoded = [layer["encoding"] for layer in _layers(spec) if "tooltip" in layer["encoding"]]
    assert encoded[0]["color"]["field"] == "metric" and encoded[0]["shape"]["field"] == "metric"


def test_points_that_share_an_x_are_set_apart_and_the_tooltip_keeps_the_measured_x():
    spec = flood_chart(flood_frame("flood", 2, engines=(1, 2))).to_dict()
    (drawn,) = {layer["encoding"]["x"]["field"] for layer in _layers(spec)}
    assert drawn == "x_drawn"
    rows = pd.DataFrame(_rows(spec))
    for _tasks, same in rows.groupby("tasks"):
        assert same.groupby("series")["x_drawn"].first().nunique() == same["series"].nunique()
    assert "tasks" in {t["field"] for t in _tooltips(spec)}


def test_a_chart_that_takes_another_ones_place_says_so():
    frame = flood_frame("flood", 2, engines=(1, 2))
    stamped = frame.assign(queue_s=0.001)
    assert "in place of where a task's time goes" in json.dumps(
        default_chart("flood", stamped).to_dict()
    )


def _axes(node: Any) -> Iterator[dict[str, Any]]:
    """Every axis group of a scenegraph."""
    if isinstance(node, dict):
        if node.get("role") == "axis":
            yield node
        for value in node.values():
            yield from _axes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _axes(value)


def _role(axis: dict[str, Any], role: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("role") == role:
                found.extend(node.get("items", []))
            else:
                for value in node.values():
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(axis)
    return found


@pytest.mark.parametrize("kind", ["throughput", "latency", "bandwidth", "flood", "echo", "load"])
def test_every_tick_of_a_log_axis_has_its_label(kind):
    """vega leaves a log axis' minor ticks unlabelled (marks between 0.07 and 0.1 that
    nobody can read off); the charts place labelled ticks instead."""
    for values in SWEEPS:
        for axis in _axes(_scenegraph(chart_of(kind, values))["scenegraph"]):
            ticks, labels = _role(axis, "axis-tick"), _role(axis, "axis-label")
            texts = [label.get("text") for label in labels]
            assert len(ticks) == len(labels) and all(texts), (kind, values, texts)


def test_the_speedup_charts_bars_name_the_statistic_its_verdicts_used():
    """One run measuring both copy modes: per-round ratios, paired. A copy run and a
    zero-copy run (a panel's two presses of Run): their samples share no rounds, and the
    subtitle says so, as the summary's verdict line does."""
    both = thr_result(2)
    assert "per-round ratios (paired)" in _subtitle(speedup_chart(both.df))
    one = run_throughput(size=SIZES[2], transport="inproc", copy=True, **QUICK)
    other = run_throughput(size=SIZES[2], transport="inproc", copy=False, **QUICK)
    separate = _subtitle(speedup_chart((one + other).df))
    assert "unpaired: separate runs" in separate and "(paired)" not in separate, separate


def _subtitle(chart: alt.TopLevelMixin) -> str:
    title = chart.to_dict()["title"]
    subtitle = title.get("subtitle", "")
    return " ".join(subtitle) if isinstance(subtitle, list) else subtitle


def test_patterns_draw_all_peers_and_the_slowest_against_n_one_colour_each():
    spec = json.dumps(chart_of("patterns", 2).to_dict())
    assert '"field": "peers"' in spec
    assert "delivered (msgs/s)" in spec and "slowest peer (msgs/s)" in spec
    frame = patterns_result(2).df
    assert set(frame["pattern"]) == {"pubsub", "fanin"}
    assert '"pubsub"' in spec and '"fanin"' in spec


def test_pressure_maps_where_a_pub_drops_and_a_push_waits():
    """One map per pattern; each cell's words are its own point's loss, or its time
    blocked where nothing was lost: a PUB that drops never reads as blocked."""
    chart = chart_of("pressure", 2)
    spec = json.dumps(chart.to_dict())
    assert "Queues under pressure" in spec and '"field": "pattern"' in spec
    frame = pressure_frame(pressure_result(2).df)
    assert len(frame) == 2 * 2 * 2  # patterns x rates x works
    for row in frame.to_dict("records"):
        words = row["words"]
        if row["lost_share"] > 0:
            assert words == f"lost\n{row['lost_share']:.0%}", row
        else:
            assert not words.startswith("lost"), row
        if row["pattern"] == "pipeline":
            assert row["lost_share"] == 0, row  # a PUSH never drops
    texts = ["\n".join(t) if isinstance(t, list) else t for t in _texts(_scenegraph(chart))]
    assert set(frame["words"]) <= set(texts)


def _marked_frame(works: list[float]) -> pd.DataFrame:
    """Samples of a PUB and a PUSH at two rates and two high-water marks: what the
    maps are drawn from (their figures are not measured: the layout is under test)."""
    rows = [
        {
            "pattern": pattern,
            "rate": rate,
            "hwm": hwm,
            "work": work,
            "size": 1024,
            "copy": True,
            "transport": "tcp",
            "peer": "process",
            "sample": sample,
            "lost": (rate // hwm) if pattern == "pubsub" else 0,
            "received": 1000,
            "blocked_share": 0.0 if pattern == "pubsub" else 0.5,
        }
        for pattern in ("pubsub", "pipeline")
        for rate in (1000.0, 10_000.0)
        for hwm in (10, 1000)
        for work in works
        for sample in range(2)
    ]
    return pd.DataFrame(rows)


def test_pressure_maps_put_the_mark_down_where_only_it_varies_and_a_row_per_mark_else():
    only_marks = default_chart("thr", _marked_frame([0.0])).to_dict()
    spec = json.dumps(only_marks)
    assert '"field": "hwm_label"' in spec and "high-water mark (msgs)" in spec
    assert '"row"' not in spec
    labels = set(pressure_frame(_marked_frame([0.0]))["hwm_label"])
    assert labels == {"10", "1k"}
    both = json.dumps(default_chart("thr", _marked_frame([0.0, 0.001])).to_dict())
    assert '"field": "work_label"' in both and '"row"' in both and "hwm_label" in both


def test_pressure_maps_of_both_loops_draw_a_row_per_loop_never_two_points_in_a_cell():
    """Python's and the native loop's points at the same rate and work are two cells,
    a row of maps apart, each with its own words; with the marks varying too, a row
    per loop and mark."""
    one = _marked_frame([0.0])
    one = one[one["hwm"] == 10]
    both_loops = pd.concat([one.assign(loop="python"), one.assign(loop="native", lost=0)])
    chart = default_chart("thr", both_loops)
    spec = chart.to_dict()
    assert spec["spec"]["layer"] and spec["facet"]["row"]["field"] == "row_label"
    assert spec["facet"]["row"]["sort"] == ["native loop", "python loop"]
    scene = _scenegraph(chart)
    cells = [t for t in _texts(scene) if isinstance(t, list) or "\n" in str(t)]
    assert len(cells) == 2 * 2 * 2  # loops x patterns x rates, one point each
    marked = _marked_frame([0.0, 0.001])
    rows = pd.concat([marked.assign(loop="python"), marked.assign(loop="native")])
    spec = default_chart("thr", rows).to_dict()
    assert spec["facet"]["row"]["sort"] == [
        "native loop, 10",
        "native loop, 1k",
        "python loop, 10",
        "python loop, 1k",
    ]


def test_clients_draw_p50_to_p999_against_their_number():
    spec = json.dumps(chart_of("clients", 2).to_dict())
    assert '"field": "clients"' in spec
    for title in ("median", "p90", "p99", "p99.9"):
        assert f"{title} round trip" in spec, title


def test_a_comparisons_rows_are_named_in_the_parameters_words():
    """A row reads as the options and the text spell the point (``inproc 1k B
    zero-copy``), not as a row of raw values (``inproc 1024 False``)."""
    chart = chart_of("comparison", 2).to_dict()
    rows = {row["point"] for data in chart["datasets"].values() for row in data if "point" in row}
    assert rows and all(" B " in row and ("copy" in row) for row in rows), rows
    assert not any("False" in row or "True" in row for row in rows), rows

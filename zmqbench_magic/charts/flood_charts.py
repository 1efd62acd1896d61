"""The task flood's charts: sent and round trip vs tasks, tasks/s vs engines, echo
bandwidth, map efficiency and each role's peak memory, one line per backend, engine
count, view or scheme. A backend is named, and its workers counted, in its record's
words (``Dask``, ``2 workers``); which chart a test gets is its record's word."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ..params import COLUMN_TITLES, DURATION, METRICS, FloodParams
from ..params.backends import Backend, backend_of
from ..params.columns import Distribution
from ..params.flood_tests import FLOOD_TESTS
from ..params.taskflood import MEMORY_ROLES
from .layout import in_a_row, log_y, plural, subtitle, titled, x_axis
from .series import median_lines, point_medians

_FLOOD_COLUMNS = ["test", *(p.name for p in FloodParams.sweep_fields())]
_TIME_TITLE = f"time ({METRICS['sent_s'].unit})"


def _backends(frame: pd.DataFrame) -> list[Backend]:
    """The frame's backends, by name."""
    named = frame.get("backend", [None])
    return sorted({backend_of(name) for name in named}, key=lambda backend: backend.name)


def _series(frame: pd.DataFrame) -> pd.DataFrame:
    """A line label from whichever of backend, engines, view and scheme vary."""
    varying = [
        c for c in ("backend", "engines", "view", "scheme") if c in frame and frame[c].nunique() > 1
    ]

    def label(row: pd.Series) -> str:
        backend = backend_of(row.get("backend"))
        words = {"backend": backend.heading, "engines": backend.workers(int(row["engines"]))}
        return " ".join(words.get(c, str(row[c])) for c in varying) or words["engines"]

    return frame.assign(series=frame.apply(label, axis=1) if len(frame) else [])


_FLOOD_WORDS = {"view": "{} view", "scheme": "scheme {}"}


def _legend(frame: pd.DataFrame) -> str:
    """The line legend's title: "backend" when engines of several kinds are drawn."""
    return "backend" if "backend" in frame and frame["backend"].nunique() > 1 else "cluster"


def _whose(frame: pd.DataFrame, what: str) -> str:
    """A flood chart's title: one backend's ``what`` by name, several "What by backend"."""
    backends = _backends(frame)
    if len(backends) == 1:
        return f"{backends[0].heading} {what}"
    return f"{what[0].upper()}{what[1:]} by backend"


def flood_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Sent and round-trip time vs number of tasks, log-log, one line per engine
    count / view / scheme (the classic IPython-parallel flood figure)."""
    frame = _series(point_medians(df, ["sent_s", "roundtrip_s"], _FLOOD_COLUMNS))
    chart = median_lines(
        frame,
        x_axis(frame, "tasks"),
        log_y("value", _TIME_TITLE),
        "series",
        _legend(frame),
        _FLOOD_COLUMNS,
        ".4f",
        name="flood",
    )
    return titled(
        chart,
        f"{_whose(frame, 'task flood')}, up to {plural(int(frame['tasks'].max()), 'task')}",
        subtitle(frame, ["view", "scheme"], _FLOOD_WORDS),
    )


# Where the engines chart takes the place of the stages' (a flood of several engine
# counts), it says so: the chart beside the flood changed kind between two runs.
_INSTEAD_OF_STAGES = (
    "shown in place of where a task's time goes, as the flood ran on several engine counts"
)


def engines_chart(df: pd.DataFrame, note: str = "") -> alt.TopLevelMixin:
    """Tasks per second vs number of engines, one line per number of tasks."""
    frame = point_medians(df, ["tasks_per_s"], _FLOOD_COLUMNS)
    frame["series"] = frame["tasks"].map(lambda n: plural(int(n), "task"))
    # One backend's workers in its own word; engines of several kinds as --engines says.
    backends = _backends(frame)
    counted = backends[0].noun(2) if len(backends) == 1 else COLUMN_TITLES["engines"]
    engines = alt.X("engines:O", title=counted, axis=alt.Axis(labelAngle=0))
    y = alt.Y("value:Q", title=COLUMN_TITLES["tasks_per_s"])
    chart = median_lines(
        frame, engines, y, "series", "flood of", _FLOOD_COLUMNS, ",.0f", name="engines"
    )
    return titled(chart, f"Tiny tasks per second by number of {counted}", note)


def echo_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Array echo bandwidth (both directions) vs array size."""
    frame = _series(point_medians(df, ["mbit_per_s"], _FLOOD_COLUMNS))
    y = log_y("value", METRICS["mbit_per_s"].axis_title)
    x = x_axis(frame, "size", sizes=True)
    chart = median_lines(frame, x, y, "series", _legend(frame), _FLOOD_COLUMNS, ",.1f", name="echo")
    return titled(chart, _whose(frame, "array echo bandwidth"), subtitle(frame, ["series"]))


def memory_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Each role's peak resident memory vs number of tasks, log-log: the client (this
    kernel), the controller and the engines (summed); a role not measured is left out."""
    peaks = [f"{role}_peak_mb" for role in MEMORY_ROLES if f"{role}_peak_mb" in df]
    frame = _series(point_medians(df, peaks, _FLOOD_COLUMNS))
    chart = median_lines(
        frame,
        x_axis(frame, "tasks"),
        log_y("value", f"peak resident memory ({METRICS[peaks[0]].unit})"),
        "series",
        _legend(frame),
        _FLOOD_COLUMNS,
        ",.1f",
        name="memory",
    )
    title = (
        f"{_whose(frame, 'peak memory by role')}, up to {plural(int(frame['tasks'].max()), 'task')}"
    )
    return titled(chart, title, subtitle(frame, ["view", "scheme"], _FLOOD_WORDS))


def map_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """map efficiency (ideal parallel time / actual) vs task duration."""
    frame = _series(point_medians(df, ["efficiency"], _FLOOD_COLUMNS))
    frame = frame.assign(duration_ms=frame["duration"] * 1e3)
    # symlog: a 0 ms duration (pure overhead) stays on the axis.
    x = x_axis(frame, "duration_ms", f"{DURATION.title} (ms)", scale="symlog")
    y = alt.Y("value:Q", title=COLUMN_TITLES["efficiency"], scale=alt.Scale(domain=[0, 1]))
    chart = median_lines(frame, x, y, "series", _legend(frame), _FLOOD_COLUMNS, ".3f", name="map")
    backends = _backends(frame)
    title = _whose(frame, "map of time.sleep: efficiency")
    if len(backends) == 1 and backends[0].map_call:  # what it calls, by name
        title = f"{backends[0].map_call}(time.sleep) efficiency"
    return titled(chart, title, subtitle(frame, ["series"]))


# The chart of each metric a test's record draws by the test's own setting.
_METRIC_CHARTS = {"mbit_per_s": echo_chart, "efficiency": map_chart}


def flood_default(
    df: pd.DataFrame, distributions: Sequence[Distribution] = ()
) -> alt.TopLevelMixin:
    """A flood's chart for its test: with the engines chart beside it when several
    engine counts were measured, else with the stages where a backend stamped them
    (a flood has no ``distributions`` of round trips)."""
    test = FLOOD_TESTS[df["test"].iloc[0]]
    if test.chart_metric:
        return _METRIC_CHARTS[test.chart_metric](df)
    stamped = "queue_s" in df.columns and df["queue_s"].notna().any()
    if df["engines"].nunique() > 1:
        note = _INSTEAD_OF_STAGES if stamped else ""
        return in_a_row(flood_chart(df), engines_chart(df, note))
    if stamped:
        from .stages import stages_chart

        return in_a_row(flood_chart(df), stages_chart(df))
    return flood_chart(df)

"""Where a task's time goes (``%taskflood``'s stage columns): one stacked bar per point
of the sweep, a segment per stage (submit, queue, run, return)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..params import METRICS, FloodParams
from ..params.backends import backend_of
from ..params.taskflood import STAGE_COLUMNS, STAGES
from ..params.units import plural
from .layout import HEIGHT, WIDTH, legend, picked, selector, subtitle, titled, tooltip
from .series import point_medians

_POINT = ["test", *(p.name for p in FloodParams.sweep_fields())]
# What tells two bars apart, in the order the words are read.
_LABELLED = ["backend", "view", "scheme", "engines", "tasks", "chunksize", "size", "duration"]
_WORDS = {"view": "{} view", "scheme": "scheme {}", "backend": "{}"}
_UNIT = METRICS[STAGE_COLUMNS[0]].unit


def stages_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Stacked medians of each stage per point: which stage a task spends its time in,
    and how that moves with tasks, engines, view, scheme or backend. A stage a
    backend has no stamps for (the process pool's) is left out of its bar."""
    frame = point_medians(df, STAGE_COLUMNS, _POINT)
    # The series carry each metric's axis title (point_medians); a stage is its title.
    frame["stage"] = frame["metric"].map({m.axis_title: m.title for m in METRICS.values()})
    frame["order"] = frame["stage"].map({stage: i for i, stage in enumerate(STAGES)})
    varying = _varying(frame)
    frame["point"] = _point_labels(frame, varying)
    order = list(dict.fromkeys(frame.sort_values(varying)["point"]))
    pick = selector("stage", "pick_stage")
    bars = (
        alt.Chart(frame, width=max(WIDTH, 34 * len(order)), height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("point:N", sort=order, title=", ".join(varying), axis=alt.Axis(labelAngle=-30)),
            y=alt.Y("value:Q", stack="zero", title=f"median time per task, by stage ({_UNIT})"),
            color=alt.Color(
                "stage:N",
                sort=list(STAGES),
                legend=legend("stage", len(STAGES)),
                scale=alt.Scale(domain=list(STAGES), scheme="tableau10"),
            ),
            order=alt.Order("order:Q"),
            opacity=picked(pick),
            tooltip=tooltip(frame, ["stage", *_POINT], "value", f"median ({_UNIT})", ".6f"),
        )
        .add_params(pick)
    )
    note = subtitle(_headed(frame), ["backend", "view", "scheme"], _WORDS)
    stacked = "each stage's median over every task of a point, stacked"
    return titled(bars, "Where a task's time goes", f"{note}; {stacked}" if note else stacked)


def _varying(frame: pd.DataFrame) -> list[str]:
    """The settings that tell the bars apart, in reading order (tasks if none does)."""
    present = [c for c in _LABELLED if c in frame.columns]
    return [c for c in present if frame[c].nunique() > 1] or ["tasks"]


def _point_labels(frame: pd.DataFrame, varying: list[str]) -> pd.Series:
    """A bar's label from the settings that vary (``8 engines, 256 tasks``)."""
    return frame.apply(lambda row: ", ".join(_word(c, row) for c in varying), axis=1)


def _headed(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with each backend named as its record heads a chart (``process pool``)."""
    if "backend" not in frame:
        return frame
    return frame.assign(backend=frame["backend"].map(lambda name: backend_of(name).heading))


def _word(column: str, row: pd.Series) -> str:
    value, backend = row[column], backend_of(row.get("backend"))
    if column == "backend":
        return backend.heading
    if column == "engines":  # in the word of the backend the row ran on
        return backend.workers(int(value))
    if column == "tasks":
        return plural(int(value), "task")
    if column == "chunksize":
        return f"chunks of {int(value)}"
    return str(value)

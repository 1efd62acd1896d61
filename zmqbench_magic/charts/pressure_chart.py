"""Queues under pressure (``%zmqthr --rate``, ``--work``, ``--hwm``): where drops
begin. One heat map per pattern, offered rate across, each receiver's work per message
down (or, where only the high-water mark varies, the mark; where both vary, one row of
maps per mark; where both loops ran, one row per loop); a cell's colour is the share
of messages lost there (a PUB drops), its words that share and the share of the
sender's time blocked in full queues (a PUSH waits)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..params import COLUMN_TITLES, HWM, RATE
from ..params.pressure import WORK
from ..params.units import format_size
from .layout import subtitle, titled
from .series import POINT_COLUMNS

_WORDS = {"transport": "{}", "size_label": "{} B", "mode": "{} sends", "peer": "far end: {}"}
_LINE = "\n"
# The widest a cell is drawn, and what the maps may take of a row together (the rest
# is the work axis's title and labels).
_CELL = 64
_MAPS_WIDTH = 600


def pressure_frame(df: pd.DataFrame) -> pd.DataFrame:
    """One row per point: the medians of its samples' lost share and blocked share,
    with the offered rate, the work per message and the high-water mark in words."""
    by = [c for c in POINT_COLUMNS if c in df.columns]
    samples = df.assign(lost_share=df["lost"] / (df["lost"] + df["received"]))
    frame = samples.groupby(by, dropna=False, observed=True, as_index=False).agg(
        lost_share=("lost_share", "median"), blocked_share=("blocked_share", "median")
    )
    frame["offered"] = frame["rate"].map(lambda r: RATE.label(r) if r else "unpaced")
    frame["work_label"] = frame["work"].map(WORK.label) if "work" in frame else WORK.label(0)
    if "hwm" in frame:
        frame["hwm_label"] = frame["hwm"].map(HWM.label)
    frame["size_label"] = frame["size"].map(lambda s: format_size(int(s)))
    frame["mode"] = frame["copy"].map({True: "copy", False: "zero-copy"})
    frame["words"] = [
        _cell_words(lost, blocked)
        for lost, blocked in zip(frame["lost_share"], frame["blocked_share"], strict=True)
    ]
    return frame


def _cell_words(lost: float, blocked: float) -> str:
    """``lost 42%``, ``blocked 80%``, or ``none lost``: what a cell says, on two lines
    (a map of seven rates keeps its cells narrow)."""
    if lost > 0:
        return f"lost{_LINE}{lost:.0%}"
    if not pd.isna(blocked) and blocked > 0:
        share = f"{blocked:.0%}" if blocked >= 0.005 else "<1%"
        return f"blocked{_LINE}{share}"
    return f"none{_LINE}lost"


def pressure_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Lost share (colour) by offered rate and work per message, one map per pattern;
    each cell's words say the loss, or the time blocked where nothing was lost."""
    frame = pressure_frame(df)
    rates = [RATE.label(r) if r else "unpaced" for r in sorted(frame["rate"].unique())]
    marks = sorted(frame["hwm"].unique()) if "hwm" in frame else []
    works = sorted(frame["work"].unique()) if "work" in frame else [0.0]
    # Down: the work, or the mark where only it varies; both: a row of maps per mark.
    if len(marks) > 1 and len(works) == 1:
        down, downs = HWM, [HWM.label(m) for m in marks]
    else:
        down, downs = WORK, [WORK.label(w) for w in works]
    rows = _rows(frame, by_mark=down is WORK and len(marks) > 1)
    if rows is not None:
        ordered = [c for c in ("loop", "hwm") if c in frame]
        frame = frame.assign(row_label=rows[0]).sort_values(ordered, kind="stable")
    x = alt.X("offered:O", title=RATE.axis_title, sort=rates)
    y = alt.Y(f"{down.name}_label:O", title=down.axis_title, sort=downs)
    base = alt.Chart(frame).encode(x=x, y=y)
    cells = base.mark_rect().encode(
        color=alt.Color(
            "lost_share:Q",
            title="messages lost",
            scale=alt.Scale(domain=[0, 1], scheme="orangered"),
            legend=alt.Legend(format=".0%", orient="bottom"),
        ),
        tooltip=[
            alt.Tooltip("pattern:N", title=COLUMN_TITLES["pattern"]),
            alt.Tooltip("offered:O", title=RATE.title),
            alt.Tooltip(f"{down.name}_label:O", title=down.title),
            alt.Tooltip("lost_share:Q", title="lost", format=".1%"),
            alt.Tooltip("blocked_share:Q", title="sender blocked", format=".1%"),
        ],
    )
    words = base.mark_text(fontSize=11, lineBreak=_LINE).encode(
        text="words:N",
        color=alt.condition("datum.lost_share > 0.5", alt.value("white"), alt.value("black")),
    )
    cell = min(_CELL, _MAPS_WIDTH // (len(rates) * frame["pattern"].nunique()))
    layered = (cells + words).properties(width=cell * len(rates), height=40 * len(downs))
    column = alt.Column("pattern:N", title=COLUMN_TITLES["pattern"])
    if rows is None:
        chart = layered.facet(column=column)
    else:
        order = list(dict.fromkeys(frame["row_label"]))
        chart = layered.facet(column=column, row=alt.Row("row_label:O", title=rows[1], sort=order))
    return titled(
        chart,
        "Queues under pressure: lost (a PUB drops) or blocked (a PUSH waits)",
        subtitle(frame, ["transport", "size_label", "mode", "peer"], _WORDS),
    )


def _rows(frame: pd.DataFrame, by_mark: bool) -> tuple[pd.Series, str] | None:
    """Each point's row of maps, and the rows' title: one per loop where both loops ran
    (each cell is then one point's), and one per high-water mark where the marks vary
    beside the work; None where neither does."""
    labels, titles = [], []
    if "loop" in frame and frame["loop"].nunique() > 1:
        labels.append(frame["loop"] + " loop")
        titles.append(COLUMN_TITLES["loop"])
    if by_mark:
        labels.append(frame["hwm_label"])
        titles.append(HWM.axis_title)
    if not labels:
        return None
    return (labels[0] if len(labels) == 1 else labels[0] + ", " + labels[1]), " / ".join(titles)


__all__ = ["pressure_chart", "pressure_frame"]

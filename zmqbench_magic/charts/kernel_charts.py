"""Where a kernel message's round trip goes (``%kernelmsg``): one stacked bar per point
of the sweep, a segment per stage (to the kernel, in it, the reply, the idle status),
each the median over the point's samples of the sample's mean."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..params.kernel_messages import STAGE_METRICS, KernelMsgParams
from .layout import HEIGHT, WIDTH, legend, picked, selector, titled, tooltip
from .series import point_medians

_POINT = [p.name for p in KernelMsgParams.sweep_fields()]
_STAGES = [m.title for m in STAGE_METRICS]
_UNIT = STAGE_METRICS[0].unit


def kernel_stages_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Stacked medians of each stage per point: which stage a request spends its time
    in, and how that moves with the message, its size and the kernel. A start has no
    stages (nothing stamps inside it) and no bar."""
    frame = point_medians(df, [m.name for m in STAGE_METRICS], _POINT).dropna(subset=["value"])
    frame["stage"] = frame["metric"].map({m.axis_title: m.title for m in STAGE_METRICS})
    frame["order"] = frame["stage"].map({stage: i for i, stage in enumerate(_STAGES)})
    frame["point"] = [_label(row) for _, row in frame.iterrows()]
    order = list(dict.fromkeys(frame["point"]))
    pick = selector("stage", "pick_stage")
    bars = (
        alt.Chart(frame, width=max(WIDTH, 40 * len(order)), height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("point:N", sort=order, title="message", axis=alt.Axis(labelAngle=-30)),
            y=alt.Y("value:Q", stack="zero", title=f"median time per request ({_UNIT})"),
            color=alt.Color(
                "stage:N",
                sort=_STAGES,
                legend=legend("stage", len(_STAGES)),
                scale=alt.Scale(domain=_STAGES, scheme="tableau10"),
            ),
            order=alt.Order("order:Q"),
            opacity=picked(pick),
            tooltip=tooltip(frame, ["stage", *_POINT], "value", f"median ({_UNIT})", ".1f"),
        )
        .add_params(pick)
    )
    return titled(
        bars,
        "Where a kernel message's round trip goes",
        "each stage's median over the samples of a point, stacked; the stages of one "
        "sample add up to its round trip",
    )


def _label(row: pd.Series) -> str:
    """``comm 64k B buffer on python3``: the settings a point names."""
    named = {n: row[n] for n in _POINT if n in row and not pd.isna(row[n])}
    return KernelMsgParams.words(named, [n for n in named if n != "kernel"]) + (
        f" on {named['kernel']}" if "kernel" in named else ""
    )


__all__ = ["kernel_stages_chart"]

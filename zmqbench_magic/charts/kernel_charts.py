"""Where a kernel message's round trip goes (``%kernelmsg``): one stacked bar per point
of the sweep, a segment per stage (to the kernel, in it, the reply, the idle status),
each the median over the point's samples of the sample's mean."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..params.kernel_messages import (
    BUFFERS,
    MESSAGES,
    SIGNING,
    STAGE_METRICS,
    VIA,
    WS_PROTOCOL,
    KernelMsgParams,
)
from ..params.units import format_size
from .layout import HEIGHT, legend, picked, selector, titled, tooltip
from .series import point_medians

_POINT = [p.name for p in KernelMsgParams.sweep_fields()]
_STAGES = [m.title for m in STAGE_METRICS]
_UNIT = STAGE_METRICS[0].unit
# Each setting's values in the order its option lists them (a sort key for the bars).
_RANK = {
    "buffers": {v: i for i, v in enumerate(BUFFERS.choices)},
    "via": {v: i for i, v in enumerate(VIA.choices)},
    "ws_protocol": {v: i for i, v in enumerate(WS_PROTOCOL.choices)},
    "signing": {v: i for i, v in enumerate(SIGNING.choices)},
}
# What a title names where a run varies it.
_NAMES = {
    "msg": "message",
    "size": "size",
    "buffers": "payload",
    "via": "path",
    "ws_protocol": "websocket protocol",
    "signing": "signing",
    "kernel": "kernel",
}


def kernel_stages_chart(df: pd.DataFrame) -> alt.TopLevelMixin:
    """Stacked medians of each stage per point, a panel per message with its own scale
    (a stream's cell takes a hundred times an execute's): which stage a request spends
    its time in, and how that moves with its size, its path and the kernel. A start has
    no stages (nothing stamps inside it) and no bar."""
    frame = point_medians(df, [m.name for m in STAGE_METRICS], _POINT).dropna(subset=["value"])
    frame["stage"] = frame["metric"].map({m.axis_title: m.title for m in STAGE_METRICS})
    frame["order"] = frame["stage"].map({stage: i for i, stage in enumerate(_STAGES)})
    several_kernels = frame["kernel"].nunique() > 1 if "kernel" in frame else False
    frame["point"] = [_label(row, several_kernels) for _, row in frame.iterrows()]
    # Bars by size, then payload, path and signing, as the options order their values.
    ranked = frame.assign(**{f"_{k}": frame[k].map(_RANK[k]) for k in _RANK if k in frame})
    keys = [c for c in ("size", *(f"_{k}" for k in _RANK)) if c in ranked]
    order = list(dict.fromkeys(ranked.sort_values(keys)["point"])) if keys else None
    pick = selector("stage", "pick_stage")
    bars = (
        alt.Chart(
            frame, width=max(120, 36 * frame.groupby("msg")["point"].nunique().max()), height=HEIGHT
        )
        .mark_bar()
        .encode(
            x=alt.X(
                "point:N", title=None, sort=order, axis=alt.Axis(labelAngle=-30, labelLimit=160)
            ),
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
    panels = bars.facet(
        column=alt.Column(
            "msg:N", title=None, sort=list(MESSAGES), header=alt.Header(labelFontSize=13)
        )
    ).resolve_scale(x="independent", y="independent")
    varying = [_NAMES[k] for k in _NAMES if k in frame and frame[k].nunique() > 1]
    by = f": by {', '.join(varying)}" if varying else ""
    return titled(
        panels,
        f"Where a kernel message's round trip goes{by}",
        "each stage's median over the samples of a point, stacked (a panel per message, "
        "each its own scale); the stages of one sample add up to the round trip of the "
        "requests they come from",
    )


def _label(row: pd.Series, several_kernels: bool) -> str:
    """``1k B binary buffer, server v1``: what tells a message's bars apart."""
    words = []
    if "size" in row and not pd.isna(row["size"]):
        words.append(f"{format_size(int(row['size']))} B")
    if "buffers" in row and not pd.isna(row["buffers"]):
        words.append(BUFFERS.label(bool(row["buffers"])))
    if "via" in row and not pd.isna(row["via"]):
        protocol = row.get("ws_protocol")
        words.append(str(row["via"]) + ("" if pd.isna(protocol) else f" {protocol}"))
    if "signing" in row and not pd.isna(row["signing"]):
        words.append(SIGNING.label(bool(row["signing"])))
    if several_kernels:
        words.append(str(row["kernel"]))
    return ", ".join(words) or str(row["msg"])


__all__ = ["kernel_stages_chart"]

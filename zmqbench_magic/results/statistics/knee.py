"""The knee of a latency-under-load curve (``%zmqlat --rate``): the lowest offered rate
at which the pair stops keeping up. Pure pandas.

Latency under load is not monotonic at low rates: a pair that idles between messages
pays for waking up (libzmq issue #4673 reports sub-50 µs back to back and 200 µs+
once messages are spaced out), so the reference for "rising" is the lowest median
at any lower rate, not the median at the lowest rate.
"""

from __future__ import annotations

import math

import pandas as pd

from ...params import LatencyParams

# The knee: a median round trip this many times the best one at a lower rate.
KNEE_FACTOR = 2.0
_SERIES = [p.name for p in LatencyParams.sweep_fields() if p.name != "rate"]


def load_knees(df: pd.DataFrame) -> pd.DataFrame:
    """Per series of open-loop points (every swept setting but the rate), its knee.

    Columns: the series' settings, ``held_up_to_per_s`` (the highest offered rate
    held before the knee; NaN if none was), ``knee_per_s`` (the lowest offered rate
    not held in every sample, or whose median round trip is more than
    :data:`KNEE_FACTOR` times the lowest median at a lower rate; NaN where no rate
    measured reached it) and ``knee_reason``, in words.

    >>> load_knees(result.df)[["loop", "held_up_to_per_s", "knee_per_s"]]  # doctest: +SKIP
    """
    open_loop = df[df["rate"] > 0] if "rate" in df.columns else df.iloc[0:0]
    by = [c for c in _SERIES if c in open_loop.columns]
    columns = [*by, "held_up_to_per_s", "knee_per_s", "knee_reason"]
    rows = []
    for key, series in open_loop.groupby(by, sort=False):
        points = series.groupby("rate").agg(p50=("sample_p50_us", "median"), held=("held", "all"))
        rows.append({**dict(zip(by, key, strict=True)), **_knee(points)})
    return pd.DataFrame(rows, columns=columns)


def _knee(points: pd.DataFrame) -> dict[str, object]:
    best, held_up_to = math.inf, math.nan
    for rate, point in points.sort_index().iterrows():
        if not point["held"]:
            return _found(held_up_to, rate, "the rate was not held")
        if point["p50"] > KNEE_FACTOR * best:
            ratio = point["p50"] / best
            return _found(held_up_to, rate, f"median round trip {ratio:.1f}x the best below")
        best, held_up_to = min(best, point["p50"]), rate
    return _found(held_up_to, math.nan, "")


def _found(held_up_to: float, knee: float, reason: str) -> dict[str, object]:
    return {"held_up_to_per_s": held_up_to, "knee_per_s": knee, "knee_reason": reason}

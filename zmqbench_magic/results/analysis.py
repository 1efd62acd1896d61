"""Derived figures computed from a tidy result DataFrame (pure pandas, no plotting)."""

from __future__ import annotations

import itertools
import math

import pandas as pd

from ..params import ZmqParams

# What a copy / zero-copy pair is compared over: every swept parameter but copy.
_PAIR_COLUMNS = [p.name for p in ZmqParams.sweep_fields() if p.name != "copy"]


def medians(df: pd.DataFrame, metric: str, by: list[str]) -> pd.DataFrame:
    """The median of ``metric`` over the samples of each group in ``by``."""
    return df.groupby(by, sort=True)[metric].median().reset_index()


def zero_copy_speedup(df: pd.DataFrame, metric: str = "msgs_per_s") -> pd.DataFrame:
    """Median zero-copy rate over median copy rate, per transport and size.

    Returns the pair columns plus ``speedup`` (above 1: zero-copy is faster). Points
    measured with only one of the two copy modes are left out.

    Example
    -------
    >>> zero_copy_speedup(result.df)[["size", "speedup"]]  # doctest: +SKIP
    """
    by = [c for c in _PAIR_COLUMNS if c in df.columns]
    table = medians(df, metric, [*by, "copy"]).pivot_table(index=by, columns="copy", values=metric)
    if True not in table.columns or False not in table.columns:
        return pd.DataFrame(columns=[*by, "speedup"])
    table = table.dropna(subset=[True, False])
    table["speedup"] = table[False] / table[True]
    return table["speedup"].reset_index()


def crossover_size(df: pd.DataFrame, metric: str = "msgs_per_s") -> float | None:
    """The message size above which zero-copy stays faster than copy, from the data.

    Found on the measured sizes (one transport, peer and copy threshold at a time:
    filter ``df`` first) as the last place where the speed-up rises through 1,
    interpolated on a log-log scale between the two sizes around it. ``None`` when
    the speed-up never rises through 1 within the measured sizes: either zero-copy
    never wins there, or it already wins at the smallest size.
    """
    speedup = zero_copy_speedup(df, metric)
    groups = speedup.drop(columns=["size", "speedup"]).drop_duplicates()
    if len(groups) > 1:
        msg = f"crossover_size needs one transport/peer/copy_threshold at a time, got {len(groups)}"
        raise ValueError(msg)
    points = list(speedup.sort_values("size")[["size", "speedup"]].itertuples(index=False))
    for (small, below), (large, above) in reversed(list(itertools.pairwise(points))):
        if below < 1 <= above:
            # log(speedup) is close to linear in log(size) between neighbouring sizes.
            fraction = -math.log(below) / (math.log(above) - math.log(below))
            return math.exp(math.log(small) + fraction * (math.log(large) - math.log(small)))
    return None


def half_efficiency_duration(df: pd.DataFrame) -> float | None:
    """The task duration (s) at which ``map`` reaches 50% efficiency: below it, the
    overhead of sending a task takes longer than the task itself.

    Interpolated on a log scale between the two measured durations around the last
    rise through 0.5 (one engine count / view / scheme at a time: filter ``df``
    first). ``None`` when no measured pair of durations brackets it.
    """
    table = medians(df, "efficiency", ["duration"]).sort_values("duration")
    points = [(d, e) for d, e in table.itertuples(index=False) if d > 0]
    for (short, below), (long, above) in reversed(list(itertools.pairwise(points))):
        if below < 0.5 <= above:
            fraction = (0.5 - below) / (above - below)
            return math.exp(math.log(short) + fraction * (math.log(long) - math.log(short)))
    return None

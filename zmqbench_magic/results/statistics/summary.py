"""A result's summary: per point, the median of each metric over the samples, the
headline's interval at the level it reaches, and the figures that are not medians:
the true extremes, and for latency every percentile and the mean over every round
trip of the point (:mod:`.pooled`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ...params import KINDS
from .pooled import PERCENTILES, matching, pooled_mean, pooled_percentiles
from .stats import median_ci

if TYPE_CHECKING:
    from ..resultlike import ResultLike


def group_columns(result: ResultLike, df: pd.DataFrame) -> list[str]:
    """What one summary row stands for: the run (when there are several) and the point."""
    several_runs = "run" in df.columns and df["run"].nunique() > 1
    return (["run"] if several_runs else []) + [c for c in result.point_columns if c in df]


def summarize(result: ResultLike) -> pd.DataFrame:
    if not result.rows:
        return pd.DataFrame()
    df = result.df
    headline = result.metric_names[0]
    by = group_columns(result, df)
    metrics = [m for m in result.metric_names if m in df.columns]
    grouped = df.groupby(by, sort=False, dropna=False)
    table = grouped[metrics].median()
    table.insert(0, "n", grouped.size())
    intervals = grouped[headline].apply(lambda s: median_ci(s.dropna().tolist()))
    table["ci_low"] = [ci[0] for ci in intervals]
    table["ci_high"] = [ci[1] for ci in intervals]
    table["ci_level"] = [ci[2] for ci in intervals]
    table[f"{headline}_min"] = grouped[headline].min()
    table[f"{headline}_max"] = grouped[headline].max()
    table["spread"] = (grouped[headline].std(ddof=0) / grouped[headline].mean()).fillna(0)
    if "other_load" in df.columns:
        table["other_load"] = grouped["other_load"].max()
    if "held" in df.columns:
        # An offered rate counts as held only if every sample held it.
        table["held"] = grouped["held"].all()
    if "max_us" in df.columns:
        # The point's slowest and fastest round trips, not a median of samples' maxima.
        table["max_us"] = grouped["max_us"].max()
        table["min_us"] = grouped["min_us"].min()
    summary = table.reset_index()
    if KINDS[result.benchmark].pooled:
        summary = _with_pooled(result, summary, by, grouped)
    return summary


def _with_pooled(
    result: ResultLike,
    summary: pd.DataFrame,
    by: list[str],
    grouped: pd.api.typing.DataFrameGroupBy,
) -> pd.DataFrame:
    """The mean and every percentile over all round trips of each point."""
    if "round_trips" in result.df.columns:
        means = grouped.apply(
            lambda g: pooled_mean(g["sample_mean_us"], g["round_trips"]), include_groups=False
        )
        summary["mean_us"] = means.to_numpy()
    pooled = []
    for key in summary[by].itertuples(index=False):
        point = dict(zip(by, key, strict=True))
        histograms = matching(result.distributions, point)
        pooled.append(pooled_percentiles(histograms) if histograms else {})
    for column in (*PERCENTILES, "round_trips"):
        summary[column] = [figures.get(column, float("nan")) for figures in pooled]
    # A bucket's value may lie up to 1% past the slowest round trip in it.
    summary[list(PERCENTILES)] = summary[list(PERCENTILES)].clip(upper=summary["max_us"], axis=0)
    return summary

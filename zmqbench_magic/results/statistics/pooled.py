"""A latency point's figures over every round trip of its samples, not medians of the
samples' own figures.

A median of per-sample p99s hides a stall: one sample in ten with 300 round trips of
5 ms leaves the median p99 at the others' 130 µs, while the p99 of the point's round
trips is 4.7 ms. HdrHistogram-style tools pool, and so does every percentile and mean
a user reads here (summary, text, charts). The per-sample figures stay in the
DataFrame as ``sample_*`` columns, for the spread between samples.

The interval of a pooled percentile resamples whole samples (a cluster bootstrap,
``scipy.stats.bootstrap``): round trips within a sample are not independent (a stall
takes many in a row), samples are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...params.columns import Distribution
from ...params.point_record import Settings
from .histogram import GROWTH, LogHistogram
from .stats import CONFIDENCE, scipy_stats

# The pooled percentiles, by column.
PERCENTILES = {"p50_us": 50.0, "p90_us": 90.0, "p99_us": 99.0, "p999_us": 99.9}
_RESAMPLES = 999
_SEED = 20261124  # fixed: the same samples always give the same interval


def matching(entries: Sequence[Distribution], point: Settings) -> list[LogHistogram]:
    """The histograms of the distribution entries at ``point`` (one per sample, or one
    per point in files written before samples kept their own)."""
    return [
        LogHistogram.from_json(entry["rtt_hist"])
        for entry in entries
        if all(_same(entry.get(k), v) for k, v in point.items())
    ]


def _same(a: Any, b: Any) -> bool:
    both_missing = a is None and (b is None or (isinstance(b, float) and math.isnan(b)))
    return both_missing or a == b


def pooled_percentiles(histograms: Sequence[LogHistogram]) -> dict[str, float]:
    """Each of :data:`PERCENTILES` over every round trip of ``histograms`` (within the
    histogram's 1%), and ``round_trips``."""
    merged = sum(histograms, LogHistogram())
    figures = {column: merged.percentile(q) for column, q in PERCENTILES.items()}
    return {**figures, "round_trips": merged.total}


def pooled_interval(
    histograms: Sequence[LogHistogram], q: float, level: float = CONFIDENCE
) -> tuple[float, float]:
    """An interval for the ``q``-th percentile of the pooled round trips, resampling
    whole samples; NaN with fewer than 2 samples."""
    if len(histograms) < 2:
        return math.nan, math.nan
    buckets = sorted({b for h in histograms for b in h.counts})
    column = {b: i for i, b in enumerate(buckets)}
    counts = np.zeros((len(histograms), len(buckets)))
    for row, histogram in enumerate(histograms):
        for bucket, count in histogram.counts.items():
            counts[row, column[bucket]] = count
    values = GROWTH ** (np.asarray(buckets) + 0.5)

    def percentile(samples: np.ndarray, axis: int = -1) -> np.ndarray:
        merged = counts[samples.astype(int)].sum(axis=-2)  # (..., buckets)
        cumulative = merged.cumsum(axis=-1)
        wanted = q / 100 * cumulative[..., -1:]
        return values[(cumulative < wanted).sum(axis=-1)]

    found = scipy_stats().bootstrap(
        (np.arange(len(histograms)),),
        percentile,
        vectorized=True,
        n_resamples=_RESAMPLES,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(_SEED),
    )
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


def pooled_points(
    df: pd.DataFrame,
    distributions: Sequence[Distribution],
    metrics: Sequence[str],
    by: Sequence[str],
) -> pd.DataFrame:
    """Per point of ``by`` and pooled percentile in ``metrics`` (``p50_us``, ...): its
    ``value`` over every round trip, the interval from resampling the point's samples
    (``ci_low``, ``ci_high``, ``ci_level``), ``samples`` and ``metric``: the frame the
    charts draw. Runs in ``df`` that share a point are pooled too."""
    rows = []
    for key, group in df.groupby(list(by), sort=True, dropna=False):
        point = dict(zip(by, key, strict=True))
        histograms = matching(distributions, point)
        for metric in metrics:
            low, high = pooled_interval(histograms, PERCENTILES[metric])
            value = sum(histograms, LogHistogram()).percentile(PERCENTILES[metric])
            rows.append(
                {
                    **point,
                    "value": value,
                    "ci_low": low,
                    "ci_high": high,
                    "ci_level": CONFIDENCE if len(histograms) > 1 else 0.0,
                    "samples": len(group),
                    "metric": metric,
                }
            )
    return pd.DataFrame(
        rows, columns=[*by, "value", "ci_low", "ci_high", "ci_level", "samples", "metric"]
    )


def pooled_mean(means: Sequence[float], round_trips: Sequence[float]) -> float:
    """The mean over every round trip: the samples' means weighted by their round trips."""
    weights = np.asarray(round_trips, dtype=float)
    if not weights.sum():
        return math.nan
    return float(np.average(np.asarray(means, dtype=float), weights=weights))


__all__ = [
    "PERCENTILES",
    "matching",
    "pooled_interval",
    "pooled_mean",
    "pooled_percentiles",
    "pooled_points",
]

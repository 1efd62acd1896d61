"""Every round trip of a point, kept as a log-bucketed histogram (HdrHistogram-style).

A latency point runs up to millions of round trips; storing them raw would make a
result file huge, and keeping only per-sample percentiles loses the tail and any
chance to draw the distribution. Buckets grow by 2%: bucket ``i`` holds values in
``[GROWTH**i, GROWTH**(i+1))`` and is read back as its geometric middle, so any value
read from the histogram is within 1% of a value that was measured. Counts are exact.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

GROWTH = 1.02
_LOG_GROWTH = math.log(GROWTH)
# The largest relative error of a value read back (half a bucket, geometrically).
RELATIVE_ERROR = math.sqrt(GROWTH) - 1


@dataclass(frozen=True)
class LogHistogram:
    """Bucket index -> count; values in µs, positive."""

    counts: Mapping[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, values_us: Iterable[float] | np.ndarray) -> LogHistogram:
        values = np.asarray(values_us, dtype=float)
        values = values[values > 0]
        buckets, counts = np.unique(
            np.floor(np.log(values) / _LOG_GROWTH).astype(np.int64), return_counts=True
        )
        return cls(dict(zip(buckets.tolist(), counts.tolist(), strict=True)))

    def __add__(self, other: LogHistogram) -> LogHistogram:
        merged = dict(self.counts)
        for bucket, count in other.counts.items():
            merged[bucket] = merged.get(bucket, 0) + count
        return LogHistogram(merged)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def value(self, bucket: int) -> float:
        """A bucket's value as read back: its geometric middle (µs)."""
        return GROWTH ** (bucket + 0.5)

    def percentile(self, q: float) -> float:
        """The value below which ``q`` percent of the round trips fall (within 1%)."""
        if not self.counts:
            return math.nan
        wanted = q / 100 * self.total
        seen = 0
        for bucket in sorted(self.counts):
            seen += self.counts[bucket]
            if seen >= wanted:
                return self.value(bucket)
        return self.value(max(self.counts))

    def cdf(self) -> list[tuple[float, float]]:
        """``(rtt_us, fraction <= it)`` at the top of each bucket, for a CDF chart."""
        total, seen, points = self.total, 0, []
        for bucket in sorted(self.counts):
            seen += self.counts[bucket]
            points.append((GROWTH ** (bucket + 1), seen / total))
        return points

    def to_json(self) -> dict[str, int]:
        return {str(bucket): count for bucket, count in sorted(self.counts.items())}

    @classmethod
    def from_json(cls, data: Mapping[str, int]) -> LogHistogram:
        return cls({int(bucket): int(count) for bucket, count in data.items()})


__all__ = ["GROWTH", "RELATIVE_ERROR", "LogHistogram"]

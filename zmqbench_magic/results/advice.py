"""How small a task may be (``r.advice()``): from a flood or map result, the shortest
task that keeps 90% of the engines' time on the work, with its 95% interval.

The model is the conservative one: each task costs the engines ``o`` seconds of
overhead on top of its own duration ``d`` (no overlap), so a map is ``d / (d + o)``
efficient and 90% needs ``d >= 9 o``. A chunk of ``c`` items pays ``o`` once, so items
of duration ``d`` need ``c >= 9 o / d``. ``o`` per engine comes from each sample:

- a flood of tiny tasks (the largest task count of a cluster): ``o = engines /
  tasks_per_s``, the engine time each task's overhead takes when nothing else runs;
- a map of sleeps (chunksize 1, duration > 0): ``o = d (1 / efficiency - 1)``.

The interval is the order-statistic interval of the samples' median ``o``
(:func:`.stats.median_ci`), scaled: the uncertainty is the measurement's own.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..params.backends import BACKENDS
from ..params.taskflood import BACKEND, CHUNKSIZE
from .stats import median_ci

if TYPE_CHECKING:
    from .resultset import ResultSet

TARGET = 0.9
# The item duration the chunking advice is worked out for, when the result has none.
_EXAMPLE_ITEM_S = 1e-3
_GROUP = ["backend", "engines", "view", "scheme"]


def advice(result: ResultSet) -> list[str]:
    """One sentence per cluster (or pool) a task flood measured."""
    if not result.rows:
        return []
    df = result.df
    # Files from before a column existed ran its default (also beside newer files).
    for column, default in (("backend", BACKEND.default), ("chunksize", CHUNKSIZE.default)):
        df[column] = df[column].fillna(default) if column in df.columns else default
    overheads = _overheads(df)
    sentences = []
    for key, group in overheads.groupby([c for c in _GROUP if c in overheads], sort=False):
        where = dict(zip(_GROUP, key, strict=True))
        sentences.append(_sentence(where, group["overhead_s"].tolist(), group["source"].iloc[0]))
    return sentences


def _overheads(df: pd.DataFrame) -> pd.DataFrame:
    """Per sample, the overhead each task costs the engines (seconds), and its source."""
    frames = []
    flood = df[df["test"] == "flood"]
    if not flood.empty:
        largest = flood.groupby(_GROUP)["tasks"].transform("max")
        steady = flood[flood["tasks"] == largest]
        frames.append(
            steady.assign(
                overhead_s=steady["engines"] / steady["tasks_per_s"],
                source="flood of " + steady["tasks"].map(lambda n: f"{int(n):,}") + " tiny tasks",
            )
        )
    mapped = df[(df["test"] == "map") & (df["chunksize"] == 1)]
    if "duration" in mapped:
        mapped = mapped[mapped["duration"] > 0]
    if not mapped.empty:
        frames.append(
            mapped.assign(
                overhead_s=(mapped["duration"] * (1 / mapped["efficiency"] - 1)).clip(lower=0),
                source="map of sleeps",
            )
        )
    if not frames:
        return pd.DataFrame(columns=[*_GROUP, "overhead_s", "source"])
    return pd.concat(frames, ignore_index=True)


def _sentence(where: dict[str, Any], overheads: list[float], source: str) -> str:
    factor = TARGET / (1 - TARGET)  # d / (d + o) >= 0.9  <=>  d >= 9 o
    median = float(pd.Series(overheads).median())
    low, high, level = median_ci(overheads)
    shortest = factor * median
    # Rounded first: 9 x 10 ms / 1 ms is 90.00000000000001 in floating point, and a
    # chunk of 90 does reach 90%.
    chunk = math.ceil(round(shortest / _EXAMPLE_ITEM_S, 9))
    engines = int(where["engines"])
    backend = BACKENDS[where["backend"]]
    cluster = backend.cluster(engines)
    if backend.views:
        # The scheme is the load-balanced view's: two clusters may differ by it alone.
        lb = where["view"] == "lb" and where.get("scheme")
        scheme = f", {where['scheme']} scheme" if lb else ""
        cluster += f" ({where['view']} view{scheme})"
    return (
        f"with {cluster}, tasks must last at least {_ms(shortest)} ({level:.0%} CI "
        f"{_ms(factor * low)} to {_ms(factor * high)}), or be chunked by at least {chunk:,} "
        f"for {_ms(_EXAMPLE_ITEM_S)} tasks, for {TARGET:.0%} efficiency (overhead "
        f"{_ms(median)} of engine time per task, from {len(overheads)} samples of a {source})"
    )


def _ms(seconds: float) -> str:
    value = seconds * 1e3
    return f"{value:.3g} ms" if value < 100 else f"{value:,.0f} ms"

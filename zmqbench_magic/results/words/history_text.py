"""A history in words (``zmqbench history``): per point, its runs and last figure and
each step found in it, from the tables of :func:`..statistics.history.history`."""

from __future__ import annotations

import pandas as pd

from ...params import KINDS
from ..statistics.history import HISTORY_COLUMNS, by_point
from .text import figure


def history_lines(series: pd.DataFrame, steps: pd.DataFrame) -> list[str]:
    """A history in words: per point, its runs and last figure, then each step found
    (where, from what to what, how sure), or that none was; then how steps are called::

        1k B: RUNS runs (FIRST to LAST), last MEDIAN msgs/s; step at run RUN (DATE):
            BEFORE -> AFTER, ratio RATIO (p P, Holm P)
    """
    if series.empty:
        return ["no run measured a point of this history"]
    metric, by = series.attrs["metric"], series.attrs["by"]
    unit = _unit_of(series.attrs["benchmark"], metric)
    keys = [c for c in series.columns if c not in (*HISTORY_COLUMNS, "level", "band")]
    words_of = KINDS[series.attrs["benchmark"]].params.words
    lines = []
    for point, rows in by_point(series, keys):
        # The settings that tell the points apart (the first alone where none does).
        varied = {k: v for k, v in point.items() if series[k].nunique() > 1}
        varied = varied or dict(list(point.items())[:1])
        first, last = rows.iloc[0], rows.iloc[-1]
        span = f"{first['version']} to {last['version']}"
        if by == "date":
            span = _date_span(str(first["date"]), str(last["date"]))
        head = (
            f"{words_of(varied) or 'all'}: {len(rows)} runs ({span}), "
            f"last {figure(last['median'])} {unit}"
        )
        mine = steps
        for key, value in point.items():
            mine = mine[mine[key] == value]
        found = []
        for s in mine.to_dict("records"):
            where = f"at run {s['run']} ({str(s['date'])[:10]}): {figure(s['before'])} -> "
            where += f"{figure(s['after'])}, ratio {s['ratio']:.3f}"
            if s["called"]:
                found.append(f"step {where} (p {s['p_value']:.3f}, Holm {s['p_adjusted']:.3f})")
            else:
                found.append(f"no step; the likeliest {where}: {s['reason']}")
        lines.append("; ".join([head, *found]) if found else f"{head}; too few runs to test")
    order = "date" if by == "date" else f"{by} version"
    lines.append(
        f"runs in {order} order; a step: the runs' medians shift beyond the tolerance, with "
        f"a permutation p-value under {series.attrs['alpha']:.2g} after Holm's adjustment "
        f"across {len(list(by_point(series, keys)))} point(s)"
    )
    if series.attrs.get("noise_floor"):
        lines.append(f"tolerance: {series.attrs['noise_floor']}")
    return lines


def _date_span(first: str, last: str) -> str:
    """``2026-11-01 to 2026-11-20``; within one day, its times: ``2026-11-26 01:10 to
    03:40``."""
    if first[:10] != last[:10] or len(first) < 16:
        return f"{first[:10]} to {last[:10]}"
    return f"{first[:10]} {first[11:16]} to {last[11:16]}"


def _unit_of(benchmark: str, metric: str) -> str:
    for declared in KINDS[benchmark].metrics:
        if declared.name == metric:
            return declared.unit
    return ""

"""A comparison as a CI gate: which points are called what the job refuses.

``zmqbench compare BASE CAND --fail-on slower`` and ``zmqbench thr --python base=...
cand=... --fail-on slower`` exit 1 when :func:`gate` finds a point, as
pytest-benchmark's ``--benchmark-compare-fail`` fails a job. The verdicts are the
comparison's own (:mod:`.verdict`): faster and slower are called only beyond the
tolerance and after Holm's adjustment across the points, so a job gated on "slower"
fails on a run compared with itself in at most 5% of runs, whatever the number of
points (the tests measure it).
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from ...params import FAIL_ON
from .compare import point_columns

# What each --fail-on value refuses.
_REFUSED = {
    "slower": {"slower"},
    "faster": {"faster"},
    "any": {"slower", "faster"},
    "inconclusive": {"inconclusive"},
}


def refused_verdicts(fail_on: Iterable[str]) -> set[str]:
    """The verdicts ``--fail-on`` values refuse; a ``ValueError`` names a bad one."""
    refused: set[str] = set()
    for value in fail_on:
        refused |= _REFUSED[FAIL_ON.check(value)]
    return refused


def gate(table: pd.DataFrame, fail_on: Iterable[str]) -> list[str]:
    """The points of a comparison (``compare``/``versus`` table) whose verdict ``fail_on``
    refuses, each in words: ``size=1024: slower, ratio 0.912 (95% CI 0.890 to 0.935)``.
    Empty: the gate passes. A comparison with no point fails any gate: it compared
    nothing."""
    refused = refused_verdicts(fail_on)
    if not refused:
        return []
    if table.empty:
        return ["no point is in both results: nothing was compared"]
    # The columns that tell the points apart (and the size, which names one alone).
    keys = [k for k in point_columns(table) if table[k].nunique() > 1 or k == "size"]
    failed = []
    for row in table.to_dict("records"):
        if row["verdict"] not in refused:
            continue
        where = " ".join(f"{key}={row[key]}" for key in keys) or "all"
        failed.append(
            f"{where}: {row['verdict']}, ratio {row['ratio']:.3f} ({row['ci_level']:.0%} CI "
            f"{row['ci_low']:.3f} to {row['ci_high']:.3f})"
        )
    return failed


def gate_lines(failed: list[str], fail_on: Iterable[str]) -> list[str]:
    """What a gated command prints last: pass, or fail with the points that failed it."""
    asked = " ".join(fail_on)
    if not failed:
        return [f"gate --fail-on {asked}: passed"]
    return [f"gate --fail-on {asked}: FAILED at {len(failed)} point(s)"] + [
        f"  {line}" for line in failed
    ]

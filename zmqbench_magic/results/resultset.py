"""Benchmark results: kept samples, their summary, and a versioned JSON file format.

A :class:`ResultSet` is immutable. It holds one row per kept sample (every swept
parameter and every metric as a column, units in the metric names), the settings
and environment shared by all rows (stored once), and any warnings raised while
measuring. Results of separate runs can be added together to compare them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..params import BENCHMARKS
from .text import summary_line

FORMAT = "zmqbench-result"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class ResultSet:
    """Kept samples of one benchmark, with their settings and environment.

    Example
    -------
    >>> r = run_throughput(size=["1k"], repeat=3)      # doctest: +SKIP
    >>> r.df[["size", "copy", "msgs_per_s"]]            # doctest: +SKIP
    >>> r.save("today.json"); zmqbench_magic.load("today.json")  # doctest: +SKIP
    """

    benchmark: str
    rows: tuple[Mapping[str, Any], ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.benchmark not in BENCHMARKS:
            msg = f"benchmark must be one of {', '.join(BENCHMARKS)}, got {self.benchmark!r}"
            raise ValueError(msg)
        object.__setattr__(self, "rows", tuple(dict(r) for r in self.rows))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    @property
    def metric_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in BENCHMARKS[self.benchmark].metrics)

    @property
    def point_columns(self) -> list[str]:
        """Columns that identify one point of the sweep."""
        names = [p.name for p in BENCHMARKS[self.benchmark].sweep_fields()] + ["frames", "test"]
        return [n for n in names if not self.rows or n in self.rows[0]]

    @property
    def df(self) -> pd.DataFrame:
        """One row per kept sample; a fresh DataFrame each time, free to modify."""
        return pd.DataFrame(list(self.rows))

    def summary(self) -> pd.DataFrame:
        """Per point: sample count and the median, min and max of each metric, and the
        spread of the headline metric (stdev / mean)."""
        if not self.rows:
            return pd.DataFrame()
        headline = self.metric_names[0]
        df = self.df
        metrics = [m for m in self.metric_names if m in df.columns]
        grouped = df.groupby(self.point_columns, sort=False)
        table = grouped[metrics].median()
        table.insert(0, "samples", grouped.size())
        table[f"{headline}_min"] = grouped[headline].min()
        table[f"{headline}_max"] = grouped[headline].max()
        table["spread"] = (grouped[headline].std(ddof=0) / grouped[headline].mean()).fillna(0)
        return table.reset_index()

    def __add__(self, other: ResultSet) -> ResultSet:
        if not isinstance(other, ResultSet):
            return NotImplemented
        if other.benchmark != self.benchmark:
            msg = f"cannot add {other.benchmark} results to {self.benchmark} results"
            raise ValueError(msg)
        return ResultSet(
            self.benchmark,
            self.rows + other.rows,
            settings={**self.settings, **other.settings},
            # One environment (the first run's), and every run's notes.
            metadata={
                **(self.metadata or other.metadata),
                "notes": [*self.metadata.get("notes", []), *other.metadata.get("notes", [])],
            },
            warnings=self.warnings + other.warnings,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "benchmark": self.benchmark,
            "settings": dict(self.settings),
            "metadata": dict(self.metadata),
            "warnings": list(self.warnings),
            "rows": [dict(r) for r in self.rows],
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the results as versioned JSON (no pickle); returns the path."""
        target = Path(path)
        target.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return target

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        target = Path(path)
        self.df.to_csv(target, index=False)
        return target

    def __str__(self) -> str:
        lines = [summary_line(self.benchmark, row) for row in self.summary().to_dict("records")]
        notes = [f"note: {n}" for n in self.metadata.get("notes", [])]
        return "\n".join(notes + lines + [f"warning: {w}" for w in self.warnings])

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("<ResultSet ...>" if cycle else str(self))


def load(path: str | os.PathLike[str]) -> ResultSet:
    """Read a result file written by :meth:`ResultSet.save`."""
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        msg = f"{path} is not a zmqbench result file (no 'format': {FORMAT!r})"
        raise ValueError(msg)
    if data.get("version") != FORMAT_VERSION:
        msg = f"{path} has format version {data.get('version')!r}; this reads {FORMAT_VERSION}"
        raise ValueError(msg)
    return ResultSet(
        data["benchmark"], data["rows"], data["settings"], data["metadata"], data["warnings"]
    )

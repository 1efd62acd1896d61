"""Benchmark results: kept samples, their summary, and a versioned JSON file format.

A :class:`ResultSet` is immutable. It holds one row per kept sample (every swept
parameter and every metric as a column, units in the metric names, and the ``run``
it came from), the settings and environment of each run (stored once per run), the
latency distributions (every round trip, bucketed), and any warnings raised while
measuring. ``a + b`` joins runs and keeps each one's identity and environment;
``a.compare(b)`` tells whether they differ. :func:`load` reads one file back,
:func:`load_runs` files and folders of them as one result.

The class holds the data and its files; what is derived from it is not written here.
:meth:`~ResultSet.summary`, :meth:`~ResultSet.compare`, :meth:`~ResultSet.versus`,
:meth:`~ResultSet.history` and ``str()`` call functions of :mod:`.statistics` and
:mod:`.words`, which take their result as a :class:`~.resultlike.ResultLike` (the
attributes a ``ResultSet`` has) and never import this module: the imports run one way,
from here down to them, and from what makes or shows whole results (the measurement
cores, :mod:`.synthetic`, the adapters) down to here. :meth:`~ResultSet.advice` is
the benchmark kind's own (its record's ``advice`` hook).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd

from ..params import KINDS
from ..params.columns import Distribution, Metadata, Row
from ..params.declare import RunSettings
from ..params.point_record import Settings
from .statistics.compare import arms_versus, compare
from .statistics.histogram import LogHistogram
from .statistics.history import history
from .statistics.summary import summarize
from .words.summary_lines import summary_lines
from .words.text import fit, verdict_lines

FORMAT = "zmqbench-result"
FORMAT_VERSION = 4
# Version 3 named a latency sample's own figures ``sample_*`` (the unprefixed names are
# now the point's, over every round trip) and kept one histogram per sample.
_RENAMED_IN_3 = {
    "rtt_us": "sample_mean_us",
    "p50_us": "sample_p50_us",
    "p90_us": "sample_p90_us",
    "p99_us": "sample_p99_us",
    "p999_us": "sample_p999_us",
}
# Version 4 made --hwm a swept setting, a point's column where it is given: the mark
# each sample's sockets had is its own column.
_RENAMED_IN_4 = {"hwm": "queue_hwm"}


class StoredResult(TypedDict):
    """A result as its file keeps it (``FORMAT``, ``FORMAT_VERSION``): what
    :meth:`ResultSet.to_json` writes and :func:`load` reads back."""

    format: str
    version: int
    benchmark: str
    settings: RunSettings
    metadata: Metadata
    runs: dict[str, Metadata]
    warnings: list[str]
    rows: list[Row]
    distributions: list[Distribution]


@dataclass(frozen=True)
class ResultSet:
    """Kept samples of one benchmark (one or several runs), with their environment.

    ``metadata`` is the first run's environment plus every run's notes; ``runs`` maps
    each run's name (its label, or its id) to its own environment and settings.

    Example
    -------
    >>> r = run_throughput(size=["1k"], repeat=6, label="today")  # doctest: +SKIP
    >>> r.summary()[["size", "copy", "msgs_per_s", "ci_low", "ci_high"]]  # doctest: +SKIP
    >>> load("yesterday.json").compare(r)                          # doctest: +SKIP
    """

    benchmark: str
    rows: tuple[Row, ...]
    settings: RunSettings = field(default_factory=dict)
    metadata: Metadata = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    distributions: tuple[Distribution, ...] = ()
    runs: Mapping[str, Metadata] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.benchmark not in KINDS:
            msg = f"benchmark must be one of {', '.join(KINDS)}, got {self.benchmark!r}"
            raise ValueError(msg)
        object.__setattr__(self, "rows", tuple(dict(r) for r in self.rows))
        object.__setattr__(self, "warnings", tuple(self.warnings))
        object.__setattr__(self, "distributions", tuple(dict(d) for d in self.distributions))
        if not self.runs:
            # One run (or a file from before runs had names): name it from its metadata.
            name = self.metadata.get("run", "run")
            runs = {name: {**self.metadata, "settings": dict(self.settings)}}
            object.__setattr__(self, "runs", runs)

    @property
    def metric_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in KINDS[self.benchmark].metrics)

    @property
    def point_columns(self) -> list[str]:
        """Columns that identify one point of the sweep."""
        names = [p.name for p in KINDS[self.benchmark].params.sweep_fields()] + ["frames", "test"]
        # A setting only some points name (a comm's size, not an execute's) is a column
        # of every row, empty in the others'.
        present = set().union(*self.rows) if self.rows else set(names)
        return [n for n in names if n in present]

    @property
    def df(self) -> pd.DataFrame:
        """One row per kept sample; a fresh DataFrame each time, free to modify. Its
        ``attrs["until"]`` says how its rounds were taken (``decided``: until each
        comparison was decided), so a comparison drawn from the frame alone judges it
        as it was taken."""
        frame = pd.DataFrame(list(self.rows))
        frame.attrs["until"] = self.settings.get("until", "rounds")
        return frame

    def summary(self) -> pd.DataFrame:
        """Per point (and run, when there are several): ``n`` samples, the median of each
        metric, the headline metric's interval (``ci_low``, ``ci_high``, and
        ``ci_level``, the confidence reached with ``n``), its min, max and spread, and
        the busiest ``other_load``; for latency the point's figures over every round
        trip of its samples: ``mean_us``, ``p50_us`` to ``p999_us``, ``max_us``,
        ``min_us`` and ``round_trips``."""
        return summarize(self)

    def advice(self) -> list[str]:
        """For a task flood or map: how long tasks must last (or how they must be
        chunked) for 90% efficiency, with its 95% interval (:mod:`.words.advice`)."""
        advise = KINDS[self.benchmark].module.advice
        return advise(self) if advise is not None else []

    def histogram(self, point: Settings) -> LogHistogram:
        """Every round trip of the latency points matching ``point`` (e.g. ``{"size":
        1024, "transport": "tcp"}``), merged across runs that match."""
        merged = LogHistogram()
        for entry in self.distributions:
            if all(entry.get(k) == v for k, v in point.items()):
                merged += LogHistogram.from_json(entry["rtt_hist"])
        return merged

    def compare(
        self,
        candidate: ResultSet,
        match: Sequence[str] | None = None,
        metric: str | None = None,
        tolerance: float | None = None,
    ) -> pd.DataFrame:
        """This run (the baseline) against another run, ``candidate``: one row per
        shared point, unpaired. Two arms of one run compare better with :meth:`versus`.
        The default tolerance is this host's noise floor (``zmqbench noise``).

        See :func:`zmqbench_magic.results.statistics.compare.compare`."""
        return compare(self, candidate, match=match, metric=metric, tolerance=tolerance)

    def versus(
        self,
        column: str,
        baseline: Any,
        candidate: Any,
        metric: str | None = None,
        tolerance: float | None = None,
    ) -> pd.DataFrame:
        """Two arms of this run, paired by round: ``column == candidate`` against
        ``column == baseline`` at every point of the other swept parameters.

        The rows and verdicts are those of :meth:`compare`; the ratio and its interval
        come from each round's own ratio, which cancels what the machine was doing in
        that round, so a difference is found with fewer samples. A run taken with
        ``until="decided"`` is judged round by round, as it was taken
        (:mod:`~zmqbench_magic.results.statistics.sequential`). The tolerance is the
        run's own (``--tolerance``, 1% unless it was given).

        Example
        -------
        >>> r = run_throughput(size=["1k", "1M"], copy=[True, False])  # doctest: +SKIP
        >>> r.versus("copy", True, False)[["size", "ratio", "verdict"]]  # doctest: +SKIP
        """
        return arms_versus(self, column, baseline, candidate, metric, tolerance)

    def history(
        self,
        metric: str | None = None,
        by: str = "date",
        tolerance: float | None = None,
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Each point's figure across the runs this result holds (``a + b + c``, or
        :func:`load_runs` of a folder), in date order or by the version of ``by`` they
        ran with (``"pyzmq"``), and the runs where it stepped: ``(series, steps)``, see
        :func:`.statistics.history.history`.

        >>> series, steps = load_runs(["runs/"]).history()  # doctest: +SKIP
        >>> steps[["size", "run", "ratio", "p_adjusted"]]    # doctest: +SKIP
        """
        return history(self, metric, by, tolerance)

    def __add__(self, other: ResultSet) -> ResultSet:
        if not isinstance(other, ResultSet):
            return NotImplemented
        if other.benchmark != self.benchmark:
            msg = f"cannot add {other.benchmark} results to {self.benchmark} results"
            raise ValueError(msg)
        other = other._renamed_apart(self.runs)
        return ResultSet(
            self.benchmark,
            self.rows + other.rows,
            settings={**self.settings, **other.settings},
            metadata={
                **(self.metadata or other.metadata),
                "notes": [*self.metadata.get("notes", []), *other.metadata.get("notes", [])],
            },
            warnings=self.warnings + other.warnings,
            distributions=self.distributions + other.distributions,
            runs={**self.runs, **other.runs},
        )

    def _renamed_apart(self, taken: Mapping[str, Metadata]) -> ResultSet:
        """This result with its runs renamed where ``taken`` already uses the name for
        another run (two runs labelled the same stay two runs)."""
        renames = {}
        for name, meta in self.runs.items():
            if name in taken and taken[name].get("run_id") != meta.get("run_id"):
                number = 2
                while f"{name}#{number}" in taken or f"{name}#{number}" in self.runs:
                    number += 1
                renames[name] = f"{name}#{number}"
        if not renames:
            return self

        def rename(entry: Row) -> Row:
            run = str(entry.get("run"))
            return {**entry, "run": renames.get(run, run)}

        return ResultSet(
            self.benchmark,
            tuple(rename(r) for r in self.rows),
            self.settings,
            self.metadata,
            self.warnings,
            tuple(rename(d) for d in self.distributions),
            {renames.get(n, n): m for n, m in self.runs.items()},
        )

    def to_json(self) -> StoredResult:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "benchmark": self.benchmark,
            "settings": dict(self.settings),
            "metadata": dict(self.metadata),
            "runs": {name: dict(meta) for name, meta in self.runs.items()},
            "warnings": list(self.warnings),
            # NaN (a figure not measured) is written as null: JSON has no NaN.
            "rows": [{k: _json_value(v) for k, v in r.items()} for r in self.rows],
            "distributions": [dict(d) for d in self.distributions],
        }

    def save(
        self, path: str | os.PathLike[str], *, append: bool = False, replace: bool = False
    ) -> Path:
        """Write the results as versioned JSON (no pickle); returns the path.

        A file that exists is kept: ``append=True`` adds these runs to the ones it holds
        (as ``load(path) + self``), ``replace=True`` overwrites it, and with neither the
        save is refused (:class:`FileExistsError`), so that no saved run is lost unasked.
        """
        if append and replace:
            msg = "save(path, append=True) adds to a file, replace=True overwrites it: not both"
            raise ValueError(msg)
        target = Path(path)
        whole = self
        if target.exists():
            if append:
                whole = load(target) + self
            elif not replace:
                msg = (
                    f"{target} exists: save(..., append=True) adds these runs to the ones "
                    f"it holds, save(..., replace=True) overwrites it"
                )
                raise FileExistsError(msg)
        text = json.dumps(whole.to_json(), indent=1, default=_plain) + "\n"
        # Written beside it, then moved over it in one step: a run appended to a file is
        # never half-written over the runs it held.
        partial = target.with_name(f".{target.name}.partial")
        try:
            partial.write_text(text)
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)
        return target

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        target = Path(path)
        self.df.to_csv(target, index=False)
        return target

    def __str__(self) -> str:
        lines = summary_lines(self.benchmark, self.summary().to_dict("records"))
        notes = [f"note: {n}" for n in self.metadata.get("notes", [])]
        advice = [f"advice: {a}" for a in self.advice()]
        verdicts = verdict_lines(self)
        warnings = [f"warning: {w}" for w in self.warnings]
        return "\n".join(fit(notes + lines + verdicts + advice + warnings))

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("<ResultSet ...>" if cycle else str(self))


def _json_value(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def _plain(value: Any) -> Any:
    """numpy scalars as plain JSON numbers."""
    if hasattr(value, "item"):
        return value.item()
    msg = f"cannot store {type(value).__name__} in a result file"
    raise TypeError(msg)


def load(path: str | os.PathLike[str]) -> ResultSet:
    """Read a result file written by :meth:`ResultSet.save` (this version or 1)."""
    try:
        data = json.loads(Path(path).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = f"{path} is not a zmqbench result file (not JSON: {exc})"
        raise ValueError(msg) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        msg = f"{path} is not a zmqbench result file (no 'format': {FORMAT!r})"
        raise ValueError(msg)
    if data.get("version") not in (1, 2, 3, FORMAT_VERSION):
        msg = f"{path} has format version {data.get('version')!r}; this reads 1 to {FORMAT_VERSION}"
        raise ValueError(msg)
    renamed = {
        **(_RENAMED_IN_3 if data["version"] < 3 else {}),
        **(_RENAMED_IN_4 if data["version"] < 4 else {}),
    }
    # null stands for NaN (a figure not measured) in the file: JSON has no NaN.
    rows = [
        {renamed.get(k, k): math.nan if v is None else v for k, v in r.items()}
        for r in data["rows"]
    ]
    return ResultSet(
        data["benchmark"],
        tuple(rows),
        data["settings"],
        data["metadata"],
        data["warnings"],
        data.get("distributions", ()),
        data.get("runs", {}),
    )


def load_runs(paths: Iterable[str | os.PathLike[str]]) -> ResultSet:
    """The runs of result files, and of every ``*.json`` in folders, as one result (a
    history's input). A ``ValueError`` names a file that is missing, not a result, or of
    another benchmark than the first."""
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                msg = f"{path} holds no result file (*.json)"
                raise ValueError(msg)
            files += found
        elif path.is_file():
            files.append(path)
        else:
            msg = f"{path}: no such file or folder"
            raise ValueError(msg)
    joined = None
    for file in files:
        try:
            result = load(file)
        except OSError as exc:
            msg = f"{file} cannot be read: {exc}"
            raise ValueError(msg) from None
        if joined is not None and result.benchmark != joined.benchmark:
            msg = (
                f"{file} holds a {result.benchmark} run, the files before it "
                f"{joined.benchmark} runs: a history is of one benchmark"
            )
            raise ValueError(msg)
        joined = result if joined is None else joined + result
    if joined is None:
        msg = "no result file given"
        raise ValueError(msg)
    return joined

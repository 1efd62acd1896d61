"""This host's noise floor: how far whole runs of one sweep, in one environment, land
from each other when nothing changed between them.

Two separate runs share nothing, so a comparison of them cannot tell a change in what
was measured from a change in the machine (a neighbour's job, the CPU's clock, where
the scheduler put the processes). ``zmqbench noise`` (:func:`zmqbench_magic.run_noise`)
measures that: the same sweep as several independent runs, each in fresh processes.
Per point, the floor is the widest ratio between two runs' medians. It is stored in a
small JSON file (:func:`store_path`), keyed by host and environment; a comparison of
two separate runs (:func:`~zmqbench_magic.results.statistics.compare.compare`) then takes it as
its tolerance and never calls a difference smaller than it.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import pandas as pd

from ...params import TOLERANCE
from ...params.point_record import Settings
from .cache import cache_dir

if TYPE_CHECKING:
    from ..resultlike import ResultLike

FORMAT = "zmqbench-noise"
STORE_ENV = "ZMQBENCH_NOISE_FILE"
# Columns of a point that are not where it was measured but which run or arm it was.
_NOT_THE_POINT = ("python", "run")
_ENV_KEYS = ("host", "python", "pyzmq", "libzmq")


class _Figures(TypedDict):
    metric: str
    run_to_run: float
    within_run: float
    runs: int


class Floor(_Figures, total=False):
    """One point's floor: of the headline ``metric``, the widest ratio between two
    runs' medians less one and the widest stdev over mean within a run, over ``runs``
    runs; stored with its ``date``."""

    date: str


# A benchmark's floors on one host and environment, by point (``point_key``).
Floors = dict[str, Floor]


class _Store(TypedDict):
    format: str
    version: int
    # host and environment -> its names (host, versions) and, by benchmark, its floors
    floors: dict[str, dict[str, Any]]


def store_path() -> Path:
    """Where floors are kept: ``$ZMQBENCH_NOISE_FILE``, else ``noise.json`` in the
    project's cache folder."""
    return Path(os.environ.get(STORE_ENV) or cache_dir() / "noise.json")


def point_key(point: Settings) -> str:
    """A point as the store names it: its settings, sorted, as JSON."""
    where = {k: _plain(v) for k, v in point.items() if k not in _NOT_THE_POINT}
    return json.dumps(where, sort_keys=True)


def measured_in(result: ResultLike) -> dict[str, str]:
    """The host and the versions that ran ``result``'s loops (its only arm's, with
    fresh driver processes)."""
    meta = next(iter(result.runs.values()))
    arms = list((meta.get("environments") or {}).values())
    versions = arms[0] if len(arms) == 1 else meta
    return {k: str(versions.get(k) if k != "host" else meta.get("host")) for k in _ENV_KEYS}


def floor_of(results: Sequence[ResultLike]) -> Floors:
    """Per point of the runs: ``run_to_run``, the widest ratio between two runs'
    medians less one, and ``within_run``, the widest stdev over mean of one run's
    samples, both of the headline metric; with the metric and the number of runs."""
    if len(results) < 2:
        msg = f"a noise floor needs at least 2 runs, got {len(results)}"
        raise ValueError(msg)
    metric = results[0].metric_names[0]
    columns = [c for c in results[0].point_columns if c not in _NOT_THE_POINT]
    per_run = []
    for result in results:
        df = result.df
        grouped = df.groupby(columns, sort=False, dropna=False)[metric]
        per_run.append(
            pd.DataFrame(
                {"median": grouped.median(), "spread": grouped.std(ddof=0) / grouped.mean()}
            )
        )
    floors: Floors = {}
    for index in per_run[0].index:
        medians = [run.loc[index, "median"] for run in per_run if index in run.index]
        medians = [m for m in medians if m > 0]
        if len(medians) < 2:
            continue
        point = dict(zip(columns, index if isinstance(index, tuple) else (index,), strict=True))
        floors[point_key(point)] = {
            "metric": metric,
            "run_to_run": max(medians) / min(medians) - 1,
            "within_run": float(max(run.loc[index, "spread"] for run in per_run)),
            "runs": len(medians),
        }
    return floors


def save(results: Sequence[ResultLike], path: Path | None = None) -> Path:
    """Measure the floor of ``results`` (runs of one sweep) and keep it in the store,
    beside floors of other hosts, environments and points."""
    path = path or store_path()
    store = _read(path)
    where = measured_in(results[0])
    entry = store["floors"].setdefault(_env_key(where), {**where})
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    points = entry.setdefault(results[0].benchmark, {})
    for key, floor in floor_of(results).items():
        points[key] = {**floor, "date": date}
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.name}.{os.getpid()}")
    staged.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
    os.replace(staged, path)  # a reader never sees half a file
    return path


def floor_for(result: ResultLike, path: Path | None = None) -> Floors:
    """The stored floor for ``result``'s benchmark, host and environment (empty if
    none was measured)."""
    return floors_at(measured_in(result), result.benchmark, path)


def floors_at(where: Mapping[str, object], benchmark: str, path: Path | None = None) -> Floors:
    """The stored floor of ``benchmark`` for a host and environment (``where``: its
    host, python, pyzmq and libzmq)."""
    key = _env_key({k: str(where.get(k)) for k in _ENV_KEYS})
    entry = _read(path or store_path())["floors"].get(key, {})
    floors: Floors = entry.get(benchmark, {})
    return floors


def widest_at(
    floors: Floors, point: Settings, field: Literal["run_to_run", "within_run"]
) -> float | None:
    """The widest ``field`` (``run_to_run``, ``within_run``) of the stored points
    that ``point`` matches (it may name fewer settings than they do); None if none."""
    found = []
    for key, floor in floors.items():
        where = json.loads(key)
        if all(where.get(k) == _plain(v) for k, v in point.items() if k in where):
            found.append(float(floor[field]))
    return max(found) if found else None


def tolerance_at(floors: Floors, point: Settings) -> float:
    """A comparison's tolerance at ``point``: the floor of the stored points it
    matches (the widest of all where it matches none), never under the default."""
    if not floors:
        return float(TOLERANCE.default)
    widest = widest_at(floors, point, "run_to_run")
    if widest is None:
        widest = max(float(f["run_to_run"]) for f in floors.values())
    return max(TOLERANCE.default, widest)


def describe(floors: Floors) -> str:
    """``this host's noise floor (5 runs, 2026-11-24): 1.2% to 4.0% by point``, or
    that none was measured."""
    if not floors:
        return (
            "no noise floor measured for this host and environment: "
            f"{TOLERANCE.label(TOLERANCE.default)} at every point; zmqbench noise measures it"
        )
    spreads = [f["run_to_run"] for f in floors.values()]
    runs = min(f["runs"] for f in floors.values())
    dates = sorted({f["date"][:10] for f in floors.values()})
    return (
        f"this host's noise floor ({runs} runs or more, {', '.join(dates)}): "
        f"{min(spreads):.1%} to {max(spreads):.1%} by point"
    )


def _read(path: Path) -> _Store:
    if not path.exists():
        return {"format": FORMAT, "version": 1, "floors": {}}
    data = json.loads(path.read_text())
    if data.get("format") != FORMAT:
        msg = f"{path} is not a noise floor file (no 'format': {FORMAT!r})"
        raise ValueError(msg)
    store: _Store = data
    return store


def _env_key(where: Mapping[str, str]) -> str:
    return " | ".join(f"{k} {where[k]}" for k in _ENV_KEYS)


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


__all__ = [
    "STORE_ENV",
    "describe",
    "floor_for",
    "floor_of",
    "floors_at",
    "measured_in",
    "point_key",
    "save",
    "store_path",
    "tolerance_at",
    "widest_at",
]

"""Measuring this host's noise floor (:mod:`...results.storage.noise_floor`): one sweep as several
independent runs, each with fresh driver processes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ...method.control import Progress, StopFlag
from ...params import LatencyParams, ThroughputParams, ZmqParams
from ...results import ResultSet
from ...results.storage import noise_floor as floor
from .measure import run_latency, run_throughput

RUNS = 5


def run_noise(
    params: ZmqParams,
    runs: int = RUNS,
    *,
    store: Path | None = None,
    progress: Progress | None = None,
    stop: StopFlag | None = None,
) -> tuple[list[ResultSet], Path]:
    """Run the sweep of ``params`` ``runs`` times, each an independent run whose
    rounds are measured by fresh processes (``driver process``), and keep the floor
    they give (per point, the widest ratio between two runs' medians) in the store.

    Returns the runs and the store's path. ``progress`` is called with (runs done,
    runs). ``--python`` is refused: the floor belongs to one environment.

    Example
    -------
    >>> runs, path = run_noise(ThroughputParams(size=[100, "64k"]))  # doctest: +SKIP
    >>> runs[0].compare(runs[1])                                     # doctest: +SKIP
    """
    if not 2 <= runs <= 100:
        msg = f"runs must be from 2 to 100, got {runs}"
        raise ValueError(msg)
    if len(params.python) > 1:
        msg = "a noise floor is of one environment: give at most one --python"
        raise ValueError(msg)
    params = dataclasses.replace(params, driver="process")
    results: list[ResultSet] = []
    for done in range(runs):
        if isinstance(params, ThroughputParams):
            results.append(run_throughput(params, stop=stop))
        else:
            assert isinstance(params, LatencyParams)
            results.append(run_latency(params, stop=stop))
        if progress is not None:
            progress(done + 1, runs)
        if stop is not None and stop.is_set():
            break
    return results, floor.save(results, store)


__all__ = ["RUNS", "run_noise"]

"""Where each task's time goes, from ipyparallel's own timestamps and the client's clock.

For each message of a sample (a task, or a chunk of a ``map``):

- **submit**: the client's call (``apply_async``/``map_async``) to ipyparallel
  stamping the message (``submitted``): serialising it and building the message.
- **queue**: ``submitted`` to the engine starting it (``started``): the client's IO
  thread sending it, the scheduler, the network, the engine's own queue.
- **run**: ``started`` to ``completed``, on the engine.
- **return**: ``completed`` to the client's IO thread receiving the reply
  (``received``).

The four add up to the message's whole time, call to reply. The client and engine
stamps come from two clocks. On one host they are the same clock. For engines on
other hosts each engine's offset is estimated as NTP does, from its fastest message
each way (assuming the two fastest transits are equal), and taken off its stamps; the
result's notes say so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ..params.taskflood import STAGE_COLUMNS, STAGE_P90_COLUMNS

_STAMPS = ("submitted", "started", "completed", "received")  # ipyparallel's metadata
OTHER_HOSTS_NOTE = (
    "stages: the engines run on other hosts, so their clocks are not the client's; each "
    "engine's offset was estimated from its fastest message each way (as NTP does, "
    "assuming equal transit) and taken off its stamps"
)


def stamps(called: Sequence[float], results: Sequence[Any]) -> np.ndarray:
    """One row per message: ``called, submitted, started, completed, received`` in
    seconds since the epoch, and the engine id. ``called[i]`` is when the client was
    asked for ``results[i]`` (one of them can carry several messages: a map's chunks)."""
    rows = []
    for at, result in zip(called, results, strict=True):
        # One message's metadata, or a list of them (a map's chunks).
        metadata = result.metadata if isinstance(result.metadata, list) else [result.metadata]
        for md in metadata:
            moments = [_seconds(md[key]) for key in _STAMPS]
            rows.append((at, *moments, _engine(md.get("engine_id"))))
    return np.array(rows, dtype=float).reshape(-1, 6)


def stage_times(times: np.ndarray, other_hosts: bool = False) -> dict[str, float]:
    """The median and p90 of each stage over the messages of one sample (seconds)."""
    if other_hosts:
        times = _without_engine_offsets(times)
    spans = np.diff(times[:, :5], axis=1)  # submit, queue, run, return
    row: dict[str, float] = {}
    for index, (median, p90) in enumerate(zip(STAGE_COLUMNS, STAGE_P90_COLUMNS, strict=True)):
        row[median] = float(np.median(spans[:, index]))
        row[p90] = float(np.percentile(spans[:, index], 90))
    return row


def reply_overlap(times: np.ndarray, sent_at: float) -> float:
    """The share of replies the client received before its last submit returned: the
    client's IO thread handling them competes with submission for the GIL
    (ipyparallel #534, #756), which is what makes *sent* vary from run to run."""
    return float(np.mean(times[:, 4] < sent_at)) if len(times) else float("nan")


def engine_offsets(times: np.ndarray) -> dict[int, float]:
    """Each engine's clock minus the client's, from its fastest message each way."""
    by_engine: dict[int, list[int]] = defaultdict(list)
    for index, engine in enumerate(times[:, 5]):
        by_engine[int(engine)].append(index)
    offsets = {}
    for engine, rows in by_engine.items():
        there = np.min(times[rows, 2] - times[rows, 1])  # transit + offset
        back = np.min(times[rows, 4] - times[rows, 3])  # transit - offset
        offsets[engine] = float((there - back) / 2)
    return offsets


def _without_engine_offsets(times: np.ndarray) -> np.ndarray:
    corrected = times.copy()
    for engine, offset in engine_offsets(times).items():
        on_engine = corrected[:, 5] == engine
        corrected[on_engine, 2:4] -= offset
    return corrected


def _seconds(stamp: datetime | str | None) -> float:
    if stamp is None:
        return float("nan")
    if isinstance(stamp, str):  # the client leaves some dates unparsed
        stamp = datetime.fromisoformat(stamp)
    return stamp.timestamp()


def _engine(engine_id: Any) -> float:
    """A coalescing broadcast's reply names every engine it reached: the first stands."""
    if isinstance(engine_id, list):
        engine_id = engine_id[0] if engine_id else None
    return float("nan") if engine_id is None else float(engine_id)


def nan_stages() -> Mapping[str, float]:
    """The stage columns of a backend without ipyparallel's timestamps."""
    return dict.fromkeys((*STAGE_COLUMNS, *STAGE_P90_COLUMNS, "reply_overlap"), float("nan"))


def run_stage(runs: Sequence[float]) -> dict[str, float]:
    """The stage columns of a backend that times only each task's run on its worker
    (Dask, Ray): the run stage's median and 90th percentile, the others NaN."""
    stages = dict(nan_stages())
    if runs:
        run = STAGE_COLUMNS.index("run_s")
        stages[STAGE_COLUMNS[run]] = float(np.median(runs))
        stages[STAGE_P90_COLUMNS[run]] = float(np.percentile(runs, 90))
    return stages


__all__ = [
    "OTHER_HOSTS_NOTE",
    "engine_offsets",
    "nan_stages",
    "reply_overlap",
    "run_stage",
    "stage_times",
    "stamps",
]

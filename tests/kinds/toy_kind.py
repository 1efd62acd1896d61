"""A fourth benchmark kind, whole in one module: its declaration (settings, a metric of
its own) and what each layer does for it. ``register(toy_kind)`` is the one line that
makes it a command, a magic, a panel and a result every layer reads.

Its figures are known: a point of ``b`` beats runs at ``100 * b * pace + bonus +
sample`` beats per second (the sample's index keeps the samples apart, as a real
sample's noise does), so a test can plant a slower run with ``--pace``.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import altair as alt

from zmqbench_magic.panels.panel import BenchmarkPanel
from zmqbench_magic.params.common import REPEAT
from zmqbench_magic.params.declare import BenchParams, Metric, Param, param_field
from zmqbench_magic.params.kinds import Kind
from zmqbench_magic.results import ResultSet, run_identity

BEATS = Param("beats", 10, "beats per sample", "beats", "int", low=1, high=1000, sweep=True)
PACE = Param("pace", 1.0, "how fast each beat goes", "pace", "float", low=0.01, high=100.0)
BEATS_PER_S = Metric("beats_per_s", "beat rate", "beats per second", "higher", unit="beats/s")


@dataclass(frozen=True)
class ToyParams(BenchParams):
    beats: tuple[int, ...] = param_field(BEATS)
    pace: float = param_field(PACE)
    repeat: int = param_field(REPEAT)

    benchmark = "toy"
    metrics = (BEATS_PER_S,)


KIND = Kind(
    name="toy",
    title="a toy benchmark",
    params=ToyParams,
    counted="beats",
    counts_at=(0,),
    magic="toy",
    magic_help="Count beats: a toy benchmark.",
)


def run(settings: ToyParams, progress: Any = None, bonus: float = 0.0, **_: Any) -> ResultSet:
    # Named and dated as a real run is, so saved runs make a history in time order.
    identity = run_identity("toy")
    date = datetime.datetime.now(datetime.timezone.utc).isoformat()
    rows = [
        {
            "benchmark": "toy",
            "run": identity["run"],
            "sample": sample,
            "beats": b,
            "beats_per_s": 100.0 * b * settings.pace + bonus + sample,
        }
        for sample in range(settings.repeat)
        for b in settings.beats
    ]
    return ResultSet("toy", rows, settings.settings(), {**identity, "date": date})


def where(point: Mapping[str, Any]) -> list[str]:
    return [f"{point['beats']} beats"]


def figures(point: Mapping[str, Any]) -> str:
    return f"{point['beats_per_s']:,.0f} beats/s (n={point['n']})"


def chart(df: Any, distributions: Any = ()) -> alt.Chart:
    return alt.Chart(df).mark_point().encode(x="beats:Q", y="beats_per_s:Q")


def cell(shell: Any, source: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The cell's value is a bonus on every figure."""
    return {"bonus": eval(source, shell.user_ns)}


class ToyPanel(BenchmarkPanel):
    params_class = ToyParams
    title = "Toy beats"


def panel() -> type:
    return ToyPanel


advice = stop = None

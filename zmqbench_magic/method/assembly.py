"""How any run becomes a result, whatever it measures: its identity and visiting
order, its rounds (:mod:`.schedule`, with ``--precision``), and at the end its rows,
the checks every run gets (cautions, spread, a busy machine), its metadata and notes,
in one :class:`~zmqbench_magic.results.ResultSet`. The ZeroMQ and the ipyparallel
cores differ in what a sample is, not in this."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..params import RunParams
from ..params.columns import Distribution, Metadata, Row
from ..params.common import MAX_TIME, MIN_TIME
from ..results import ResultSet, run_identity, spread_warnings
from ..results.host.environment import environment
from ..results.host.system import SystemFacts, system_facts
from ..results.statistics.compare import undecided_points
from ..results.statistics.stats import precision_rule
from .load import busy_warnings
from .schedule import P, Schedule, order_seed


@dataclass
class RunAssembly:
    """A run's frame: what it keeps from start to result."""

    params: RunParams
    notes: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    identity: dict[str, str] = field(init=False)
    seed: int = field(init=False)  # of the visiting order within each round
    # The host's conditions as the run starts (its load then, not its own).
    system: SystemFacts = field(init=False)

    def __post_init__(self) -> None:
        self.identity = run_identity(self.params.benchmark, self.params.label)
        self.seed = order_seed(self.params.seed)
        self.system = system_facts()

    def schedule(
        self, points: Sequence[P], group_of: Callable[[P], Any], arm: str | None = None
    ) -> Schedule[P]:
        """Interleaved rounds of ``points``, one far end (or cluster) per group; the
        values of ``arm`` side by side, in alternating order (:class:`Schedule`)."""
        return Schedule(
            list(points),
            group_of=group_of,
            arm=arm,
            repeat=self.params.repeat,
            precise_enough=precision_rule(self.params.precision, self.params.metrics[0].name),
            undecided=self._undecided_rule(),
            # 0: no cap on the run, and --precision's own default bound on its rounds.
            max_time=self.params.max_time or MAX_TIME.default,
            start=self.started,
            seed=self.seed,
        )

    def _undecided_rule(self) -> Callable[[list[Row], list[P]], list[P]] | None:
        """--until decided: which points the rows so far leave undecided, judged over
        every point of the run's comparison (a flood's blocks each take their rounds,
        and its family of points is the whole run's)."""
        arms = self.params.compared_arms()
        if self.params.until != "decided" or arms is None:
            return None
        metric, tolerance = self.params.metrics[0].name, self.params.tolerance
        family = len(list(self.params.points())) // 2

        def rule(rows: list[Row], points: list[P]) -> list[P]:
            return undecided_points(rows, points, arms, metric, tolerance, family)

        return rule

    def result(
        self,
        rows: Iterable[Row],
        points: Sequence[P],
        describe: Callable[[P], str],
        gc: str,
        point_warnings: Callable[[list[Row], P], list[str]] | None = None,
        metadata: Metadata | None = None,
        distributions: Sequence[Distribution] = (),
        advice: str | None = None,
        usual_spread: Callable[[P], float | None] | None = None,
    ) -> ResultSet:
        """The kept ``rows`` as a result: a warning for each thing to read with care
        (``point_warnings`` adds a core's own per point; ``usual_spread``, the spread
        this host's noise floor saw at a point), and the run's metadata."""
        rows = [{**row, "run": self.identity["run"]} for row in rows]
        by_point = [
            (point, [r for r in rows if all(r.get(k) == v for k, v in point.items())])
            for point in points
        ]
        spread = ((describe(point), point_rows) for point, point_rows in by_point)
        metric = self.params.metrics[0].name
        usual = [usual_spread(point) for point, _ in by_point] if usual_spread else []
        if self.params.until == "decided":  # its rounds are not --repeat's to set
            advice = (
                f"a longer {MIN_TIME.option} narrows them, or a longer {MAX_TIME.option} "
                "decides more"
            )
        warnings = [*self.params.cautions(), *spread_warnings(spread, metric, advice, usual)]
        for point, point_rows in by_point:
            if point_warnings is not None:
                warnings += point_warnings(point_rows, point)
        warnings += busy_warnings((describe(point), point_rows) for point, point_rows in by_point)
        everything = {
            **environment(),
            **self.identity,
            "gc": gc,
            "order_seed": self.seed,
            "system": self.system,
            "notes": self.notes,
            **self._comparison(),
            **(metadata or {}),
        }
        return ResultSet(
            self.params.benchmark,
            tuple(rows),
            self.params.settings(),
            everything,
            tuple(warnings),
            tuple(distributions),
        )

    def _comparison(self) -> dict[str, list[str]]:
        """The arms a run decided round by round, for the words that state it."""
        arms = self.params.compared_arms() if self.params.until == "decided" else None
        return {"decided": list(arms)} if arms else {}


__all__ = ["RunAssembly"]

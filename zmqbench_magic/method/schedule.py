"""The order samples are taken in: interleaved rounds, each on fresh far ends.

A sweep's points are not measured one after the other (all samples of one point,
then all of the next): drift in the machine's load would then land on some points
and not others, and look like a difference between them. Instead each *round* takes
one sample of every point, and the rounds repeat ``repeat`` times. Within a round the
points are visited in a random order, drawn afresh each round from a recorded seed
(each row's ``order`` is its place in its round): no arm of a comparison is always
measured first, right after a far end starts, or right before the next one. Points
that share a resource (a far end of one transport and size, a cluster of one size) are a *group*;
each round opens each group afresh (its :class:`Turn`), so a point's samples come
from several independent far ends and their spread includes the between-process
variance that one far end would hide (as pyperf spreads values over worker processes).

With an ``arm`` (the column of environments compared, ``python``), the groups that
differ only in their arm form a block: the blocks are visited in a random order, and
within each block its arms one right after the other, in an order that alternates
from block to block and round to round (ABBA), so each arm is first as often as the
other and a pair of samples is never more than a group apart in time.

With ``precision``, whole rounds of every point go on past ``repeat`` until each
point's median is known that well (``precise_enough``, see
:func:`zmqbench_magic.results.statistics.stats.precision_rule`), or until ``max_time``. A stop
request or a kernel interrupt ends the run between two samples; only whole rounds
are kept, so every point keeps the same number of samples and the drift argument
still holds.

With ``undecided`` (``--until decided``), ``repeat`` is not used: after every round
the comparison is tested (:func:`zmqbench_magic.results.statistics.compare.undecided_points`)
and the next round takes only the points it has not decided, both arms of each, in
the same interleaved order, until none is left or ``max_time`` is spent. A decided
point's samples end at the round that decided it.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import secrets
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..params.columns import Row
from ..params.point_record import Settings
from .control import Progress, StopFlag, Stopped, check_stop

# A kind's own point record (a mapping of the settings it names, as rows carry them).
P = TypeVar("P", bound=Settings)


def order_seed(seed: int = 0) -> int:
    """The seed of a run's visiting order: ``seed`` itself, or a fresh one for 0."""
    return seed or secrets.randbelow(2**32 - 1) + 1


class Interrupted(KeyboardInterrupt):
    """A kernel interrupt (Ctrl-C) during a run, raised once everything is closed.

    ``result`` holds what was measured in whole rounds before it, as a stop does."""

    def __init__(self, result: Any = None) -> None:
        super().__init__("interrupted")
        self.result = result


@dataclass
class Schedule(Generic[P]):
    """What to measure and how often: :meth:`turns` gives the samples to take, in
    their order, and keeps their rows.

    A core's loop, which opens each group's resource itself::

        with schedule.whole_rounds(stop):
            for turn in schedule.turns(stop, progress):
                with open_far_end(turn.points) as far_end:
                    for point in turn:
                        turn.keep(point, far_end.sample(point))
    """

    points: list[P]
    group_of: Callable[[P], Hashable]
    repeat: int
    precise_enough: Callable[[Sequence[Row]], bool] | None = None  # None: no --precision
    # --until decided: the points the rows so far leave undecided (None: --repeat rounds).
    undecided: Callable[[list[Row], list[P]], list[P]] | None = None
    max_time: float = float("inf")
    clock: Callable[[], float] = time.perf_counter
    start: float | None = None  # what t_start_s counts from; default: when turns() starts
    seed: int = 0  # of the visiting order within each round (0: a fresh one)
    arm: str | None = None  # the column whose values are measured side by side (ABBA)
    notes: list[str] = field(default_factory=list)
    kept: list[Row] = field(default_factory=list)  # the whole rounds taken so far
    rounds_done: int = 0  # how many of them

    def __post_init__(self) -> None:
        self.seed = order_seed(self.seed)
        self._shuffle = random.Random(self.seed)
        # ABBA: per block, how many times it was visited (its start parity included).
        self._visits: dict[tuple[Any, ...], int] = {}

    def groups(self, points: Iterable[P]) -> Iterator[list[P]]:
        """Points grouped by what they share, in the order given."""
        for _, group in itertools.groupby(points, key=self.group_of):
            yield list(group)

    def round_order(self, points: list[P]) -> list[list[P]]:
        """One round's groups and the points within each, both in a random order."""
        groups = [list(g) for g in self.groups(points)]
        if self.arm is not None:
            return self._abba_order(groups)
        self._shuffle.shuffle(groups)
        for group in groups:
            self._shuffle.shuffle(group)
        return groups

    def _abba_order(self, groups: list[list[P]]) -> list[list[P]]:
        """Blocks in a random order; in each, its arms in turn: forwards in one round
        and backwards in the next (each point's pairs go AB, BA, AB, ...), and
        neighbouring blocks of the sweep starting the other way round."""
        arm = self.arm
        blocks: dict[tuple[Any, ...], list[list[P]]] = {}
        for group in groups:
            rest = tuple(sorted(_key({k: v for k, v in p.items() if k != arm}) for p in group))
            blocks.setdefault(rest, []).append(group)
        keys = list(blocks)
        for place, key in enumerate(keys):
            self._visits.setdefault(key, place % 2)
        self._shuffle.shuffle(keys)
        ordered = []
        for key in keys:
            block = blocks[key]
            # The same point order in every arm of a block: a pair's two samples are
            # each the same number of samples into their far end's life.
            within = list(range(len(block[0])))
            self._shuffle.shuffle(within)
            arms = block if self._visits[key] % 2 == 0 else block[::-1]
            self._visits[key] += 1
            ordered += [
                [group[i] for i in within] if len(group) == len(within) else group for group in arms
            ]
        return ordered

    def turns(
        self, stop: StopFlag | None = None, progress: Progress | None = None
    ) -> Iterator[Turn[P]]:
        """Each group's turn in each round, in the visiting order, until the rounds are
        done: the caller opens the group's resource (a fresh far end, say), samples each
        point the turn gives and hands its measurements to :meth:`Turn.keep`.

        A round's rows join :attr:`kept` (in the sweep's order, each with its
        ``sample``, ``order`` and ``t_start_s``) once its last turn is over, so a stop
        between two samples keeps whole rounds only; wrap the loop in
        :meth:`whole_rounds` for the stop's note and an interrupt's."""
        start = self.clock() if self.start is None else self.start
        pending = list(self.points)
        # Until decided, no one knows the rounds ahead: the total is each round's end.
        planned = 0 if self.undecided is not None else self.repeat * len(self.points)
        while pending:
            total = max(planned, len(self.kept) + len(pending))
            taking = _Round(self, start, stop, progress, len(self.kept), total)
            for group in self.round_order(pending):
                check_stop(stop)  # between samples: the far ends are idle
                yield Turn(group, taking)
            self.kept += taking.in_sweep_order()
            self.rounds_done += 1
            pending = self._still_pending(self.kept, self.rounds_done, start)

    @contextlib.contextmanager
    def whole_rounds(self, stop: StopFlag | None = None) -> Iterator[None]:
        """Around the loop over :meth:`turns`: a stop request or a kernel interrupt
        ends it between two samples, the round in progress dropped and a note saying
        so; the interrupt is raised again as :class:`Interrupted` (carrying nothing:
        the caller attaches its result; :attr:`kept` holds the whole rounds)."""
        try:
            yield
        except Stopped:
            self.notes.append(self._ended(getattr(stop, "reason", "stopped on request")))
        except KeyboardInterrupt:
            self.notes.append(self._ended("interrupted"))
            raise Interrupted from None

    def _ended(self, how: str) -> str:
        return (
            f"{how} after {self.rounds_done} whole round(s) of {self.repeat}: "
            f"{len(self.kept)} samples kept, the round in progress was dropped"
        )

    def _still_pending(self, kept: list[Row], rounds: int, start: float) -> list[P]:
        if self.undecided is not None:
            return self._still_undecided(self.undecided, kept, rounds, start)
        if rounds < self.repeat:
            return list(self.points)
        if self.precise_enough is None:
            return []
        loose = [p for p in self.points if not self.precise_enough(_rows_of(kept, p))]
        if loose and self.clock() - start >= self.max_time:
            names = "; ".join(_spell(p) for p in loose)
            self.notes.append(
                f"precision not reached within max-time ({self.max_time:g} s) at "
                f"{len(loose)} point(s): {names}"
            )
            return []
        # Every point takes the extra rounds, not only the loose ones: equal sample
        # counts keep the rounds whole, so arms stay paired and drift lands on all.
        return list(self.points) if loose else []

    def _still_undecided(
        self,
        undecided: Callable[[list[Row], list[P]], list[P]],
        kept: list[Row],
        rounds: int,
        start: float,
    ) -> list[P]:
        spent = self.clock() - start
        pending = undecided(kept, self.points)
        if not pending:
            self.notes.append(f"every point decided after {rounds} round(s), in {spent:.0f} s")
        elif spent >= self.max_time:
            self.notes.append(
                f"max-time ({self.max_time:g} s) spent after {rounds} round(s) (about "
                f"{spent / rounds:.1f} s a round) with {len(pending) // 2 or 1} point(s) of "
                "the comparison undecided: each one's reason says about how many more "
                "rounds it needs"
            )
            return []
        return pending


@dataclass
class _Round(Generic[P]):
    """One round as it is taken: its rows, in the order measured."""

    schedule: Schedule[P]
    start: float
    stop: StopFlag | None
    progress: Progress | None
    done_before: int
    total: int
    rows: list[Row] = field(default_factory=list)
    measured: list[P] = field(default_factory=list)
    began: float = 0.0

    def keep(self, point: P, measured: Row) -> None:
        number, order = self.schedule.rounds_done, len(self.rows)
        self.rows.append(
            {**point, "sample": number, "order": order, "t_start_s": self.began, **measured}
        )
        self.measured.append(point)
        if self.progress is not None:
            self.progress(self.done_before + len(self.rows), self.total)

    def in_sweep_order(self) -> list[Row]:
        """Rows in the sweep's order within each round (``order`` keeps the measuring
        order). By the point measured: a row may say more of it (someone else's
        cluster's scheme)."""
        place = {_key(p): i for i, p in enumerate(self.schedule.points)}
        in_order = sorted(
            zip(self.measured, self.rows, strict=True), key=lambda m: place[_key(m[0])]
        )
        return [row for _, row in in_order]


@dataclass
class Turn(Generic[P]):
    """One group's turn in one round: its points, given one by one as each is to be
    sampled (a stop is checked before each), and :meth:`keep` for each sample's
    measurements."""

    points: list[P]
    taking: _Round[P]

    def __iter__(self) -> Iterator[P]:
        taking = self.taking
        for point in self.points:
            check_stop(taking.stop)
            taking.began = taking.schedule.clock() - taking.start
            yield point

    def keep(self, point: P, measured: Row) -> None:
        """The sample of ``point`` just taken."""
        self.taking.keep(point, measured)


def _key(point: Settings) -> tuple[Any, ...]:
    return tuple(sorted(point.items()))


def _rows_of(rows: list[Row], point: Settings) -> list[Row]:
    return [r for r in rows if all(r.get(k) == v for k, v in point.items())]


def _spell(point: Settings) -> str:
    return " ".join(f"{k}={v}" for k, v in point.items())


__all__ = ["Interrupted", "Schedule", "Turn"]

"""The sampling method on fake far ends and a fake clock: interleaved rounds, whole
rounds kept on a stop or an interrupt, ``--precision`` and ``--max-time``."""

from __future__ import annotations

import contextlib
import itertools

import pytest

from zmqbench_magic.method.schedule import Interrupted, Schedule

POINTS = [{"size": s, "copy": c} for s in (100, 1000) for c in (True, False)]


class FakeClock:
    def __init__(self, step: float = 1.0) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class FakeFarEnds:
    """Opens a numbered far end per group and round; each sample says who took it.

    ``values`` gives each point's successive headline values (by size)."""

    def __init__(self, values=None, fail_at=None, error=None):
        self.opened = []
        self.taken = []
        self.values = values or {}
        self.fail_at, self.error = fail_at, error
        self._serial = itertools.count()

    @contextlib.contextmanager
    def __call__(self, group):
        far_end = next(self._serial)
        self.opened.append([dict(p) for p in group])
        yield _Session(self, far_end)


class _Session:
    def __init__(self, fake, far_end):
        self.fake, self.far_end = fake, far_end

    def sample(self, point):
        fake = self.fake
        if fake.fail_at is not None and len(fake.taken) == fake.fail_at:
            raise fake.error
        fake.taken.append(dict(point))
        series = fake.values.get(point["size"])
        value = next(series) if series is not None else 1.0
        return {"far_end": self.far_end, "m": value}


def take(plan, open_far_end, stop=None, progress=None):
    """A core's loop over the schedule's turns: every kept row."""
    with plan.whole_rounds(stop):
        for turn in plan.turns(stop, progress):
            with open_far_end(turn.points) as far_end:
                for point in turn:
                    turn.keep(point, far_end.sample(point))
    return plan.kept


def schedule(**kwargs):
    defaults = {"group_of": lambda p: p["size"], "repeat": 3, "clock": FakeClock()}
    return Schedule(list(POINTS), **{**defaults, **kwargs})


def test_rounds_interleave_every_point_and_open_fresh_far_ends():
    fake = FakeFarEnds()
    plan = schedule(repeat=12, seed=7)
    rows = take(plan, fake)
    # Round by round: each round takes every point once, in an order of its own; the
    # rows come in the sweep's order, ``order`` says in which they were measured.
    assert [(r["size"], r["copy"]) for r in rows] == [(p["size"], p["copy"]) for p in POINTS] * 12
    assert [r["sample"] for r in rows] == [n for n in range(12) for _ in range(4)]
    rounds = [sorted(rows[i : i + 4], key=lambda r: r["order"]) for i in range(0, 48, 4)]
    assert all([r["order"] for r in one] == [0, 1, 2, 3] for one in rounds)
    assert all(one[0]["t_start_s"] < one[3]["t_start_s"] for one in rounds)
    # No arm is always first: both copy modes and both groups lead some rounds, and a
    # group's points stay together; the order is drawn from the recorded seed.
    assert all(one[0]["size"] == one[1]["size"] for one in rounds)
    assert {one[0]["copy"] for one in rounds} == {True, False}
    assert {one[0]["size"] for one in rounds} == {p["size"] for p in POINTS}
    assert plan.seed == 7
    again = take(schedule(repeat=12, seed=7), FakeFarEnds())
    assert [(r["size"], r["copy"]) for r in again] == [(r["size"], r["copy"]) for r in rows]
    assert schedule().seed != schedule().seed  # 0: a fresh seed each run
    fake = FakeFarEnds()
    rows = take(schedule(), fake)
    # A fresh far end per group and round: 2 groups (sizes) x 3 rounds.
    assert len(fake.opened) == 6
    for point in POINTS:
        ends = {
            r["far_end"] for r in rows if r["size"] == point["size"] and r["copy"] == point["copy"]
        }
        assert len(ends) == 3
    # The clock ticks once per sample: rows carry their start, in measuring order.
    starts = [r["t_start_s"] for r in sorted(rows, key=lambda r: (r["sample"], r["order"]))]
    assert starts == sorted(starts) and starts[0] == 1.0


def test_a_stop_keeps_only_whole_rounds():
    class StopAfter:
        def __init__(self, samples):
            self.samples, self.seen = samples, 0

        def is_set(self):
            return self.seen >= self.samples

    stop = StopAfter(6)
    plan = schedule()
    rows = take(
        plan, FakeFarEnds(), stop=stop, progress=lambda done, _t: setattr(stop, "seen", done)
    )
    assert len(rows) == 4 and {r["sample"] for r in rows} == {0}
    assert plan.notes == [
        "stopped on request after 1 whole round(s) of 3: 4 samples kept, "
        "the round in progress was dropped"
    ]


def test_an_interrupt_keeps_whole_rounds_and_says_so():
    plan = schedule()
    with pytest.raises(Interrupted) as caught:
        take(plan, FakeFarEnds(fail_at=9, error=KeyboardInterrupt()))
    assert isinstance(caught.value, KeyboardInterrupt)  # still an interrupt to callers
    assert len(plan.kept) == 8 and {r["sample"] for r in plan.kept} == {0, 1}
    assert plan.notes[0].startswith("interrupted after 2 whole round(s) of 3: 8 samples kept")


def test_an_error_in_a_sample_propagates():
    with pytest.raises(RuntimeError, match="peer died"):
        take(schedule(), FakeFarEnds(fail_at=2, error=RuntimeError("peer died")))


def test_a_stop_before_the_first_sample_keeps_nothing_and_says_so():
    class Always:
        def is_set(self):
            return True

    plan = schedule()
    assert take(plan, FakeFarEnds(), stop=Always()) == []
    assert plan.notes[0].startswith("stopped on request after 0 whole round(s) of 3")


def test_precision_adds_whole_rounds_until_every_point_is_tight():
    # size 100 settles at once; size 1000 is noisy for 6 samples, then steady.
    noisy = itertools.chain([1.0, 3.0, 0.5, 2.5, 0.7, 2.0], itertools.repeat(1.5))
    fake = FakeFarEnds(values={100: itertools.repeat(1.0), 1000: noisy})

    def tight(rows):
        from zmqbench_magic.results.statistics.stats import relative_halfwidth

        return relative_halfwidth([r["m"] for r in rows]) <= 0.05

    plan = schedule(precise_enough=tight)
    rows = take(plan, fake)
    per_point = {(p["size"], p["copy"]): 0 for p in POINTS}
    for r in rows:
        per_point[(r["size"], r["copy"])] += 1
    # Every point takes the extra rounds: equal counts keep the rounds whole (paired).
    assert len(set(per_point.values())) == 1 and per_point[(1000, True)] > 3
    assert plan.notes == []
    assert tight([r for r in rows if r["size"] == 1000 and r["copy"]])


def test_max_time_ends_the_search_for_precision_and_names_the_points():
    # Each size-100 point (copy, then zero-copy) alternates 1, 3, 1, 3...: never tight.
    fake = FakeFarEnds(
        values={100: itertools.cycle([1.0, 1.0, 3.0, 3.0]), 1000: itertools.repeat(1.0)}
    )
    plan = schedule(precise_enough=lambda rows: len({r["m"] for r in rows}) == 1, max_time=30)
    rows = take(plan, fake)
    assert plan.notes and plan.notes[0].startswith(
        "precision not reached within max-time (30 s) at 2 point(s): size=100 copy=True"
    )
    assert max(r["t_start_s"] for r in rows) <= 30 + 4  # the round under way finishes


def test_until_decided_leaves_a_decided_point_out_and_stops_at_max_time():
    """Size 1000's zero-copy arm is twice as fast: decided within a few rounds, and its
    rounds end there; size 100's arms are twins within 10% of noise, not decided
    within ±1% before max-time, so its rounds go on alone until then."""
    import numpy as np

    from zmqbench_magic.results.statistics.compare import undecided_points

    rng = np.random.default_rng(3)

    class Arms(FakeFarEnds):
        def __call__(self, group):
            return contextlib.nullcontext(self)

        def sample(self, point):
            self.taken.append(dict(point))
            factor = 2.0 if point["size"] == 1000 and not point["copy"] else 1.0
            return {"m": factor * rng.lognormal(0, 0.1)}

    def rule(rows, points):
        return undecided_points(rows, points, ("copy", True, False), "m", 0.01, 2)

    fake = Arms()
    plan = schedule(undecided=rule, max_time=120, repeat=1000)
    rows = take(plan, fake)
    counts = {
        (size, copy): sum(r["size"] == size and r["copy"] == copy for r in rows)
        for size in (100, 1000)
        for copy in (True, False)
    }
    assert counts[1000, True] == counts[1000, False] < 10  # --repeat is not what ends it
    assert counts[100, True] == counts[100, False] > counts[1000, True]
    assert plan.notes[-1].startswith("max-time (120 s) spent after")
    # Whole rounds: every round that measured a point measured both its arms.
    for size in (100, 1000):
        rounds = [r["sample"] for r in rows if r["size"] == size]
        assert sorted(rounds) == sorted(list(range(counts[size, True])) * 2)

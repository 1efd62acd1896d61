"""The flood's tests (``%taskflood --test``), one :class:`FloodTest` record each:
what its tasks carry, what its rows fill, where it runs, and its words."""

from __future__ import annotations

from dataclasses import dataclass

from .units import format_size

# ipyparallel's views, each test's and --view's.
VIEWS = ("lb", "direct", "broadcast", "coalescing")


@dataclass(frozen=True)
class FloodTest:
    """One of a flood's tests, registered once in :data:`FLOOD_TESTS`: what its tasks
    carry, what its rows fill, where it runs, and its words. Every layer reads what
    differs between tests from here, so no code names a test to branch on it.

    >>> FLOOD_TESTS["echo"].settings, FLOOD_TESTS["echo"].metrics
    (('size',), ('mbit_per_s',))
    """

    name: str  # what --test takes, and a result's ``test`` column: "echo"
    help: str  # what it does, after its name in --test's help
    # The swept settings only it reads (greyed in the panel, no column of another test).
    settings: tuple[str, ...] = ()
    # The metrics only it fills, beside the times, stages and memory every test has.
    metrics: tuple[str, ...] = ()
    # How often each task's --size array crosses the network (0: no array), and whether
    # each task goes to every engine: its bandwidth counts every crossing and engine.
    array_trips: int = 0
    to_every_engine: bool = False
    # The ipyparallel views it runs on, and why another cannot, after its name.
    views: tuple[str, ...] = VIEWS
    off_view: str = ""
    # Whether the futures backends (the process pool, Dask, Ray) have a counterpart.
    futures: bool = True
    # Whether --test offers it (the cell form's test is the cell's, never chosen).
    offered: bool = True
    # The metric its own chart draws by its own setting ("": sent and round trip by tasks).
    chart_metric: str = ""
    # The advice: the metric each task's overhead is read from ("": none), and its tasks
    # in words where its largest flood's memory per task is advised on ("": not advised),
    # "{size}" standing for its array's size.
    overhead_from: str = ""
    memory_words: str = ""

    @property
    def sends_arrays(self) -> bool:
        """Whether each task carries an array of --size bytes."""
        return self.array_trips > 0

    def mbit_per_s(self, nbytes: int, tasks: int, engines: int, seconds: float) -> float:
        """The arrays' megabits (10^6) per second: each crossing counted, and each
        engine where every task goes to every engine.

        >>> FLOOD_TESTS["echo"].mbit_per_s(1_000_000, 10, 4, 1.0)
        160.0
        """
        reached = engines if self.to_every_engine else 1
        return self.array_trips * nbytes * reached * tasks * 8 / seconds / 1e6

    def in_words(self, size: int = 0) -> str:
        """Its tasks in the memory advice: ``tasks``, ``echoes of 64k B arrays``."""
        return self.memory_words.format(size=format_size(size))


# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
FLOOD_TEST = FloodTest(
    "flood", "tiny tasks (an echo of an empty string) as fast as possible",
    overhead_from="tasks_per_s", memory_words="tasks",
)
ECHO_TEST = FloodTest(
    "echo", "numpy arrays of --size bytes there and back",
    settings=("size",), metrics=("mbit_per_s",), array_trips=2, chart_metric="mbit_per_s",
    memory_words="echoes of {size} B arrays",
)
MAP_TEST = FloodTest(
    "map", "map_async of time.sleep over --duration",
    settings=("duration", "chunksize"), metrics=("efficiency",),
    views=("lb", "direct"), off_view="runs on the lb or direct view",
    chart_metric="efficiency", overhead_from="efficiency",
)
PUSH_TEST = FloodTest(
    "push", "an array of --size bytes pushed to every engine (direct, broadcast or "
    "coalescing view)",
    settings=("size",), metrics=("mbit_per_s",), array_trips=1, to_every_engine=True,
    views=("direct", "broadcast", "coalescing"),
    off_view="goes to every engine; use --view direct, broadcast or coalescing",
    futures=False,
)
# The cell form's (%%taskflood): the user's cell is the task, timed on the engine too.
CELL_TEST = FloodTest(
    "cell", "the cell's code as the task",
    metrics=("task_s", "compute_s", "overhead_s", "overhead_fraction"), offered=False,
)
# Every test, by name, the default (flood) first.
FLOOD_TESTS: dict[str, FloodTest] = {
    t.name: t for t in (FLOOD_TEST, ECHO_TEST, MAP_TEST, PUSH_TEST, CELL_TEST)
}
# The swept settings some test alone reads: every other test ignores them.
TEST_SETTINGS = frozenset(name for t in FLOOD_TESTS.values() for name in t.settings)
# fmt: on

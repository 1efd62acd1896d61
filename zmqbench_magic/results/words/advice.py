"""What a flood result advises (``r.advice()``): how small a task may be, and how much
memory a large flood needs.

How small: from a flood or map result, the shortest task that keeps 90% of the
engines' time on the work, with its 95% interval. Which tests each piece of advice
reads is their records' word (:class:`..params.flood_tests.FloodTest`).

The model is the conservative one: each task costs the engines ``o`` seconds of
overhead on top of its own duration ``d`` (no overlap), so a map is ``d / (d + o)``
efficient and 90% needs ``d >= 9 o``. A chunk of ``c`` items pays ``o`` once, so items
of duration ``d`` need ``c >= 9 o / d``. ``o`` per engine comes from each sample:

- a flood of tiny tasks (the largest task count of a cluster): ``o = engines /
  tasks_per_s``, the engine time each task's overhead takes when nothing else runs;
- a map of sleeps (chunksize 1, duration > 0), at its longest duration:
  ``o = d (1 / efficiency - 1)``.

The interval is the order-statistic interval of the samples' median ``o``
(:func:`..statistics.stats.median_ci`), scaled: the uncertainty is the measurement's own.

How much memory: each task in flight costs the client what its heap held more once
every result and its output were in (``client_held_kb_per_task``, :mod:`...method.heap`):
the tasks' own records. The outputs still unread at the last reply (their IOPub
messages, queued) are held on top until the client reads them; their share at the
largest flood is said, not forecast (it grows faster than the flood). Each task costs
the controller what its peak rose by during the largest flood of a cluster, per task
(the median over its samples). The client's figure is its heap's, not its peak's: a flood
that follows one as large reuses the memory that one freed, and its peak rises by a
third of what the flood holds. The controller is another process, whose heap cannot be
read from here: its figure is a floor after a flood as large. Where a result has no
heap figure (a file from before it, an allocator that does not tell, another backend's
client) the client's peak is read too.

A heap's figure grows with the flood, so a flood of :data:`FLOOD_OF` tasks is forecast
from how it grew over every flood size of the run: a power of the tasks fitted in log
space (:func:`..params.memory.fit_growth`), drawn through the largest flood. Within
:data:`..params.memory.FAR_BEYOND` times the largest flood that is one figure; past it,
the range between each task costing what it did at the largest (the lower bound where
the rise grew faster than the tasks), the fitted curve and the steepest of its 95%
interval, and the sentence names the floods measured (ipyparallel #286 went past 16 GB
at 660k tasks; ``bench/bench_flood_soak.py`` checks the forecast against a flood of
100,000). A peak's figure is given per task at the largest flood and not forecast:
what reuse held back differs from flood to flood, so its rises over sizes trace the
allocator, not the tasks (fitted, they fell below what the measured flood used), and
its rise a task fell with the flood's size in that bench, so scaled to a larger flood it
is not even a floor.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from ...params.backends import BACKENDS
from ...params.flood_tests import FLOOD_TESTS
from ...params.memory import FAR_BEYOND, GrowthFit, fit_growth
from ...params.point_record import Settings
from ...params.taskflood import BACKEND, CHUNKSIZE, MEMORY_ROLES
from ...params.units import KiB
from ..statistics.stats import median_ci

if TYPE_CHECKING:
    from ..resultlike import ResultLike

TARGET = 0.9
# The item duration the chunking advice is worked out for, when the result has none.
_EXAMPLE_ITEM_S = 1e-3
_GROUP = ["backend", "engines", "view", "scheme", "task_db"]
# The flood the memory advice speaks of: every task in flight at once.
FLOOD_OF = 100_000


def advice(result: ResultLike) -> list[str]:
    """One sentence per cluster (or pool) a task flood measured."""
    if not result.rows:
        return []
    df = result.df
    # Files from before a column existed ran its default (also beside newer files).
    for column, default in (("backend", BACKEND.default), ("chunksize", CHUNKSIZE.default)):
        df[column] = df[column].fillna(default) if column in df.columns else default
    overheads = _overheads(df)
    sentences = []
    groups = [c for c in _GROUP if c in overheads]
    for key, group in overheads.groupby(groups, sort=False, dropna=False):
        where = dict(zip(groups, key, strict=True))
        sentences.append(_sentence(where, group["overhead_s"].tolist(), group["source"].iloc[0]))
    return sentences + _memory(df)


def _memory(df: pd.DataFrame) -> list[str]:
    """One sentence per cluster (and echo's array size) whose floods measured the
    client's memory."""
    advised = [t.name for t in FLOOD_TESTS.values() if t.memory_words]
    flood = df[df["test"].isin(advised)]
    if flood.empty or "client_kb_per_task" not in flood:
        return []
    groups = [c for c in [*_GROUP, "test", "size"] if c in flood]
    sentences = []
    for key, group in flood.groupby(groups, sort=False, dropna=False):
        where = dict(zip(groups, key, strict=True))
        largest = group[group["tasks"] == group["tasks"].max()]
        fits = {
            role: _growth(group, role)
            for role in MEMORY_ROLES
            if role != "engines" and largest[_per_task_column(group, role)].notna().any()
        }
        if "client" not in fits:
            continue
        samples = int(largest[_per_task_column(group, "client")].count())
        test = FLOOD_TESTS[where["test"]]
        of = test.in_words(int(where["size"])) if test.sends_arrays else test.in_words()
        places = {role: _place(group, role) for role in fits}
        peaks = {role for role in fits if _is_peak(_per_task_column(group, role))}
        smallest = int(group["tasks"].min())
        sentence = _memory_sentence(where, fits, samples, of, places, peaks, smallest)
        sentences.append(sentence + _unread_words(largest, "client" in peaks))
    return sentences


def _unread_words(largest: pd.DataFrame, client_at_peak: bool) -> str:
    """What the kernel's heap figure leaves out: the tasks' outputs still unread at the
    largest flood's last reply (the median share of its samples), which the client
    holds on top of the tasks' records until its IO thread reads them; a longer flood
    leaves a larger share (``docs/benchmarks/flood_soak.md``). Nothing where the share
    is unknown, under half a percent, or the figure is a peak's, which saw them."""
    if client_at_peak or "outputs_unread" not in largest:
        return ""
    share = largest["outputs_unread"].median()
    if not share >= 0.005:  # NaN too
        return ""
    return (
        f"; at the last reply {share:.0%} of that flood's task outputs were still unread, "
        "held on top until read (a longer flood leaves a larger share)"
    )


def _per_task_column(group: pd.DataFrame, role: str) -> str:
    """The column a role's memory per task is read from: the client's heap where every
    sample of ``group`` has it, else the role's peak's rise."""
    held = f"{role}_held_kb_per_task"
    if held in group and group[held].notna().all():
        return held
    return f"{role}_kb_per_task"


def _place(group: pd.DataFrame, role: str) -> str:
    """Where a role's figure was read: ``this kernel's heap``, ``the controller's peak``."""
    whose = "this kernel's" if role == "client" else f"the {role}'s"
    return f"{whose} {'peak' if _is_peak(_per_task_column(group, role)) else 'heap'}"


def _growth(group: pd.DataFrame, role: str) -> GrowthFit:
    """How ``role``'s memory grew with the tasks over every flood size of ``group``, in
    bytes: the median per task of each size's samples, times its tasks. A peak's rise
    is fitted at the largest flood alone: memory an earlier flood freed is reused before
    a peak rises, by as much as the allocator happens to keep, so its rises over sizes
    trace the reuse (they have fitted negative powers), not the growth."""
    column = _per_task_column(group, role)
    per_task = group.groupby("tasks")[column].median().dropna()
    if _is_peak(column):
        per_task = per_task[per_task.index == per_task.index.max()]
    return fit_growth({int(n): float(kb) * 1e3 * int(n) for n, kb in per_task.items()})


def _is_peak(column: str) -> bool:
    return "_held_" not in column


def forecasts(result: ResultLike, tasks: int = FLOOD_OF) -> pd.DataFrame:
    """Per cluster and role, what the advice forecasts for a flood of ``tasks``: where
    it was ``read`` (``heap`` or ``peak``), the fit (``smallest``, ``largest`` flood,
    ``exponent``) and the rise in bytes: each task as at the largest (``linear``), on
    the fitted curve (``fitted``), and what the advice prints (``low``, ``high``: equal
    where the floods reach that far, the two figures ``beyond`` it; NaN for a peak,
    which the advice does not forecast)."""
    df = result.df
    if "backend" not in df.columns:
        df = df.assign(backend=BACKEND.default)
    flood = df[df["test"].isin([t.name for t in FLOOD_TESTS.values() if t.memory_words])]
    groups = [c for c in [*_GROUP, "test", "size"] if c in flood]
    rows = []
    for key, group in flood.groupby(groups, sort=False, dropna=False):
        for role in ("client", "controller"):
            column = _per_task_column(group, role)
            if column not in group or group[column].isna().all():
                continue
            fit = _growth(group, role)
            low, high = fit.forecast(tasks)
            if _is_peak(column):
                low = high = math.nan  # not forecast (_memory_sentence)
            rows.append(
                {
                    **dict(zip(groups, key, strict=True)),
                    "role": role,
                    "read": "peak" if _is_peak(column) else "heap",
                    "smallest": fit.smallest,
                    "largest": fit.largest,
                    "exponent": fit.exponent,
                    "steepest": fit.steepest,
                    "beyond": fit.beyond(tasks),
                    "linear": fit.linear(tasks),
                    "fitted": fit.fitted(tasks),
                    "low": low,
                    "high": high,
                }
            )
    return pd.DataFrame(rows)


def _memory_sentence(
    where: Settings,
    fits: dict[str, GrowthFit],
    samples: int,
    of: str,
    places: dict[str, str],
    peak_roles: set[str],
    smallest: int,
) -> str:
    """What each task in flight cost each process at the largest flood (``places``:
    where each role's figure was read; ``peak_roles``: those read at a peak), and what
    a flood of :data:`FLOOD_OF` needs: one figure where the floods measured reach that
    far, a range beyond (and where they say so); a peak's rise is not forecast. A
    process that did not grow at all is said to show none, not to need "0 B": a peak's
    figure is below what /proc's whole kilobytes can tell over ``tasks`` tasks, and a
    zero says nothing of a larger flood."""
    tasks = next(iter(fits.values())).largest
    held = {role: "this kernel" if role == "client" else f"the {role}" for role in fits}
    grew = {role: fit for role, fit in fits.items() if fit.per_task > 0}
    flat = [places[role] for role in fits if role not in grew]
    head = f"with {_cluster(where)}, "
    sample_words = f"(medians of {samples} samples of a flood of {tasks:,} {of})"
    none = (
        f"no growth in {' or '.join(flat)} (under {_bytes(KiB / tasks)} a task, one "
        "kilobyte over the flood)"
    )
    if not grew:
        return f"{head}each task in flight showed {none} {sample_words}"
    costs = " and ".join(f"{_bytes(fit.per_task)} in {places[role]}" for role, fit in grew.items())
    peaks = [places[role] for role in grew if role in peak_roles]
    fitted = {role: fit for role, fit in grew.items() if role not in peak_roles}
    forecast = ""
    if fitted:
        needs = " and ".join(
            f"{_needs(fit)} more in {places[role]}" for role, fit in fitted.items()
        )
        span = (
            f"floods of {smallest:,} to {tasks:,} {of}"
            if smallest < tasks
            else f"a flood of {tasks:,} {of}"
        )
        forecast = (
            f": a flood of {FLOOD_OF:,} {of} at once needs {needs}"
            f"{_basis(fitted, held, span, tasks)}"
        )
    unforecast = (
        f"; {' and '.join(peaks)} {'is' if len(peaks) == 1 else 'are'} not forecast: memory "
        "an earlier flood freed is reused "
        "before a peak rises, by as much as the allocator kept, so a peak's rise a task "
        "does not scale to a larger flood"
        if peaks
        else ""
    )
    tail = f"; {none}" if flat else ""
    return (
        f"{head}each task in flight took about {costs} {sample_words}{forecast}{tail}{unforecast}"
    )


def _needs(fit: GrowthFit) -> str:
    """``about 2.6 GB``; beyond the floods measured, ``between 1.6 GB (each task as
    here) and 5.2 GB (tasks^1.47, ...)``, or ``at least 1.6 GB`` without a fit."""
    low, high = fit.forecast(FLOOD_OF)
    if math.isinf(high):
        return f"at least {_bytes(low)}"
    if _bytes(low) == _bytes(high):
        return f"about {_bytes(low)}"
    figures = [
        (fit.linear(FLOOD_OF), "each task as here"),
        (fit.fitted(FLOOD_OF), _curve_words("the fit", fit.exponent)),
    ]
    if not math.isnan(fit.steepest) and _power(fit.drawn(fit.steepest)) != _power(fit.curve):
        steep = _curve_words("the steepest within the fit's 95% interval", fit.steepest)
        figures.append((fit.fitted(FLOOD_OF, fit.steepest), steep))
    ends = [min(figures), max(figures)]
    return "between " + " and ".join(f"{_bytes(amount)} ({how})" for amount, how in ends)


def _curve_words(what: str, exponent: float) -> str:
    """``the fit, tasks^1.47``; a curve steeper than any drawn is said to be cut."""
    drawn = GrowthFit.drawn(exponent)
    if drawn < exponent:
        return (
            f"{what}, {_power(exponent)}, cut to {_power(drawn)}: steeper is past what a "
            "flood's records need"
        )
    return f"{what}, {_power(exponent)}"


def _basis(fitted: dict[str, GrowthFit], held: dict[str, str], span: str, largest: int) -> str:
    """What the fitted figures rest on (``span``: the floods measured), and, past the
    floods measured, that they go past. Floors alone need neither."""
    if not fitted:
        return ""
    shapes = " and ".join(
        f"{_power(each.exponent)} in {held[role]}"
        for role, each in fitted.items()
        if not math.isnan(each.exponent)
    )
    if FAR_BEYOND * largest >= FLOOD_OF:
        if not shapes:
            return ", if memory grows with the tasks as it did here"
        return f", the growth fitted over {span} ({shapes})"
    far = f"; {FLOOD_OF / largest:,.0f}x the largest flood measured, past what {span}"
    if not shapes:
        return (
            f"{far} can tell: memory per task may grow with the flood, as floods of several "
            "sizes would show"
        )
    return f"{far} can tell"


def _power(exponent: float) -> str:
    """``tasks^1.20``: how the memory grew with the tasks."""
    return f"tasks^{exponent:.2f}"


def _overheads(df: pd.DataFrame) -> pd.DataFrame:
    """Per sample, the overhead each task costs the engines (seconds), and its source:
    from every test whose record names the metric to read it from."""
    frames = [
        _OVERHEAD_FROM[test.overhead_from](df[df["test"] == test.name])
        for test in FLOOD_TESTS.values()
        if test.overhead_from
    ]
    frames = [frame for frame in frames if not frame.empty]
    if not frames:
        return pd.DataFrame(columns=[*_GROUP, "overhead_s", "source"])
    return pd.concat(frames, ignore_index=True)


def _from_task_rate(rows: pd.DataFrame) -> pd.DataFrame:
    """The largest flood of tiny tasks of each cluster: ``o = engines / tasks_per_s``."""
    if rows.empty:
        return rows
    groups = [c for c in _GROUP if c in rows]
    largest = rows.groupby(groups, dropna=False)["tasks"].transform("max")
    steady = rows[rows["tasks"] == largest]
    return steady.assign(
        overhead_s=steady["engines"] / steady["tasks_per_s"],
        source="flood of " + steady["tasks"].map(lambda n: f"{int(n):,}") + " tiny tasks",
    )


def _from_efficiency(rows: pd.DataFrame) -> pd.DataFrame:
    """Maps of sleeps, one to a task (chunksize 1, duration > 0), at the longest
    duration of each cluster: ``o = d (1 / efficiency - 1)``. The longest, because
    what a task costs beyond its nominal duration grows with it (a sleep overshoots in
    proportion, and a longer map pays more of its slowest engine's tail): shorter maps
    read less overhead than the tasks the advice is for will pay."""
    mapped = rows[rows["chunksize"] == 1]
    if "duration" in mapped:
        mapped = mapped[mapped["duration"] > 0]
    if mapped.empty:
        return mapped
    groups = [c for c in _GROUP if c in mapped]
    longest = mapped.groupby(groups, dropna=False)["duration"].transform("max")
    mapped = mapped[mapped["duration"] == longest]
    return mapped.assign(
        overhead_s=(mapped["duration"] * (1 / mapped["efficiency"] - 1)).clip(lower=0),
        source="map of " + mapped["duration"].map(_ms) + " sleeps, the longest measured",
    )


# How a per-task overhead is read from each metric a test's record names for it.
_OVERHEAD_FROM = {"tasks_per_s": _from_task_rate, "efficiency": _from_efficiency}


def _sentence(where: Settings, overheads: list[float], source: str) -> str:
    factor = TARGET / (1 - TARGET)  # d / (d + o) >= 0.9  <=>  d >= 9 o
    median = float(pd.Series(overheads).median())
    low, high, level = median_ci(overheads)
    shortest = factor * median
    # Rounded first: 9 x 10 ms / 1 ms is 90.00000000000001 in floating point, and a
    # chunk of 90 does reach 90%.
    chunk = math.ceil(round(shortest / _EXAMPLE_ITEM_S, 9))
    return (
        f"with {_cluster(where)}, tasks must last at least {_ms(shortest)} ({level:.0%} CI "
        f"{_ms(factor * low)} to {_ms(factor * high)}), or be chunked by at least {chunk:,} "
        f"for {_ms(_EXAMPLE_ITEM_S)} tasks, for {TARGET:.0%} efficiency (overhead "
        f"{_ms(median)} of engine time per task, from {len(overheads)} samples of a {source})"
    )


def _cluster(where: Settings) -> str:
    """``2 engines (lb view, leastload scheme)``, ``Dask on 2 workers``."""
    backend = BACKENDS[where["backend"]]
    cluster = backend.cluster(int(where["engines"]))
    if backend.views:
        # The scheme is the load-balanced view's: two clusters may differ by it alone.
        lb = where["view"] == "lb" and where.get("scheme")
        scheme = f", {where['scheme']} scheme" if lb else ""
        database = where.get("task_db")  # only where asked for: NaN beside older runs
        with_database = f", task database {database}" if isinstance(database, str) else ""
        cluster += f" ({where['view']} view{scheme}{with_database})"
    return cluster


def _bytes(amount: float) -> str:
    """``980 kB``, ``1.03 MB``, ``103 GB``: three figures (decimal units, as the columns)."""
    amount = max(amount, 0.0)  # a sample whose peak stayed where it began
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if amount >= size * 0.9995:  # what rounds to 1,000 of the unit below is 1 of this
            return f"{amount / size:,.3g} {unit}"
    return f"{amount:.3g} B"


def _ms(seconds: float) -> str:
    value = seconds * 1e3
    return f"{value:.3g} ms" if value < 100 else f"{value:,.0f} ms"

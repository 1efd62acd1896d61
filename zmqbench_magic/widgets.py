"""The panels (``%zmqthr --widget`` and friends): a benchmark's controls, Run, Stop,
Clear, export and one chart, redrawn in place.

Each panel is :class:`~zmqbench_magic.panels.panel.BenchmarkPanel` plus the core function
it calls; see there for how a run, a stop and a redraw work.

Example
-------
>>> p = ThroughputPanel(size=["1k", "64k"]); p       # doctest: +SKIP
>>> p.controls["copy"].value = False; p.run()        # doctest: +SKIP
>>> p.result.summary(); p.chart                      # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import altair as alt

from .charts import default_chart
from .panels.by_kind import PANELS
from .panels.panel import BenchmarkPanel
from .params import FloodParams, LatencyParams, ThroughputParams
from .params.flood_tests import FLOOD_TESTS
from .params.kernel_messages import KernelMsgParams
from .params.units import plural
from .results import ResultSet


class _SocketPanel(BenchmarkPanel):
    """A ZeroMQ benchmark's panel: message size on the chart's x axis, and the
    settings people change most up front."""

    ranged = ("size",)
    main: ClassVar[tuple[str, ...]] = ("size", "copy", "transport", "peer")


class ThroughputPanel(_SocketPanel):
    """``%zmqthr`` as a panel: PUSH/PULL throughput vs message size."""

    params_class = ThroughputParams
    title = "ZeroMQ PUSH/PULL throughput"
    main = (*_SocketPanel.main, "pattern", "peers")


class LatencyPanel(_SocketPanel):
    """``%zmqlat`` as a panel: REQ/REP round-trip percentiles vs message size."""

    params_class = LatencyParams
    title = "ZeroMQ REQ/REP round trip"


class TaskFloodPanel(BenchmarkPanel):
    """``%taskflood`` as a panel. Moving the engines slider resizes the project's
    running cluster there and then (no restart); the first run starts it."""

    params_class = FloodParams
    title = "ipyparallel task flood"
    ranged = ("tasks", "size", "duration")
    main = (
        "test",
        "backend",
        "tasks",
        "engines",
        "view",
        "scheme",
        "size",
        "duration",
        "chunksize",
    )

    def __init__(self, **values: Any) -> None:
        super().__init__(**values)
        self.controls["engines"].observe(self._engines_changed, names="value")
        self.controls["test"].observe(self._test_changed, names="value")
        self._enable_applicable(busy=False)

    def _shown(self, result: ResultSet) -> ResultSet:
        # Each test has its own chart: the chart and the summary show the runs of the
        # latest run's test (p.result keeps them all).
        test = result.rows[-1]["test"] if result.rows else None
        rows = tuple(r for r in result.rows if r["test"] == test)
        runs = {r.get("run") for r in rows}
        return dataclasses.replace(
            result, rows=rows, runs={n: m for n, m in result.runs.items() if n in runs}
        )

    def _chart_for(self, shown: ResultSet) -> alt.TopLevelMixin:
        # Settings only another test had (a map's chunksize) are no column of this one.
        return default_chart(shown.benchmark, shown.df.dropna(axis=1, how="all"))

    def _set_busy(self, busy: bool) -> None:
        super()._set_busy(busy)
        self._enable_applicable(busy)

    def _enable_applicable(self, busy: bool | None = None) -> None:
        """Grey what the chosen test ignores (size outside echo and push, duration and
        chunksize outside map)."""
        busy = self.running if busy is None else busy
        test = self.controls["test"].value
        for name, control in self.controls.items():
            control.disabled = busy or not FloodParams.applies_to(test, name)

    def _test_changed(self, change: dict[str, Any]) -> None:
        test, view = FLOOD_TESTS[change["new"]], self.controls["view"]
        if test.to_every_engine and view.value not in test.views:
            # The load-balanced view picks one engine a task: it has none to offer.
            view.value = test.views[0]
            self._say(f"{test.name} goes to every engine: the view is now {view.value}")
        self._enable_applicable()

    def _engines_changed(self, change: dict[str, Any]) -> None:
        from .parallel.clusters import own as own_cluster

        if self.running:
            return  # the next run sizes the cluster itself
        try:
            named = self.params().existing
        except ValueError:
            return  # the next Run reports what is wrong with the settings
        if named:
            self._say("a running cluster you named is never resized: runs use its engines")
        elif own_cluster.current() is None:
            self._say(f"no cluster yet: Run starts one of {plural(change['new'], 'engine')}")
        else:
            self._start(self._resize)

    def _resize(self) -> None:
        from .parallel.clusters import own as own_cluster

        # Until it matches: the slider may have moved again while a resize ran.
        while (have := own_cluster.engine_count()) is not None and (
            wanted := self.controls["engines"].value
        ) != have:
            self._say(f"resizing the cluster to {plural(wanted, 'engine')}…")
            said = own_cluster.resize(wanted, self.controls["timeout"].value, self._show_phase)
            self.progress_label.value = ""
            self._say(said)


class KernelMessagesPanel(BenchmarkPanel):
    """``%kernelmsg`` as a panel: where a kernel message's round trip goes, per message,
    size and kernel."""

    params_class = KernelMsgParams
    title = "Jupyter kernel messages"
    ranged = ("size",)
    main = ("msg", "kernel", "size", "buffers")


__all__ = [
    "PANELS",
    "BenchmarkPanel",
    "KernelMessagesPanel",
    "LatencyPanel",
    "TaskFloodPanel",
    "ThroughputPanel",
]

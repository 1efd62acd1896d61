"""What every panel shares: controls built from the parameter declarations, Run /
Stop / Clear, a progress bar, export and one chart redrawn in place.

A panel is an adapter like the magics: it reads its controls into a params object and
calls the same core function. A run goes in a worker thread so the kernel stays free
to hear the Stop button, and Stop ends it between two samples, keeping the rounds
measured whole (every point the same number of samples). Runs accumulate into
``p.result``; the chart is drawn as offline SVG (vl-convert) into one
``ipywidgets.Output`` whose outputs are replaced in a single assignment, so a
redraw happens in place and needs no network. The three panels are
in :mod:`zmqbench_magic.widgets`.
"""

from __future__ import annotations

import dataclasses
import html
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import altair as alt
import ipywidgets as widgets

from ..charts import chart_bundle, default_chart
from ..params import KINDS, BenchParams
from ..params.columns import Row
from ..params.units import plural
from ..results import ResultSet
from ..results.words.text import warnings_text
from ..ui.progress import ProgressTo
from .controls import control_value, fit_descriptions, make_control, shown

# More rounds than one run takes: a pooled sample's number keeps its run apart.
_ROUNDS_APART = 1_000_000
# How long a stopped run may take to reach its next sample boundary and clean up.
_STOP_GRACE_S = 60.0


# ipywidgets aligns a slider's description to the right and a row of toggle buttons'
# to the left; one rule for every control of a panel lines them all up on the right.
_PANEL_STYLE = "<style>.zmqbench-panel .widget-label:not(.widget-readout){text-align:right}</style>"


# Settings a panel has no control for: it measures one value of each setting a run,
# so no run of it has two arms for --until decided to decide between.
NOT_CONTROLS = ("until",)


class BenchmarkPanel:
    """Controls for every parameter, Run / Stop / Clear, progress, export and a chart.

    ``p.controls`` maps each parameter name to its widget; ``p.run()`` does what the
    Run button does; ``p.result`` is the accumulated :class:`ResultSet`; ``p.chart``
    the altair chart now shown.
    """

    params_class: ClassVar[type[BenchParams]]
    title: ClassVar[str]
    # Swept parameters on the chart's x axis: a from-to range, every option measured.
    ranged: ClassVar[tuple[str, ...]] = ()
    # Shown up front (by default, the swept parameters); the others are under "more
    # settings".
    main: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **values: Any) -> None:
        defaults = self.params_class(**values)  # a bad prefill is a ValueError here
        self.controls: dict[str, widgets.ValueWidget] = {
            p.name: make_control(p, getattr(defaults, p.name), ranged=p.name in self.ranged)
            for p in defaults.fields()
            if p.name not in NOT_CONTROLS
        }
        fit_descriptions(self.controls.values())
        self.result: ResultSet | None = None
        self.chart: alt.TopLevelMixin | None = None
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        # Set by the worker as it ends. Not Thread.is_alive(): on Python < 3.13 a
        # KeyboardInterrupt inside Thread.join() can leave is_alive() False for a
        # thread that is still running.
        self._idle = threading.Event()
        self._idle.set()
        self._error: BaseException | None = None
        self._build()
        self._show_placeholder()

    # --- what a user calls -------------------------------------------------------

    @property
    def benchmark(self) -> str:
        return self.params_class.benchmark

    @property
    def running(self) -> bool:
        return not self._idle.is_set()

    def params(self) -> Any:
        """The settings the controls show now, as the panel's own settings class
        (:class:`..params.ThroughputParams`, ...); ``ValueError`` if they do not go
        together."""
        return self.params_class(
            **{
                p.name: control_value(p, self.controls[p.name])
                for p in self.params_class.fields()
                if p.name in self.controls
            }
        )

    def run(self, wait: bool = True) -> ResultSet | None:
        """Measure what the controls show and add it to the chart, as the Run button does.

        Returns the accumulated result once the run ends; with ``wait=False`` returns at
        once (as the button does) and :meth:`wait` collects the run later.
        """
        if self.running:
            msg = "a run is already going: press Stop, or wait for it with p.wait()"
            raise RuntimeError(msg)
        params = self.params()
        points = len(list(params.points()))
        self._set_progress(0, points * params.repeat)
        cautions = "".join(f"\nwarning: {c}" for c in params.cautions())
        self._say(f"running {plural(points, 'point')}, {params.repeat} rounds…{cautions}")
        self._start(lambda: self._measure(params))
        return self.wait() if wait else None

    def wait(self, timeout: float | None = None) -> ResultSet | None:
        """Block until the current run (or resize) ends; raise its error, if any.

        A kernel interrupt while waiting stops the run cleanly before it propagates.
        """
        try:
            if not _wait(self._idle, timeout):
                msg = f"the run was still going after {timeout:g} s (it goes on; p.stop())"
                raise TimeoutError(msg)
        except KeyboardInterrupt:
            self.stop()
            _wait(self._idle, _STOP_GRACE_S)
            raise
        if self._worker is not None:
            self._worker.join(_STOP_GRACE_S)  # it has only to return now
        error, self._error = self._error, None
        if error is not None:
            raise error
        return self.result

    def stop(self) -> None:
        """End the current run, keeping the whole rounds measured (a flood's sample in
        progress is abandoned at once, its tasks aborted; others end with it)."""
        if self.running:
            self._stop.set()
            self._say("stopping: the whole rounds measured are kept…")

    def clear(self) -> None:
        """Forget the accumulated result and empty the chart (the Clear button)."""
        if self.running:
            msg = "cannot clear during a run: press Stop first"
            raise RuntimeError(msg)
        self.result = None
        self.chart = None
        self.progress.value = 0
        self.progress_label.value = ""
        self._show_placeholder()
        self._say("cleared")

    def to_csv(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the accumulated samples as CSV; by default to ``zmqbench-<benchmark>.csv``
        in the working folder, numbered (``-2``, ``-3``) past any file already there."""
        return self._need_result().to_csv(path or _unused(f"zmqbench-{self.benchmark}", ".csv"))

    def save(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        append: bool = False,
        replace: bool = False,
    ) -> Path:
        """Write the accumulated result in the project's JSON format (``zmqbench_magic.load``);
        by default to ``zmqbench-<benchmark>.json``, numbered past any file already there,
        so a second press of Save keeps the first file. A path given that exists is refused
        unless ``append`` or ``replace`` says what to do with it (:meth:`ResultSet.save`)."""
        target = path or _unused(f"zmqbench-{self.benchmark}", ".json")
        return self._need_result().save(target, append=append, replace=replace)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # --- what the panel does itself ----------------------------------------------

    def _measure_function(self) -> Callable[..., ResultSet]:
        """The core function that measures this panel's kind (imported when first used:
        ipyparallel only for a flood)."""
        return KINDS[self.params_class.benchmark].module.run

    def _shown(self, result: ResultSet) -> ResultSet:
        """The runs the chart draws and the summary lists, alike: every run since Clear,
        each point's samples pooled."""
        return result

    def _chart_for(self, shown: ResultSet) -> alt.TopLevelMixin:
        return default_chart(shown.benchmark, shown.df, shown.distributions)

    def _measure(self, params: Any) -> None:
        measure = self._measure_function()
        result = measure(params, progress=ProgressTo(self._set_progress), stop=self._stop)
        self.result = result if self.result is None else self.result + result
        self._redraw()
        self._say(self._summary(latest=result))

    def _summary(self, latest: ResultSet) -> str:
        """The summary of what the chart shows (not of the latest run alone, which
        would disagree with the chart's pooled points after a second Run), headed by
        how many runs it pools. A warning is about one run's samples: the latest
        run's are shown, said to be its."""
        said = [] if latest.rows else ["stopped before the first point was measured whole"]
        shown = self._shown(self.result) if self.result is not None else None
        runs = len({row.get("run") for row in shown.rows}) if shown is not None else 0
        if shown is None or runs < 2:
            said.append(str(shown if runs else latest))
        else:
            said.append(f"the {runs} runs on the chart, each point's samples pooled:")
            said.append(str(dataclasses.replace(_pooled(shown), warnings=())))
            if latest.warnings:
                said.append("the latest run's warnings (every run's are in p.result.warnings):")
                said.append(warnings_text(latest))
        return "\n".join(line for line in said if line)

    def _start(self, job: Callable[[], None]) -> None:
        self._stop.clear()
        self._error = None
        self._idle.clear()
        self._set_busy(True)

        def work() -> None:
            try:
                job()
            except BaseException as exc:  # noqa: BLE001 - shown here, raised again by wait()
                self._error = exc
                self._say(f"error: {exc}")
            finally:
                self._set_busy(False)
                self._idle.set()

        self._worker = threading.Thread(target=work, name=f"zmqbench-{self.benchmark}-panel")
        self._worker.start()

    def _need_result(self) -> ResultSet:
        if self.result is None:
            msg = "nothing to export yet: press Run first"
            raise ValueError(msg)
        return self.result

    def _redraw(self) -> None:
        if self.result is None or not self.result.rows:
            return
        chart = self._chart_for(self._shown(self.result))
        data, metadata = chart_bundle(chart)
        self.chart = chart
        # One assignment, so the front end swaps the old chart for the new in place.
        self.output.outputs = ({"output_type": "display_data", "data": data, "metadata": metadata},)

    def _show_placeholder(self) -> None:
        self.output.outputs = (
            {
                "output_type": "display_data",
                "data": {"text/plain": "no results yet: set the controls and press Run"},
                "metadata": {},
            },
        )

    def _say(self, text: str) -> None:
        # Every line shown whole, never scrolled sideways nor folded away: the lines fit
        # 100 columns, and a narrower output area wraps them again, at spaces.
        self.status.value = (
            "<pre style='margin:0;line-height:1.3;white-space:pre-wrap;overflow-wrap:normal'>"
            f"{html.escape(text)}</pre>"
        )

    def _set_progress(self, done: int, total: int, doing: str = "", phase: str = "") -> None:
        self.progress.max = max(total, 1)
        self.progress.value = done
        counts = f"{done} of {plural(total, 'sample')}" if total else ""
        self.progress_label.value = phase or counts + (f"; {doing}" if doing else "")

    def _show_phase(self, text: str) -> None:
        """A phase outside any run's samples (a resize): named instead of their counts."""
        self.progress.value = 0
        self.progress_label.value = text

    def _set_busy(self, busy: bool) -> None:
        for control in [
            *self.controls.values(),
            self.run_button,
            self.clear_button,
            self.csv_button,
            self.json_button,
        ]:
            control.disabled = busy
        self.stop_button.disabled = not busy

    def _build(self) -> None:
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.stop_button = widgets.Button(
            description="Stop", button_style="danger", icon="stop", disabled=True
        )
        self.clear_button = widgets.Button(description="Clear", icon="trash")
        self.csv_button = widgets.Button(description="Save CSV", icon="download")
        self.json_button = widgets.Button(description="Save JSON", icon="download")
        self.progress = widgets.IntProgress(min=0, max=1, value=0)
        self.progress_label = widgets.Label()
        self.status = widgets.HTML()
        self.output = widgets.Output()
        self.run_button.on_click(lambda _: self._press(lambda: self.run(wait=False)))
        self.stop_button.on_click(lambda _: self.stop())
        self.clear_button.on_click(lambda _: self._press(self.clear))
        self.csv_button.on_click(lambda _: self._press(lambda: self._exported(self.to_csv())))
        self.json_button.on_click(lambda _: self._press(lambda: self._exported(self.save())))
        up_front = self.main or tuple(p.name for p in self.params_class.sweep_fields())
        main = [shown(self.controls[n]) for n in up_front]
        more = [shown(c) for n, c in self.controls.items() if n not in up_front]
        settings = widgets.Accordion([widgets.VBox(more)], titles=("more settings",))
        settings.selected_index = None
        buttons = [self.run_button, self.stop_button, self.clear_button]
        self.widget = widgets.VBox(
            [
                widgets.HTML(f"{_PANEL_STYLE}<b>{html.escape(self.title)}</b>"),
                *main,
                settings,
                widgets.HBox([*buttons, self.progress, self.progress_label]),
                widgets.HBox([self.csv_button, self.json_button]),
                self.status,
                self.output,
            ]
        )
        self.widget.add_class("zmqbench-panel")

    def _press(self, action: Callable[[], Any]) -> None:
        """A button's action: a bad setting is reported in the panel, not raised into
        the front end's log where nobody would see it."""
        try:
            action()
        except (ValueError, RuntimeError, OSError) as exc:
            self._say(f"error: {exc}")

    def _exported(self, path: Path) -> None:
        rows = len(self.result.rows) if self.result else 0
        self._say(f"saved {rows} samples to {path.resolve()}")


def _unused(stem: str, suffix: str) -> Path:
    """``stem + suffix``, or the first of ``stem-2``, ``stem-3``, ... that is not a file
    yet (as pytest-benchmark numbers its saved runs): a press of Save never writes over
    what an earlier press saved."""
    candidate, number = Path(stem + suffix), 1
    while candidate.exists():
        number += 1
        candidate = Path(f"{stem}-{number}{suffix}")
    return candidate


def _pooled(result: ResultSet) -> ResultSet:
    """``result``'s runs as one, each point's samples pooled as the chart pools them
    (a summary of several runs lists each run's points apart). Each sample keeps a
    round of its own (its run folded into its number), so two arms are still paired
    only within a round they were measured in."""
    names = list(dict.fromkeys(row.get("run") for row in result.rows))
    if len(names) < 2:
        return result

    def one_run(entry: Row) -> Row:
        pooled = {**entry, "run": names[-1]}
        if entry.get("run") in names and "sample" in entry:
            pooled["sample"] = names.index(entry["run"]) * _ROUNDS_APART + entry["sample"]
        return pooled

    return dataclasses.replace(
        result,
        rows=tuple(one_run(r) for r in result.rows),
        distributions=tuple(one_run(d) for d in result.distributions),
    )


def _wait(done: threading.Event, timeout: float | None) -> bool:
    """Wait in short steps, so a kernel interrupt reaches the waiting thread."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while not done.wait(0.1):
        if deadline is not None and time.monotonic() > deadline:
            return False
    return True

"""IPython magics: ``%zmqthr``, ``%zmqlat``, ``%taskflood``: thin adapters over the core.

They parse options built from the parameter declarations, call the same functions
as the Python API and the CLI, print a one-line summary per point unless ``-q``,
store the result with ``-v NAME``, return it with ``-o``, and show the chart unless
``--no-chart`` (offline: a live Vega view with a PNG and SVG beside it, see
:mod:`.charts.render`; ``--svg``/``--png PATH`` save it).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display

from .method.schedule import Interrupted
from .params import SIZE, BenchParams, FloodParams, LatencyParams, ThroughputParams
from .params.flood import TEST
from .results import ResultSet
from .sockets.measure import run_latency, run_throughput
from .ui.config import BenchDefaults, configured
from .ui.options import check_output_path, given_options, param_options
from .ui.progress import DisplayLine, ProgressLine, stream_writer


def _param_arguments(params: type[BenchParams]) -> Callable[[Callable[..., Any]], Any]:
    """Add one magic option per parameter, keeping declaration order in the help."""

    def decorate(func: Callable[..., Any]) -> Any:
        # magic_arguments applies the innermost decorator last, so add in reverse.
        for flags, kwargs in reversed(list(param_options(params))):
            func = magic_arguments.argument(*flags, **kwargs)(func)
        return func

    return decorate


def _output_arguments(func: Callable[..., Any]) -> Any:
    """The %timeit-style output options shared by every benchmark magic."""
    for flags, kwargs in reversed(
        [
            (("-q", "--quiet"), {"action": "store_true", "help": "do not print the summary"}),
            (("-o", "--output"), {"action": "store_true", "help": "return the result object"}),
            (("-v", "--variable"), {"metavar": "NAME", "help": "store the result in NAME"}),
            (("--no-chart",), {"action": "store_true", "help": "do not show the chart"}),
            (("--svg",), {"metavar": "PATH", "help": "save the chart as SVG (offline)"}),
            (("--png",), {"metavar": "PATH", "help": "save the chart as PNG (offline)"}),
            (
                ("--widget",),
                {
                    "action": "store_true",
                    "help": "measure nothing now: show an interactive panel with these "
                    "options filled in (line magic only)",
                },
            ),
        ]
    ):
        func = magic_arguments.argument(*flags, **kwargs)(func)
    return func


def _refuse_widget(args: Any) -> None:
    if args.widget:
        msg = "--widget is for the line magic: a panel measures what its controls show"
        raise UsageError(msg)


class _UserCodeFailed(Exception):
    """The user's cell raised; its traceback has been shown."""


@magics_class
class ZmqBench(Magics, BenchDefaults):
    """ZeroMQ and ipyparallel benchmark magics. Load with ``%load_ext zmqbench_magic``.

    Configurable: ``%config ZmqBench.repeat = 10`` sets a default for every later run
    (an option on the line still wins), ``%config ZmqBench`` lists them all.
    """

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        if shell is not None:
            # What %config lists and updates: without this it would not know us.
            shell.configurables.append(self)

    @magic_arguments.magic_arguments()
    @_output_arguments
    @_param_arguments(ThroughputParams)
    @line_cell_magic
    def zmqthr(self, line: str, cell: str | None = None) -> ResultSet | None:
        """Measure ZeroMQ PUSH/PULL throughput: delivered and send-only msgs/s, Mbit/s.

        Lists sweep: ``%zmqthr --size 100 1k 64k 1M --copy true false``. As a cell
        magic, the cell runs once in your namespace and its last expression is the
        message (bytes, a buffer such as a numpy array, or a list of them: one frame
        each); ``--size`` is then the message's own.
        """
        args = magic_arguments.parse_argstring(self.zmqthr, line)
        return self._run_zmq(args, cell, ThroughputParams, run_throughput)

    @magic_arguments.magic_arguments()
    @_output_arguments
    @_param_arguments(LatencyParams)
    @line_cell_magic
    def zmqlat(self, line: str, cell: str | None = None) -> ResultSet | None:
        """Measure ZeroMQ REQ/REP round-trip latency with p50/p90/p99/max percentiles.

        Lists sweep: ``%zmqlat --size 1 1k 64k --transport tcp ipc inproc``. As a cell
        magic, the cell's last expression is the message, as for ``%%zmqthr``.
        """
        args = magic_arguments.parse_argstring(self.zmqlat, line)
        return self._run_zmq(args, cell, LatencyParams, run_latency)

    def _run_zmq(
        self, args: Any, cell: str | None, params_class: type[BenchParams], measure: Any
    ) -> ResultSet | None:
        if cell is None:
            return self._run(args, params_class, measure)
        _refuse_widget(args)
        if args.size is not None:
            msg = f"{SIZE.option} does not apply to the cell form: the cell's value is the message"
            raise UsageError(msg)
        try:
            payload = self._cell_value(cell)
        except _UserCodeFailed:
            return None  # the user's traceback is already shown, once
        return self._run(args, params_class, partial(measure, payload=payload))

    def _cell_value(self, cell: str) -> Any:
        """Run the cell in the user's namespace; return its last expression's value."""
        source = self.shell.transform_cell(cell)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            self.shell.showsyntaxerror()
            raise _UserCodeFailed from None
        if not tree.body or not isinstance(tree.body[-1], ast.Expr):
            msg = (
                "the cell's last line must be an expression giving the message, e.g. "
                "np.random.random(8192) or [b'header', body]"
            )
            raise UsageError(msg)
        setup = ast.Module(body=tree.body[:-1], type_ignores=[])
        last = ast.Expression(body=tree.body[-1].value)
        namespace = self.shell.user_ns
        # Registered with IPython's line cache, so a traceback shows the user's lines.
        filename = self.shell.compile.cache(source)
        try:
            exec(compile(setup, filename, "exec"), namespace)
            return eval(compile(last, filename, "eval"), namespace)
        except Exception:  # noqa: BLE001 - any error of the user's code is shown as theirs
            kind, error, trace = sys.exc_info()
            # From the user's own code on: this method's frame is no concern of theirs.
            self.shell.showtraceback((kind, error, trace.tb_next if trace else None))
            raise _UserCodeFailed from None

    @magic_arguments.magic_arguments()
    @magic_arguments.argument(
        "--stop", action="store_true",
        help="stop the cluster this extension started (and measure nothing)",
    )  # fmt: skip
    @_output_arguments
    @_param_arguments(FloodParams)
    @line_cell_magic
    def taskflood(self, line: str, cell: str | None = None) -> ResultSet | None:
        """Flood an ipyparallel cluster with tiny tasks: sent and round-trip time, tasks/s.

        Starts a local cluster (kept for the next call, resized to ``--engines``) unless
        ``--profile``, ``--cluster-id`` or ``--url-file`` names a running one.
        ``%taskflood --stop`` stops the cluster it started. As a cell magic, the cell
        is the task: the names it reads are sent to the engines once, before timing,
        and the result adds each task's own run time and the overhead around it.
        """
        args = magic_arguments.parse_argstring(self.taskflood, line)
        from .parallel.flood import run_taskflood

        if args.stop:
            from .parallel import cluster

            print(cluster.stop())
            return None
        if cell is None:
            return self._run(args, FloodParams, run_taskflood)
        return self._run_task(args, cell, run_taskflood)

    def _run_task(self, args: Any, cell: str, run_taskflood: Any) -> ResultSet | None:
        _refuse_widget(args)
        if args.test is not None:
            msg = f"{TEST.option} does not apply to the cell form: the cell is the task"
            raise UsageError(msg)
        source = self.shell.transform_cell(cell)
        measure = partial(run_taskflood, task=source, namespace=self.shell.user_ns)
        try:
            return self._run(args, FloodParams, measure)
        except SyntaxError:
            self.shell.showsyntaxerror()  # the cell's; raised before anything starts
            return None
        except RuntimeError as exc:
            # Imported here: %load_ext should not pay for ipyparallel until it is used.
            from ipyparallel.error import RemoteError

            remote = exc.__cause__
            if not isinstance(remote, RemoteError):
                raise
            # The engine's own traceback of the user's task, once; the cluster is stopped.
            self.shell.showtraceback((type(remote), remote, remote.__traceback__))
            return None

    def _run(
        self,
        args: Any,
        params_class: type[BenchParams],
        measure: Callable[[BenchParams], ResultSet],
    ) -> Any:
        if args.widget:
            return self._panel(args, params_class)
        try:
            params = params_class(**self._values(params_class, args))
            check_output_path(args.svg)
            check_output_path(args.png)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        for caution in params.cautions():
            print(f"warning: {caution}", file=sys.stderr)
        result = self._measure(measure, params, quiet=args.quiet or self.quiet)
        self._show(result, args)
        if args.variable:
            self.shell.user_ns[args.variable] = result
        return result if args.output else None

    def _measure(
        self, measure: Callable[..., ResultSet], params: BenchParams, quiet: bool
    ) -> ResultSet:
        """Run with a progress line; a kernel interrupt keeps the whole rounds measured
        (the result's notes say so), as the panels' Stop does."""
        # In a kernel, one display updated in place; in a terminal, a \r line.
        writer = DisplayLine() if getattr(self.shell, "kernel", None) else stream_writer(sys.stdout)
        progress = None if quiet else ProgressLine(writer)
        try:
            return measure(params, progress=progress)
        except Interrupted as interrupt:
            if interrupt.result is None:
                raise
            return interrupt.result
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        finally:
            if progress is not None:
                progress.close()

    def _panel(self, args: Any, params_class: type[BenchParams]) -> Any:
        """The benchmark's panel, its controls set from the options given."""
        from .widgets import PANELS  # ipywidgets and altair only when a panel is asked for

        panel_class = PANELS[params_class.benchmark]  # type: ignore[attr-defined]
        try:
            panel = panel_class(**self._values(params_class, args))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if args.variable:
            self.shell.user_ns[args.variable] = panel
        return panel

    def _values(self, params_class: type[BenchParams], args: Any) -> dict[str, Any]:
        """The options on the line, over the ``%config ZmqBench`` defaults."""
        return {**configured(self, params_class), **given_options(params_class, vars(args))}

    def _show(self, result: ResultSet, args: Any) -> None:
        quiet = args.quiet or self.quiet
        if not quiet:
            print(result)
        show = self.chart and not args.no_chart
        if not result.rows or not (show or args.svg or args.png):
            return
        # Imported here: altair and vl-convert cost ~1 s to import, and -q --no-chart
        # runs should not pay it.
        from .charts import chart_bundle, default_chart, save_chart

        chart = default_chart(result.benchmark, result.df, result.distributions)
        for kind in ("svg", "png"):
            path = getattr(args, kind)
            if path:
                try:
                    saved = save_chart(chart, path, kind)
                except OSError as exc:
                    raise UsageError(f"could not save the chart: {exc}") from None
                if not quiet:
                    print(f"chart saved to {saved}")
        if not show:
            return
        if getattr(self.shell, "kernel", None) is None:
            # A terminal draws no chart: say how to get one instead of an object's repr.
            if not (args.svg or args.png):
                print("(no chart in a terminal: add --svg PATH or --png PATH to save it)")
            return
        data, metadata = chart_bundle(chart)
        display(data, metadata=metadata, raw=True)


# The name before %config existed; kept for code that registered the class itself.
ZmqBenchMagics = ZmqBench

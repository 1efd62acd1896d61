"""IPython magics: ``%zmqthr``, ``%zmqlat``, ``%taskflood``: thin adapters over the core.

Each is a few lines calling :meth:`ZmqBench._magic` with its kind's declaration; its
options (one per parameter), its help and whether it is a cell magic too come from that
declaration and the kind's module (:mod:`.kinds`), so a kind registered later gets a
magic the same way (:func:`magic_for`). They call the same functions as the Python
API and the CLI, and present the result as the CLI does (:mod:`.ui.present`): a
one-line summary per point unless ``-q``, the chart unless ``--no-chart`` (offline: a
live Vega view with a PNG and SVG beside it), ``--svg`` / ``--png PATH`` saved; ``-v
NAME`` stores the result, ``-o`` returns it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from types import MethodType
from typing import TYPE_CHECKING, Any

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display

from .method.schedule import Interrupted
from .parallel.engines.reach import NoAnswer
from .params import FLOOD, KINDS, LATENCY, THROUGHPUT, BenchParams
from .params.declare import RunSettings
from .params.kernel_messages import KERNEL_MESSAGES
from .params.kinds import Kind
from .results import ResultSet
from .results.words.text import fit
from .sockets.payload import UserCodeFailed
from .ui.config import BenchDefaults, configured
from .ui.options import MAGIC_OUTPUT_OPTIONS, check_output_path, given_options, param_options
from .ui.present import Output, present
from .ui.progress import DisplayLine, ProgressLine, stream_writer

if TYPE_CHECKING:  # altair's, imported where a chart is drawn
    from .charts.render import MimeBundle


def _options(kind: Kind) -> Callable[[Callable[..., Any]], Any]:
    """``kind``'s magic's help and options: one per parameter, then the output options,
    and ``--stop`` where the kind keeps something between runs (magic_arguments applies
    the innermost decorator last, so they are added in reverse)."""

    def decorate(func: Callable[..., Any]) -> Any:
        func.__doc__ = kind.magic_help
        if kind.keeps:
            stop = f"stop {kind.keeps} (and measure nothing)"
            func = magic_arguments.argument("--stop", action="store_true", help=stop)(func)
        for flags, kwargs in reversed([*param_options(kind.params), *MAGIC_OUTPUT_OPTIONS]):
            func = magic_arguments.argument(*flags, **kwargs)(func)
        return magic_arguments.magic_arguments()(func)

    return decorate


_NO_PANEL = "--widget is for the line magic: a panel measures what its controls show"


@magics_class
class ZmqBench(Magics, BenchDefaults):  # type: ignore[misc, valid-type]
    """ZeroMQ and ipyparallel benchmark magics. Load with ``%load_ext zmqbench_magic``.

    Configurable: ``%config ZmqBench.repeat = 10`` sets a default for every later run
    (an option on the line still wins), ``%config ZmqBench`` lists them all.
    """

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        if shell is not None:
            # What %config lists and updates: without this it would not know us.
            shell.configurables.append(self)
        for kind in KINDS.values():
            if kind.magic and kind.magic not in self.magics["line"]:
                self._add_magic(kind)

    # --- the magics: each its kind's --------------------------------------------------

    @line_cell_magic
    @_options(THROUGHPUT)
    def zmqthr(self, line: str, cell: str | None = None) -> ResultSet | None:
        return self._magic(THROUGHPUT, self.zmqthr, line, cell)

    @line_cell_magic
    @_options(LATENCY)
    def zmqlat(self, line: str, cell: str | None = None) -> ResultSet | None:
        return self._magic(LATENCY, self.zmqlat, line, cell)

    @line_cell_magic
    @_options(FLOOD)
    def taskflood(self, line: str, cell: str | None = None) -> ResultSet | None:
        return self._magic(FLOOD, self.taskflood, line, cell)

    @line_cell_magic
    @_options(KERNEL_MESSAGES)
    def kernelmsg(self, line: str, cell: str | None = None) -> ResultSet | None:
        return self._magic(KERNEL_MESSAGES, self.kernelmsg, line, cell)

    def _add_magic(self, kind: Kind) -> None:
        """A magic for a kind registered beyond the three above (a plug-in's)."""
        magic = MethodType(magic_for(kind), self)
        self.magics["line"][kind.magic] = magic
        if kind.module.cell is not None:
            self.magics["cell"][kind.magic] = magic

    @property
    def _ip(self) -> Any:
        """The shell the magics were registered with (always set once loaded)."""
        assert self.shell is not None, "load the magics with %load_ext zmqbench_magic"
        return self.shell

    def _magic(
        self, kind: Kind, magic: Callable[..., Any], line: str, cell: str | None
    ) -> ResultSet | None:
        """Any kind's magic: ``--stop``, a panel, or a run of the line's options (with
        the cell's message or task, in the cell form)."""
        module = kind.module
        args = magic_arguments.parse_argstring(magic, line)
        if getattr(args, "stop", False) and module.stop is not None:
            print("\n".join(fit([module.stop()])))
            return None
        # The options' text is parsed once, here, by the settings' own declarations.
        given = given_options(kind.params, vars(args))
        values = {**configured(self, kind.params), **given}
        if args.widget:
            if cell is not None:
                raise UsageError(_NO_PANEL)
            return self._panel(args, kind, values)
        try:
            params = kind.params(**values)
            check_output_path(args.svg, "svg")
            check_output_path(args.png, "png")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if cell is None:
            return self._run(args, params, module.run)
        return self._run_cell(kind, args, params, cell, given)

    def _run_cell(
        self, kind: Kind, args: Any, params: BenchParams, cell: str, given: RunSettings
    ) -> ResultSet | None:
        """The cell form: the cell gives the message or the task (the settings are
        checked first, so a bad option runs none of the user's code)."""
        module = kind.module
        assert module.cell is not None, f"%{kind.magic} has no cell form"
        try:
            measure = partial(module.run, **module.cell(self._ip, cell, given))
        except UserCodeFailed:
            return None  # the user's traceback is already shown, once
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        try:
            return self._run(args, params, measure)
        except SyntaxError:
            self._ip.showsyntaxerror()  # the cell's; raised before anything starts
        except RuntimeError as exc:
            # Imported here: %load_ext should not pay for ipyparallel until it is used.
            from .parallel.celltask import engine_traceback

            remote = engine_traceback(exc)
            if remote is None:
                raise
            # The engine's own traceback of the user's task, once; the cluster is stopped.
            self._ip.showtraceback((type(remote), remote, remote.__traceback__))
        return None

    def _run(self, args: Any, params: BenchParams, measure: Callable[..., ResultSet]) -> Any:
        for line in fit([f"warning: {caution}" for caution in params.cautions()]):
            print(line, file=sys.stderr)
        output = Output(
            args.quiet or self.quiet, self.chart and not args.no_chart, args.svg, args.png
        )
        result = self._measure(measure, params, output.quiet)
        in_kernel = getattr(self.shell, "kernel", None) is not None
        try:
            present(result, output, _draw if in_kernel else None)
        except OSError as exc:
            raise UsageError(f"could not save the chart: {exc}") from None
        if args.variable:
            self._ip.user_ns[args.variable] = result
        return result if args.output else None

    def _measure(
        self, measure: Callable[..., ResultSet], params: BenchParams, quiet: bool
    ) -> ResultSet:
        """Run with a progress line; a kernel interrupt keeps the whole rounds measured
        (the result's notes say so), as the panels' Stop does."""
        # In a kernel, one display updated in place; elsewhere, as its stream allows.
        writer = DisplayLine() if getattr(self.shell, "kernel", None) else stream_writer(sys.stdout)
        progress = None if quiet else ProgressLine(writer)
        try:
            return measure(params, progress=progress)
        except Interrupted as interrupt:
            if interrupt.result is None:
                raise
            return interrupt.result
        except (ValueError, NoAnswer) as exc:  # bad input, or a named engine that is not there
            raise UsageError(str(exc)) from None
        finally:
            if progress is not None:
                progress.close()

    def _panel(self, args: Any, kind: Kind, values: RunSettings) -> Any:
        """The benchmark's panel, its controls set from the options given."""
        # ipywidgets and altair are imported only when a panel is asked for.
        panel_of = kind.module.panel
        if panel_of is None:
            msg = f"%{kind.magic} has no panel"
            raise UsageError(msg)
        try:
            panel = panel_of()(**values)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if args.variable:
            self._ip.user_ns[args.variable] = panel
        return panel


def magic_for(kind: Kind) -> Callable[..., Any]:
    """The magic of a kind registered beyond the three above, as they are made."""

    def magic(self: ZmqBench, line: str, cell: str | None = None) -> ResultSet | None:
        return self._magic(kind, magic, line, cell)

    magic.__name__, magic.__qualname__ = kind.magic, f"ZmqBench.{kind.magic}"
    return _options(kind)(magic)


def _draw(data: MimeBundle, metadata: MimeBundle) -> None:
    display(data, metadata=metadata, raw=True)


# The name before %config existed; kept for code that registered the class itself.
ZmqBenchMagics = ZmqBench

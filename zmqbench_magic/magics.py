"""IPython magics: ``%zmqthr``, ``%zmqlat``, ``%taskflood``: thin adapters over the core.

One per benchmark kind, made from its record (``params.KINDS``): its name, its help,
an option per parameter, and its cell form (the record's ``cell``). They parse options
built from the parameter declarations, call the same functions as the Python API and
the CLI, and present the result as the CLI does (:mod:`.ui.present`): a one-line
summary per point unless ``-q``, the chart unless ``--no-chart`` (offline: a live Vega
view with a PNG and SVG beside it), ``--svg`` / ``--png PATH`` saved; ``-v NAME``
stores the result, ``-o`` returns it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.display import display

from .method.schedule import Interrupted
from .parallel.engines.reach import NoAnswer
from .params import KINDS, BenchParams
from .params.kinds import Kind
from .results import ResultSet
from .results.words.text import fit
from .sockets.payload import UserCodeFailed
from .ui.config import BenchDefaults, configured
from .ui.options import MAGIC_OUTPUT_OPTIONS, check_output_path, given_options, param_options
from .ui.present import Output, present
from .ui.progress import DisplayLine, ProgressLine, stream_writer


def _arguments(params: type[BenchParams]) -> Callable[[Callable[..., Any]], Any]:
    """One magic option per parameter, then the output options, in that order in the
    help (magic_arguments applies the innermost decorator last, so add in reverse)."""

    def decorate(func: Callable[..., Any]) -> Any:
        for flags, kwargs in reversed([*param_options(params), *MAGIC_OUTPUT_OPTIONS]):
            func = magic_arguments.argument(*flags, **kwargs)(func)
        return magic_arguments.magic_arguments()(func)

    return decorate


def _refuse(given: Any, option: str, why: str) -> None:
    """A cell form's refusal of an option that has no meaning there."""
    if given not in (None, False):
        msg = f"{option} {why}"
        raise UsageError(msg)


_NO_PANEL = "is for the line magic: a panel measures what its controls show"


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

    @property
    def _ip(self) -> Any:
        """The shell the magics were registered with (always set once loaded)."""
        assert self.shell is not None, "load the magics with %load_ext zmqbench_magic"
        return self.shell

    def _magic(self, kind: Kind, line: str, cell: str | None) -> ResultSet | None:
        """Any kind's magic: ``--stop``, the cell form, or a run of the line's options."""
        args = magic_arguments.parse_argstring(getattr(self, kind.magic), line)
        if getattr(args, "stop", False):
            print("\n".join(fit([kind.load("stop")()])))
            return None
        measure = kind.load("run")
        if cell is None:
            return self._run(args, kind.params, measure)
        _refuse(args.widget, "--widget", _NO_PANEL)
        try:
            given = given_options(kind.params, vars(args))
            measure = partial(measure, **kind.load("cell")(self._ip, cell, given))
        except UserCodeFailed:
            return None  # the user's traceback is already shown, once
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        try:
            return self._run(args, kind.params, measure)
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

    def _run(
        self, args: Any, params_class: type[BenchParams], measure: Callable[..., ResultSet]
    ) -> Any:
        values = {**configured(self, params_class), **given_options(params_class, vars(args))}
        if args.widget:
            return self._panel(args, params_class, values)
        try:
            params = params_class(**values)
            check_output_path(args.svg, "svg")
            check_output_path(args.png, "png")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        for caution in params.cautions():
            print(f"warning: {caution}", file=sys.stderr)
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

    def _panel(self, args: Any, params_class: type[BenchParams], values: dict[str, Any]) -> Any:
        """The benchmark's panel, its controls set from the options given."""
        # ipywidgets and altair are imported only when a panel is asked for.
        panel_class = KINDS[params_class.benchmark].load("panel")
        try:
            panel = panel_class(**values)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if args.variable:
            self._ip.user_ns[args.variable] = panel
        return panel


def _magic_for(kind: Kind) -> Callable[..., Any]:
    """``kind``'s magic, named and documented from its record, with an option per
    parameter (and ``--stop`` where the kind keeps something between runs)."""

    def magic(self: ZmqBench, line: str, cell: str | None = None) -> ResultSet | None:
        return self._magic(kind, line, cell)

    magic.__name__, magic.__qualname__ = kind.magic, f"ZmqBench.{kind.magic}"
    magic.__doc__ = kind.magic_help
    # A kind without a cell form is a line magic alone: %%name then says it is unknown.
    func = (line_cell_magic if kind.cell else line_magic)(magic)
    if kind.stop:
        stop = f"stop {kind.keeps} (and measure nothing)"
        func = magic_arguments.argument("--stop", action="store_true", help=stop)(func)
    return _arguments(kind.params)(func)


for _kind in KINDS.values():
    if _kind.magic:
        setattr(ZmqBench, _kind.magic, _magic_for(_kind))
magics_class(ZmqBench)  # after the magics above: it collects what they registered


def _draw(data: dict[str, Any], metadata: dict[str, Any]) -> None:
    display(data, metadata=metadata, raw=True)


# The name before %config existed; kept for code that registered the class itself.
ZmqBenchMagics = ZmqBench

"""What a benchmark kind is: its declaration (:class:`Kind`), what its module does
(:class:`KindModule`), and the registry both are found in (:data:`KINDS`).

A kind is declared here, in the base layer, beside its parameters and metrics: its
name, its settings class, what a sample counts, its metrics with their directions and
units. Every per-kind table (``params.METRICS``, the column titles, the CLI's
commands, the magics) is derived from the registered declarations, so a kind cannot
be half known.

What a kind *does* (measure, put a point in words, draw, show a panel, take a cell)
lives in one module of plain functions, ``zmqbench_magic/kinds/<name>.py``, which
imports what it needs inside each function. :func:`register` files that module under
its declaration; the layers below ask for a kind's behaviour through
:attr:`Kind.module` and never import the modules above them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..params.columns import Metadata, Row
from ..params.declare import RunSettings
from .declare import BenchParams, Metric


@dataclass(frozen=True)
class Kind:
    """One benchmark kind's declaration: its name, its settings and its metrics."""

    # The CLI's command, a result's ``benchmark`` value and a saved file's key: "thr".
    name: str
    title: str  # "PUSH/PULL throughput": what the CLI's help says it measures
    params: type[BenchParams]
    counted: str  # what one sample counts, plural: "messages"
    # A summary's columns of ``where`` that are counts, read right-aligned.
    counts_at: tuple[int, ...] = ()
    # Its loop runs in the worker process too, in this far-end role: "sink".
    far_end: str = ""
    # The point's figures over every round trip of all its samples (latency's
    # percentiles), beside the samples' own metrics: a summary computes these pooled.
    pooled_metrics: tuple[Metric, ...] = ()
    # The metric whose Python/native ratio is its "Python tax" (a lower-is-better one
    # is inverted): "" where it has no native loop.
    tax_metric: str = ""
    # Run metadata that files saved before it was recorded lack, as they ran.
    old_files: Metadata = field(default_factory=dict)
    # What its module's ``stop`` stops, in words ("the cluster this extension
    # started"); "" where it keeps nothing between runs.
    keeps: str = ""
    # Its IPython magic (a cell magic too where its module has ``cell``): the name, and
    # its ``%name?`` help.
    magic: str = ""
    magic_help: str = ""

    @property
    def metrics(self) -> tuple[Metric, ...]:
        """The metrics of each sample: the DataFrame's columns, compared and charted."""
        return self.params.metrics

    @property
    def headline(self) -> Metric:
        return self.params.metrics[0]

    @property
    def pooled(self) -> bool:
        """Its summary's percentiles are pooled over every round trip of a point."""
        return bool(self.pooled_metrics)

    @property
    def module(self) -> KindModule:
        """What this kind does: the module registered with it."""
        return _MODULES[self.name]


class KindModule(Protocol):
    """What a kind's module defines, as plain functions (``kinds/thr.py``).

    ``advice``, ``cell``, ``stop`` and ``panel`` may be ``None`` where the kind has
    none: no advice, no cell form, nothing kept between runs, no panel.
    """

    KIND: Kind

    def run(self, params: Any, progress: Any = None, **kwargs: Any) -> Any:
        """Measure: ``run(params, progress=...) -> ResultSet``."""

    def where(self, row: Row) -> list[str]:
        """A summary row's names (its point), as columns: ``["tcp", "1k B", "copy", ""]``."""

    def figures(self, row: Row) -> str:
        """A summary row's figures in words."""

    def chart(self, df: Any, distributions: Any = ()) -> Any:
        """Its default altair chart of a tidy frame."""

    advice: Callable[[Any], list[str]] | None
    # The cell form: cell(shell, source, given) -> keyword arguments the cell adds to
    # ``run`` (a ValueError names an option that has no meaning there).
    cell: Callable[[Any, str, RunSettings], RunSettings] | None
    stop: Callable[[], str] | None
    panel: Callable[[], type] | None  # its ipywidgets panel class, imported on call


# Every registered kind, by name: its declaration, and (below) its module.
KINDS: dict[str, Kind] = {}
_MODULES: dict[str, KindModule] = {}


def register(module: KindModule) -> Kind:
    """File ``module`` under its declaration ``module.KIND``: the one step that makes
    a kind a command, a magic, a panel and a result every layer reads."""
    kind = module.KIND
    if kind.params.benchmark != kind.name:
        msg = f"{kind.name!r} declares settings of {kind.params.benchmark!r}"
        raise ValueError(msg)
    KINDS[kind.name], _MODULES[kind.name] = kind, module
    return kind


def unregister(name: str) -> None:
    """Forget a kind registered for a while (a test's own kind)."""
    del KINDS[name], _MODULES[name]


class Derived(Mapping[str, Any]):
    """A table derived from the registered kinds, made again whenever they change, so
    a kind registered later (a test's, or a plug-in's) is in it too."""

    def __init__(self, derive: Callable[[], dict[str, Any]]) -> None:
        self._from = derive
        self._made: tuple[tuple[int, ...], dict[str, Any]] = ((), {})

    def _derive(self) -> dict[str, Any]:
        registered = tuple(id(kind) for kind in KINDS.values())
        if self._made[0] != registered:
            self._made = (registered, self._from())
        return self._made[1]

    def __getitem__(self, name: str) -> Any:
        return self._derive()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._derive())

    def __len__(self) -> int:
        return len(self._derive())

    def __repr__(self) -> str:
        return repr(self._derive())

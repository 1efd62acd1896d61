"""What a benchmark kind is: one record per kind (throughput, latency, task flood), each
declared beside its parameters and registered once in :data:`zmqbench_magic.params.KINDS`.

Everything that differs between kinds is read from its record, so no code branches on a
kind's name: the CLI's commands, the panels, the far end's roles, the summary's words
and the default chart all iterate over the records or look one up by name.

The record refers to what the upper layers do for a kind (measure it, draw it, show its
panel) as ``"module:name"``, resolved only when an adapter asks (:meth:`Kind.load`), as
Python's entry points do: this base layer stays free of pyzmq's loops, pandas, altair
and ipywidgets, and a new kind is its own modules plus one line in the registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .declare import BenchParams, Metric


@dataclass(frozen=True)
class Kind:
    """One benchmark kind: its name, its settings, and where each layer's part of it is."""

    # The CLI's command, a result's ``benchmark`` value and a saved file's key: "thr".
    name: str
    title: str  # "PUSH/PULL throughput": what the CLI's help says it measures
    params: type[BenchParams]
    counted: str  # what one sample counts, plural: "messages"
    # "module:name" of what the layers above do for it:
    run: str  # measures it: run(params, progress=..., **kwargs) -> ResultSet
    where: str  # a summary point's names, as columns: where(point) -> list[str]
    figures: str  # a summary point's figures in words: figures(point) -> str
    chart: str  # its default chart: chart(df, distributions) -> altair chart
    panel: str  # its ipywidgets panel class
    # A summary's columns of ``where`` that are counts, read right-aligned.
    counts_at: tuple[int, ...] = ()
    # "module:name": what a summary's figures leave unsaid, notes(points) -> list[str].
    notes: str = ""
    # Its loop runs in the worker process too (the far end's role there): "sink".
    far_end: str = ""
    sample: str = ""  # "module:name" of that loop's one sample, for the worker
    # Its percentiles are pooled over every round trip of a point, not of samples'.
    pooled: bool = False
    # The metric whose Python/native ratio is its "Python tax" (a lower-is-better one
    # is inverted): "" where it has no native loop.
    tax_metric: str = ""
    # Run metadata that files saved before it was recorded lack, as they ran.
    old_files: Mapping[str, str] = field(default_factory=dict)
    # "module:name": what a result advises, advice(result) -> list[str].
    advice: str = ""
    # "module:name" that stops what the kind keeps between runs (a flood's cluster):
    # the CLI calls it after a one-shot run, ``%magic --stop`` when asked.
    stop: str = ""
    keeps: str = ""  # what ``stop`` stops, in words: "the cluster this extension started"
    # Its IPython magic (a cell magic too where it has a cell form): the name, and its
    # ``%name?`` help.
    magic: str = ""
    magic_help: str = ""
    # "module:name": the cell form, cell(shell, source, given) -> the keyword arguments
    # the cell adds to ``run`` (a ValueError names an option that has no meaning there).
    cell: str = ""

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return self.params.metrics

    @property
    def headline(self) -> Metric:
        return self.params.metrics[0]

    def load(self, hook: str) -> Any:
        """The function or class a hook names, imported now: ``kind.load("run")``."""
        reference = getattr(self, hook)
        if not reference:
            msg = f"the {self.name} benchmark has no {hook}"
            raise LookupError(msg)
        module, _, name = reference.partition(":")
        return getattr(importlib.import_module(module), name)

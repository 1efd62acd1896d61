"""Reference tables generated from the package's declarations, never typed:

    ```{zmqbench-params} thr
    ```
    ```{zmqbench-columns} lat
    ```
    ```{zmqbench-summary-columns}
    ```

Each parameter's option, default, allowed range and help come from its ``Param``; each
column's meaning from its ``Param``, ``Metric`` or ``Column``.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from zmqbench_magic.params import (
    BENCHMARKS,
    FLOOD_METRICS,
    LAT_METRICS,
    LAT_POOLED,
    THR_METRICS,
    Param,
)
from zmqbench_magic.params.columns import SAMPLE_COLUMNS, SUMMARY_COLUMNS

METRICS = {"thr": THR_METRICS, "lat": LAT_METRICS, "flood": FLOOD_METRICS}


def _cell(text: str, literal: bool = False) -> nodes.entry:
    inline = nodes.literal(text=text) if literal else nodes.Text(text)
    return nodes.entry("", nodes.paragraph("", "", inline))


def _table(header: list[str], rows: list[list[nodes.entry]], widths: list[int]) -> nodes.table:
    group = nodes.tgroup(cols=len(header))
    group += [nodes.colspec(colwidth=width) for width in widths]
    head = nodes.thead("", nodes.row("", *(_cell(title) for title in header)))
    body = nodes.tbody("", *(nodes.row("", *cells) for cells in rows))
    group += [head, body]
    return nodes.table("", group, classes=["zmqbench-reference"])


def _default(param: Param) -> str:
    if param.default in ("", None):
        return "(none)"
    return param.label(param.default) + (f" {param.unit}" if param.unit == "s" else "")


class ParamsTable(SphinxDirective):
    """Every option of one benchmark: ``--name`` (and its short form), default, range."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        rows = []
        for param in BENCHMARKS[self.arguments[0]].fields():
            option = param.option + (f", -{param.short}" if param.short else "")
            rows.append(
                [
                    _cell(option, literal=True),
                    _cell(_default(param)),
                    _cell(param.allowed() + ("; several values sweep" if param.sweep else "")),
                    _cell(param.help),
                ]
            )
        return [_table(["option", "default", "allowed", "meaning"], rows, [18, 12, 25, 45])]


class ColumnsTable(SphinxDirective):
    """Every column of one benchmark's rows (``r.df``): parameters, metrics, bookkeeping."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        benchmark = self.arguments[0]
        rows = [
            [_cell(p.name, literal=True), _cell("setting"), _cell(p.axis_title), _cell(p.help)]
            for p in BENCHMARKS[benchmark].fields()
            if p.sweep
        ]
        rows += [
            [
                _cell(m.name, literal=True),
                _cell("measured"),
                _cell(m.axis_title),
                _cell(m.help + (f" ({m.better} is better)" if m.better else "")),
            ]
            for m in METRICS[benchmark]
        ]
        rows += [
            [_cell(c.name, literal=True), _cell("record"), _cell(""), _cell(c.help)]
            for c in (*SAMPLE_COLUMNS, *BENCHMARKS[benchmark].columns)
        ]
        return [_table(["column", "kind", "title", "meaning"], rows, [20, 10, 22, 48])]


class SummaryColumnsTable(SphinxDirective):
    """What ``r.summary()`` adds to the medians, per point."""

    def run(self) -> list[nodes.Node]:
        rows = [[_cell(c.name, literal=True), _cell(c.help)] for c in SUMMARY_COLUMNS]
        rows += [[_cell(m.name, literal=True), _cell(f"latency: {m.help}")] for m in LAT_POOLED]
        return [_table(["column", "meaning"], rows, [25, 75])]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("zmqbench-params", ParamsTable)
    app.add_directive("zmqbench-columns", ColumnsTable)
    app.add_directive("zmqbench-summary-columns", SummaryColumnsTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""What a finished run shows and saves, the same from a magic and from the shell: the
summary (unless quiet), the files asked for, and the chart: drawn in a kernel, saved
where asked, and where neither, one line saying how to get it."""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..results import ResultSet

if TYPE_CHECKING:  # altair's, imported where a chart is drawn
    from ..charts.render import MimeBundle

NO_CHART_HERE = "(no chart in a terminal: add --svg PATH or --png PATH to save it)"


@dataclass(frozen=True)
class Output:
    """How a run is presented: the output options of the magics and the CLI."""

    quiet: bool = False
    chart: bool = True  # show the chart where one can be drawn
    svg: str | None = None
    png: str | None = None
    json: str | None = None
    csv: str | None = None
    markdown: bool = False  # the summary as Markdown (a pull request's comment)
    # A --json or --csv file that exists: add this run to it, or overwrite it (the CLI
    # refuses both unset before the run).
    append: bool = False
    replace: bool = False

    @property
    def files(self) -> tuple[str | None, ...]:
        return self.json, self.csv, self.svg, self.png


def present(
    result: ResultSet, output: Output, draw: Callable[[MimeBundle, MimeBundle], None] | None
) -> None:
    """Print, save and show ``result``. ``draw(data, metadata)`` shows a chart's display
    bundle (a kernel's ``display``); None where nothing can be drawn (a terminal)."""
    if not output.quiet:
        if output.markdown:
            from ..results.words.markdown import result_markdown

            print(result_markdown(result))
        else:
            print(result)
    if output.json:
        result.save(output.json, append=output.append, replace=output.replace)
    if output.csv:
        save_csv(result, output.csv, append=output.append)
    wanted = output.svg or output.png or (output.chart and draw is not None)
    if not result.rows or not wanted:
        if result.rows and output.chart and not output.quiet:
            print(NO_CHART_HERE, file=sys.stderr)
        return
    # Imported here: altair and vl-convert cost about a second to import, which runs
    # that draw nothing should not pay.
    from ..charts import default_chart

    show(default_chart(result.benchmark, result.df, result.distributions), output, draw)


def save_csv(result: ResultSet, path: str, append: bool = False) -> Path:
    """One row per sample; with ``append``, after the rows the file already holds (with
    their header, when it is this result's; else under the union of both headers)."""
    target = Path(path)
    if not (append and target.exists()):
        return result.to_csv(target)
    import pandas as pd

    with target.open(newline="") as file:
        header = next(csv.reader(file), [])
    new = result.df
    if header == list(new.columns):
        new.to_csv(target, mode="a", header=False, index=False)
    else:
        pd.concat([pd.read_csv(target), new], ignore_index=True).to_csv(target, index=False)
    return target


def show(chart: Any, output: Output, draw: Callable[..., None] | None) -> None:
    """Save ``chart`` where ``output`` asks, and draw it when it can be drawn."""
    from ..charts import chart_bundle, save_chart

    for kind in ("svg", "png"):
        path = getattr(output, kind)
        if path:
            # A chart is drawn from the run, never data of its own: one that exists is
            # drawn again, and the line says so.
            replaced = " (it replaced the one there)" if Path(path).exists() else ""
            saved = save_chart(chart, path, kind)
            if not output.quiet:
                # Beside Markdown, on stderr: what stdout carries is pasted as it is.
                where = sys.stderr if output.markdown else sys.stdout
                print(f"chart saved to {saved}{replaced}", file=where)
    if output.chart and draw is not None:
        draw(*chart_bundle(chart))


__all__ = ["NO_CHART_HERE", "Output", "present", "save_csv", "show"]

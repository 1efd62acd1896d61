"""What a live, offline chart costs, per kernel and per saved notebook: the three ways
a chart can be interactive in JupyterLab with no network, measured on one chart.

- ``vega5 + png + svg`` (what the project does): the chart compiled to a Vega 5 spec
  that JupyterLab and Notebook 7 draw with the vega they ship, with a PNG and an SVG
  beside it for every other viewer.
- ``JupyterChart offline``: altair's widget after ``JupyterChart.enable_offline()``,
  which bundles vega into the widget's JavaScript (``vl_convert.javascript_bundle``,
  the call altair makes) once per kernel and sends it with every chart; a saved
  notebook keeps it only in its widget state, and shows nothing without that state.
- ``html inline``: altair's ``html`` renderer with vega inlined in every output.

The chart is the throughput sweep's (7 sizes, both copy modes, with the speed-up
beside it), from a real quick run. Times are medians of ``--rounds`` in this process;
the first round of each includes what a fresh kernel pays once.

    python bench/bench_charts.py            # ~30 s on 2 cores
    python bench/bench_charts.py --quick    # checks the script, not the figures
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import altair as alt
import vl_convert
from report import report

from zmqbench_magic import run_throughput
from zmqbench_magic.charts import chart_bundle, default_chart

SIZES = [1, 16, 256, "1k", "16k", "64k", "1M"]


def timed(action) -> tuple[float, object]:
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


def jupyterchart_bundle() -> str:
    """What ``JupyterChart.enable_offline()`` builds: altair's widget code with vega
    bundled in (the same ``javascript_bundle`` call, without needing anywidget here)."""
    source = (Path(alt.__file__).parent / "jupyter" / "js" / "index.js").read_text()
    lines = source.split("\n")
    while lines and (not lines[0].strip() or lines[0].startswith(("import", "//"))):
        lines.pop(0)
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    return vl_convert.javascript_bundle("\n".join(lines), vl_version=f"{major}.{minor}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one round, small counts")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    result = run_throughput(
        size=SIZES, copy=[True, False], transport="inproc", count=200, repeat=3, warmup=0
    )
    chart = default_chart("thr", result.df)
    spec = chart.to_dict()
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    vl_version = f"v{major}_{minor}"

    ours = [timed(lambda: chart_bundle(chart)) for _ in range(rounds)]
    data, metadata = ours[-1][1]
    ours_bytes = len(json.dumps({"data": data, "metadata": metadata}))
    widget_kernel = [timed(jupyterchart_bundle) for _ in range(rounds)]
    widget_chart = [timed(lambda: json.dumps(spec)) for _ in range(rounds)]
    esm = widget_kernel[-1][1]
    widget_bytes = len(esm.encode()) + len(json.dumps(spec))
    inline = [
        timed(lambda: vl_convert.vegalite_to_html(spec, vl_version=vl_version, bundle=True))
        for _ in range(rounds)
    ]
    inline_bytes = len(inline[-1][1].encode())

    def med(samples) -> float:
        return statistics.median(s for s, _ in samples)

    print(
        f"one chart: throughput, {len(SIZES)} sizes x 2 copy modes + speed-up; "
        f"medians of {rounds} rounds"
    )
    print(
        f"{'way':<24}{'per kernel (s)':>16}{'per chart (s)':>15}{'saved per chart':>17}"
        "  viewable without a kernel"
    )
    rows = [
        (
            "vega5 + png + svg",
            0.0,
            med(ours),
            ours_bytes,
            "yes: Vega view (trusted or not), PNG/SVG elsewhere",
        ),
        (
            "JupyterChart offline",
            med(widget_kernel),
            med(widget_chart),
            widget_bytes,
            "only with saved widget state (off by default)",
        ),
        (
            "html inline",
            0.0,
            med(inline),
            inline_bytes,
            "trusted only (scripts); blank on a code host",
        ),
    ]
    for name, kernel, per_chart, size, viewable in rows:
        print(f"{name:<24}{kernel:>16.2f}{per_chart:>15.3f}{size / 1e3:>14.0f} kB  {viewable}")
    print(
        f"ratio saved bytes, JupyterChart / ours: {widget_bytes / ours_bytes:.1f}; "
        f"html inline / ours: {inline_bytes / ours_bytes:.1f}"
    )
    parts = ", ".join(
        f"{kind} {len(json.dumps(value)) / 1e3:.0f} kB" for kind, value in data.items()
    )
    print(f"ours, by part: {parts}")
    print(f"first chart_bundle of this process (imports, vl-convert start): {ours[0][0]:.2f} s")


if __name__ == "__main__":
    with report("charts"):
        main()

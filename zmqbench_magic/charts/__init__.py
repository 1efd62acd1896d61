"""Charts: pure functions from a tidy result DataFrame to an altair chart, and their
offline rendering to SVG.

The only layer besides the adapters that may import altair and vl-convert. It may
import :mod:`zmqbench_magic.results` and :mod:`zmqbench_magic.params` (axis titles
come from the declarations), never a measurement core or a front end.
"""

from __future__ import annotations

from .comparison import comparison_chart
from .default import default_chart
from .distribution import latency_cdf_chart
from .figures import (
    bandwidth_chart,
    clients_chart,
    cpu_chart,
    latency_chart,
    pattern_chart,
    speedup_chart,
    tax_chart,
    throughput_chart,
)
from .flood_charts import echo_chart, engines_chart, flood_chart, map_chart, memory_chart
from .history_chart import history_chart
from .offered_rate import load_chart
from .render import (
    VEGA_MIMETYPE,
    Figure,
    chart_bundle,
    chart_title,
    chart_to_png,
    chart_to_svg,
    chart_to_vega,
    save_chart,
)
from .stages import stages_chart

__all__ = [
    "VEGA_MIMETYPE",
    "Figure",
    "bandwidth_chart",
    "chart_bundle",
    "chart_title",
    "chart_to_png",
    "chart_to_svg",
    "chart_to_vega",
    "clients_chart",
    "comparison_chart",
    "cpu_chart",
    "default_chart",
    "echo_chart",
    "engines_chart",
    "flood_chart",
    "history_chart",
    "latency_cdf_chart",
    "latency_chart",
    "load_chart",
    "map_chart",
    "memory_chart",
    "pattern_chart",
    "save_chart",
    "speedup_chart",
    "stages_chart",
    "tax_chart",
    "throughput_chart",
]

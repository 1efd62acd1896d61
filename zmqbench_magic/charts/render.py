"""Charts to static SVG with no network access.

altair 6's default renderer loads vega from a CDN and JupyterLab 4.6 does not
render Vega-Lite 6 itself, so notebooks on an air-gapped cluster would show
nothing. vl-convert renders the spec to SVG in-process; external URLs are refused.
"""

from __future__ import annotations

import altair as alt
import vl_convert


def chart_to_svg(chart: alt.TopLevelMixin) -> str:
    """Render ``chart`` to an SVG document, offline."""
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    return vl_convert.vegalite_to_svg(
        chart.to_dict(), vl_version=f"v{major}_{minor}", allowed_base_urls=[]
    )

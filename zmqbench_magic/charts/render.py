"""Charts to pictures and to a live view, with no network access.

altair 6's default renderer loads vega from a CDN, and JupyterLab 4 / Notebook 7 do
not render Vega-Lite 6 themselves, so notebooks on an air-gapped cluster would show
nothing. Instead each chart goes out as one display bundle of:

- ``application/vnd.vega.v5+json``: the chart compiled (by vl-convert, in process)
  to a Vega 5 spec. JupyterLab and Notebook 7 draw it with the vega they ship,
  offline, trusted or not, with tooltips and legend selection: interactive when
  live and again when the saved notebook is reopened.
- ``image/png`` and ``image/svg+xml``: the same chart drawn by vl-convert, for
  whatever cannot run vega (nbval, nbconvert, a notebook viewer on a code host).
- ``text/plain``: one line naming the chart.

``bench/bench_charts.py`` measures this against altair's ``JupyterChart`` offline and
the inline-HTML renderer (the cost per kernel and per saved notebook).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import altair as alt
import vl_convert

VEGA_MIMETYPE = "application/vnd.vega.v5+json"
# A Vega-Lite or Vega spec as JSON: what altair writes and vl-convert reads and writes.
VegaSpec = dict[str, Any]
# A display bundle (mimetype -> data), or its metadata (mimetype -> options), as
# IPython's display takes them and a notebook's outputs keep them.
MimeBundle = dict[str, Any]
# The Vega-Lite compiler whose output the front ends' vega 5 runs.
_VEGA5_COMPILER = "5.21"
# Pixels per chart pixel in the PNG. 2 is sharper on high-density screens but
# quadruples the bytes every saved notebook carries per chart (~290 kB against ~70 kB).
PNG_SCALE = 1


# Room around every figure: the SVG's size comes from vl-convert's font metrics, and a
# browser's sans-serif can be a few pixels wider (a last tick label went past the
# canvas in chromium with vega's default 5 px).
_PADDING = {"left": 8, "top": 8, "right": 16, "bottom": 8}


def _spec(chart: alt.TopLevelMixin) -> VegaSpec:
    spec = chart.to_dict()
    spec.setdefault("padding", _PADDING)
    return spec


def _vl_version() -> str:
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    return f"v{major}_{minor}"


def chart_to_svg(chart: alt.TopLevelMixin) -> str:
    """Render ``chart`` to an SVG document, offline."""
    return vl_convert.vegalite_to_svg(_spec(chart), vl_version=_vl_version(), allowed_base_urls=[])


def chart_to_png(chart: alt.TopLevelMixin, scale: float = PNG_SCALE) -> bytes:
    """Render ``chart`` to PNG bytes, offline."""
    return vl_convert.vegalite_to_png(
        _spec(chart), vl_version=_vl_version(), scale=scale, allowed_base_urls=[]
    )


def chart_to_vega(chart: alt.TopLevelMixin) -> VegaSpec:
    """``chart`` compiled to a Vega 5 spec, the kind JupyterLab draws by itself."""
    spec = _spec(chart)
    spec.pop("$schema", None)
    return vl_convert.vegalite_to_vega(spec, vl_version=_VEGA5_COMPILER)


def chart_bundle(chart: alt.TopLevelMixin) -> tuple[MimeBundle, MimeBundle]:
    """A display bundle and its metadata: a live Vega view where the front end has
    vega, the same chart as PNG and SVG everywhere else, and its title as text."""
    svg = chart_to_svg(chart)
    width, height = _svg_size(svg)
    vega = chart_to_vega(chart)
    vega["$schema"] = "https://vega.github.io/schema/vega/v5.json"
    data = {
        VEGA_MIMETYPE: vega,
        "image/png": base64.b64encode(chart_to_png(chart)).decode("ascii"),
        "image/svg+xml": svg,
        "text/plain": f"<chart: {chart_title(chart)}>",
    }
    # The live view draws SVG (crisp, and its text can be read and measured) and
    # offers only the exports that work offline: no "open in the Vega editor".
    embed = {
        "renderer": "svg",
        "actions": {"export": True, "source": False, "compiled": False, "editor": False},
    }
    # The PNG has PNG_SCALE pixels per chart pixel: shown at the chart's own size.
    return data, {
        VEGA_MIMETYPE: {"embed_options": embed},
        "image/png": {"width": width, "height": height},
    }


class Figure:
    """A chart as every front end shows it: ``Figure(bandwidth_chart(r.df))`` as a
    cell's last line draws the live view with its PNG and SVG beside it (see the module
    docstring), where altair's own display would need a CDN."""

    def __init__(self, chart: alt.TopLevelMixin) -> None:
        self.chart = chart

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> tuple[MimeBundle, MimeBundle]:
        return chart_bundle(self.chart)

    def save(self, path: str | Path, kind: str | None = None) -> Path:
        """Write the chart as SVG or PNG (``kind``, or the file's suffix); a ``kind``
        the suffix contradicts is refused, as a PNG named ``.svg`` would mislead."""
        suffix = Path(path).suffix.lstrip(".").lower()
        kind = kind or suffix
        if kind not in ("svg", "png"):
            msg = f"a chart is saved as svg or png, got {kind or 'no suffix'!r} for {path}"
            raise ValueError(msg)
        if suffix != kind:
            msg = f"{path}: a {kind} chart's file name ends in .{kind}"
            raise ValueError(msg)
        return save_chart(self.chart, path, kind)


def save_chart(chart: alt.TopLevelMixin, path: str | Path, kind: str) -> Path:
    """Write ``chart`` to ``path`` as ``"svg"`` or ``"png"``."""
    path = Path(path)
    if kind == "svg":
        path.write_text(chart_to_svg(chart), encoding="utf-8")
    else:
        path.write_bytes(chart_to_png(chart))
    return path


def chart_title(chart: alt.TopLevelMixin) -> str:
    """The first title in ``chart`` (of its first part when it has several)."""
    spec = chart.to_dict()
    while True:
        title = spec.get("title")
        if title:
            return title["text"] if isinstance(title, dict) else str(title)
        parts = spec.get("hconcat") or spec.get("vconcat") or spec.get("layer")
        if not parts:
            return "chart"
        spec = parts[0]


def _svg_size(svg: str) -> tuple[float, float]:
    match = re.search(r'<svg[^>]*?width="([\d.]+)"[^>]*?height="([\d.]+)"', svg)
    if match is None:
        msg = "vl-convert returned an SVG without a size"
        raise RuntimeError(msg)
    return float(match.group(1)), float(match.group(2))

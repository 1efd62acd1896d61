"""Sphinx configuration: MyST pages, the example notebooks as pages (their saved
outputs, never re-run), the pydata theme, and nothing fetched from the network when
the site is built or read."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "zmqbench_magic"
author = "the zmqbench_magic authors"
copyright = "the zmqbench_magic authors"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "zmqbench_reference",
]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "benchmarks/*.md"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# The notebooks are shown as saved (their outputs come from the run that saved them).
nb_execution_mode = "off"
# myst-nb would load require.js and the widget manager from a CDN on pages with
# widget state; the site is read offline, so the panels' notebook shows their static
# outputs instead.
nb_ipywidgets_js: dict[str, dict[str, str]] = {}
# A chart is saved as a Vega 5 spec (for a live view in Jupyter), a PNG and an SVG.
# The site shows the SVG; myst-nb has no renderer for the spec and would warn about
# it on every chart (the only output type it does not know in these notebooks).
suppress_warnings = ["mystnb.unknown_mime_type"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True}

html_theme = "pydata_sphinx_theme"
html_title = "zmqbench_magic"
# Pages whose outputs are the magics' 100-column lines (the example notebooks and the
# page that annotates those lines) go without the side bars, and with a wider article
# (wide_pages.css), so a whole line shows in a 1,300 px window without scrolling
# sideways. tests/test_docs.py measures it in a browser.
# Named one by one: pydata-sphinx-theme warns when a page matches two wildcards.
WIDE_PAGES = [
    *(f"examples/{p.stem}" for p in sorted((HERE / "examples").glob("*.ipynb"))),
    "reading",
]
html_sidebars: dict[str, list[str]] = {page: [] for page in WIDE_PAGES}
html_static_path = ["_static"]
html_css_files = ["wide_pages.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "icon_links": [],
    "footer_start": ["copyright"],
    "footer_end": [],
    "secondary_sidebar_items": {
        "**": ["page-toc", "edit-this-page", "sourcelink"],
        **{page: [] for page in WIDE_PAGES},
    },
}
html_show_sourcelink = False
# Without a default, the theme logs "Got invalid theme mode" to the console on every
# page of a fresh browser.
html_context = {"default_mode": "auto"}

"""What a person sees: examples/04_dashboard.ipynb in JupyterLab 4 and Notebook 7, in
Debian's chromium driven by playwright, with every request that is not to 127.0.0.1
aborted. The notebook is run, the throughput panel's size slider is moved, Run is
pressed, and the chart in the page must be redrawn, in place, from the new data; then
Notebook 7 opens the same notebook on the same kernel, its panels live again, and Run
redraws there too.

Needs ``/usr/bin/chromium`` (``apt-get install -y chromium``; scripts/test.sh installs
it). Without it these tests fail rather than skip: the check is part of the suite.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from conftest import cluster_processes, wait_until
from playwright.sync_api import Locator, Page, sync_playwright

# JupyterLab and Notebook 7 in a real browser: minutes.
pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
NOTEBOOK = Path(__file__).parent.parent / "examples" / "04_dashboard.ipynb"
# The dashboard's panels alone, as a person would keep them in a notebook of their own:
# the example's set-up cell, the cells that make and run its three panels, and its
# last, which stops the cluster. Its checks, pictures and saved files are the examples'
# own test's (nbval), and would only lengthen this one.
PANELS = "dashboard-panels.ipynb"
# A folder to keep the pictures in (the documentation's come from here).
SCREENSHOT = os.environ.get("ZMQBENCH_SCREENSHOT")
# The front ends, both served by one Jupyter server (each is an extension of it): the
# settings of its app, and where a notebook opens.
FRONT_ENDS = {
    "jupyterlab": ("LabApp", "/lab/tree/{}?reset"),
    "notebook7": ("JupyterNotebookApp", "/notebooks/{}"),
}
_CURRENT = "window.jupyterapp.shell.currentWidget"
_KERNEL = f"{_CURRENT}.sessionContext.session.kernel"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(url: str, method: str = "GET") -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as r:
        return r.read()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Jupyter server on 127.0.0.1 with its own config, runtime and settings
    directories, serving both front ends and a copy of the notebooks (so the examples
    are never rewritten): its base URL."""
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing: apt-get install -y chromium"
    tmp_path = tmp_path_factory.mktemp("jupyter")
    for notebook in NOTEBOOK.parent.glob("*.ipynb"):
        shutil.copy(notebook, tmp_path)
    _write_panels_notebook(tmp_path / PANELS)
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # No "would you like news?" toast over the page.
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    ipc_dirs = set(Path(tempfile.gettempdir()).glob("zmqbench-*"))
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--no-browser",
        "--IdentityProvider.token=",
        f"--ServerApp.root_dir={tmp_path}",
        # Loopback only and no token: the test's own API calls need no XSRF cookie.
        "--ServerApp.disable_check_xsrf=True",
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",
    ]
    for app, _ in FRONT_ENDS.values():
        command += [
            f"--{app}.expose_app_in_browser=True",
            f"--{app}.user_settings_dir={tmp_path / 'settings'}",
            f"--{app}.workspaces_dir={tmp_path / 'workspaces'}",
        ]
    # Its own data directory too: the notebook-signature database there (what makes a
    # notebook trusted) starts empty, as on a machine that never ran the examples.
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
    }
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(base, process, tmp_path / "server.log")
        yield base
    finally:
        _stop_server(base, process)
        log.close()
    assert cluster_processes() == [], "the notebook's kernel left a cluster behind"
    left = set(Path(tempfile.gettempdir()).glob("zmqbench-*")) - ipc_dirs
    assert left == set(), "the notebook's kernel left ipc or profile directories behind"


def _write_panels_notebook(path: Path) -> None:
    dashboard = json.loads(NOTEBOOK.read_text())
    code = [cell for cell in dashboard["cells"] if cell["cell_type"] == "code"]
    kept = [code[0], *(c for c in code if re.search(r"Panel\(|\.run\(", "".join(c["source"])))]
    kept.append(code[-1])
    assert "--stop" in "".join(code[-1]["source"]), "the dashboard no longer ends with a stop"
    for cell in kept:
        cell["outputs"], cell["execution_count"] = [], None
    path.write_text(json.dumps({**dashboard, "cells": kept}))


def _wait_for_server(base: str, process: subprocess.Popen, log: Path) -> None:
    def answers() -> bool:
        assert process.poll() is None, f"the server exited:\n{log.read_text()[-3000:]}"
        try:
            _get(f"{base}/api/status")
        except OSError:
            return False
        return True

    wait_until(answers, 120, "the server answering", every=0.5)


def _stop_server(base: str, process: subprocess.Popen) -> None:
    """Shut the kernels down through the API (so their exit hooks run), then the server;
    anything of its process group still there after that is killed and reported."""
    try:
        for kernel in json.loads(_get(f"{base}/api/kernels")):
            _get(f"{base}/api/kernels/{kernel['id']}", method="DELETE")
    finally:
        server = psutil.Process(process.pid)
        family = [server, *server.children(recursive=True)]
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        _, alive = psutil.wait_procs([p for p in family if p.is_running()], timeout=10)
        for leftover in alive:
            leftover.kill()
        assert alive == [], f"processes outlived the server: {alive}"


def _local_only(route, refused: list[str]) -> None:
    """The network is cut off: nothing but the server on 127.0.0.1 answers."""
    if urllib.parse.urlsplit(route.request.url).hostname == "127.0.0.1":
        route.continue_()
    else:
        refused.append(route.request.url)
        route.abort()


@contextlib.contextmanager
def _offline_page(refused: list[str] | None = None) -> Iterator[Page]:
    """A chromium page in a laptop's window (JupyterLab's output area is then ~970 px
    wide) cut off from the network: only the server on 127.0.0.1 answers, and what
    else the page asked for goes to ``refused``; with no list, nothing answers."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            if refused is None:
                page.route("**/*", lambda route: route.abort())
            else:
                page.route("**/*", lambda route: _local_only(route, refused))
            # A theme's stylesheet that once failed to load from the busy local server
            # put JupyterLab's error dialog over the page, which took every click after:
            # the theme is not what these tests look at, so the dialog is closed, and said.
            theme_error = page.locator(".jp-Dialog", has_text="Error Loading Theme")
            page.add_locator_handler(theme_error, _close_theme_error)
            yield page
        finally:
            browser.close()


def _close_theme_error(dialog) -> None:
    print("closed JupyterLab's dialog:", dialog.inner_text().replace("\n", " "))
    dialog.get_by_role("button").last.click()


def _run_all(page: Page) -> None:
    page.wait_for_function(
        f"window.jupyterapp && {_CURRENT} && {_CURRENT}.sessionContext?.session?.kernel"
        f" && {_KERNEL}.status === 'idle'",
        timeout=120_000,
    )
    # Not awaited: it resolves only when every cell has run.
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells'); 0")
    page.wait_for_function(
        f"""{_CURRENT}.content.widgets.every(c => c.model.type !== 'code' ||
              c.model.executionCount !== null) && {_KERNEL}.status === 'idle'""",
        timeout=300_000,
        polling=500,
    )
    errors = page.evaluate(
        f"""{_CURRENT}.content.widgets.flatMap(c => c.model.type !== 'code' ? [] :
              c.model.sharedModel.outputs.filter(o => o.output_type === 'error')
               .map(o => o.ename + ': ' + o.evalue))"""
    )
    assert errors == [], f"the notebook raised: {errors}"


def _chart_svg(panel: Locator) -> str:
    """The chart the page shows in the panel's one output: a live Vega view, drawn by
    the front end's own vega as SVG (the PNG and SVG beside it are not used here)."""
    view = panel.locator(".widget-output .jp-RenderedVega5")
    assert view.count() == 1, "the chart is shown once, in place, as a live Vega view"
    svg = view.locator("svg.marks")
    svg.wait_for(timeout=30_000)
    return svg.evaluate("s => s.outerHTML")


def _widen_size_range(panel: Locator, steps: int) -> None:
    """Move the size slider's upper handle ``steps`` options right with the mouse: a
    click on the track moves the nearest handle there (one option is only ~7 px, less
    than a handle, hence several steps)."""
    track = panel.locator(".noUi-target").first
    handle = panel.locator(".noUi-handle-upper").first
    last = float(handle.get_attribute("aria-valuemax"))  # the index of the last option
    target = float(handle.get_attribute("aria-valuenow")) + steps
    box = track.bounding_box()
    track.click(position={"x": box["width"] * target / last, "y": box["height"] / 2})


_PANEL_TITLES = {
    "throughput": "ZeroMQ PUSH/PULL throughput",
    "latency": "ZeroMQ REQ/REP round trip",
    "flood": "ipyparallel task flood",
}


def _panel(page: Page, name: str) -> Locator:
    return page.locator(".zmqbench-panel", has_text=_PANEL_TITLES[name]).first


# The boxes of a panel's controls and of its chart's legends and text, each against the
# output area the panel sits in and (text) the chart's own canvas.
_BOXES_JS = """panel => {
  const area = panel.closest('.jp-OutputArea-output').getBoundingClientRect();
  const box = e => { const r = e.getBoundingClientRect();
                     return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const name = e => (e.textContent || e.className.baseVal || e.className || e.tagName)
                      .toString().slice(0, 40);
  const controls = [...panel.querySelectorAll(
      '.widget-inline-hbox, .widget-toggle-buttons, button, .widget-label')]
    .filter(e => e.offsetParent !== null).map(e => ({name: name(e), ...box(e)}));
  const svg = panel.querySelector('.jp-RenderedVega5 svg.marks');
  const legends = [...svg.querySelectorAll('g.role-legend')]
    .map(e => ({name: e.getAttribute('aria-label') || 'legend', ...box(e)}));
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent)
    .map(t => ({name: t.textContent, ...box(t)}));
  const labels = [...panel.querySelectorAll('.widget-label:not(.widget-readout)')]
    .filter(e => e.offsetParent !== null && e.textContent)
    .map(e => getComputedStyle(e).textAlign);
  return {area: box(panel.closest('.jp-OutputArea-output')), canvas: box(svg),
          controls, legends, texts, labels};
}"""


def _everything_inside_the_output_area(panel: Locator) -> None:
    """No control, legend or chart text lies outside the visible output area (nor any
    chart text outside the chart), and every control's label is aligned alike."""
    panel.scroll_into_view_if_needed()
    boxes = panel.evaluate(_BOXES_JS)
    area, canvas = boxes["area"], boxes["canvas"]
    for kind in ("controls", "legends", "texts"):
        for item in boxes[kind]:
            assert area["left"] - 1 <= item["left"] and item["right"] <= area["right"] + 1, (
                f"{kind[:-1]} {item['name']!r} sticks out of the output area: {item} vs {area}"
            )
    for text in boxes["texts"]:
        assert canvas["left"] - 1 <= text["left"] and text["right"] <= canvas["right"] + 1, text
        assert canvas["top"] - 1 <= text["top"] and text["bottom"] <= canvas["bottom"] + 1, text
    assert boxes["legends"], "the chart has no legend to check"
    assert set(boxes["labels"]) == {"right"}, f"labels aligned {set(boxes['labels'])}"


# What a person could not read: anything in a panel that scrolls sideways, text cut
# with an ellipsis, and the summary's lines (results, warnings, advice) folded away
# or outside the output area.
_HIDDEN_JS = """panel => {
  const area = panel.closest('.jp-OutputArea-output');
  const name = e => (e.textContent || e.className.baseVal || e.className || e.tagName)
                      .toString().trim().slice(0, 50);
  const all = [area, ...area.querySelectorAll('*')];
  const sideways = all.filter(e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)
                                   && e.scrollWidth > e.clientWidth + 1).map(name);
  const cut = all.filter(e => getComputedStyle(e).textOverflow === 'ellipsis'
                              && e.scrollWidth > e.clientWidth + 1).map(name);
  const box = area.getBoundingClientRect();
  const summary = [...panel.querySelectorAll('.widget-html pre')].filter(p => p.textContent);
  const outside = summary.filter(p => { const r = p.getBoundingClientRect();
      return r.left < box.left - 1 || r.right > box.right + 1
             || p.scrollWidth > p.clientWidth + 1 || p.scrollHeight > p.clientHeight + 1; })
    .map(name);
  const folded = p => { for (let e = p.parentElement; e && e !== area; e = e.parentElement) {
      if (getComputedStyle(e).overflowY !== 'visible' && e.scrollHeight > e.clientHeight + 1)
        return true; } return false; };
  const hidden = summary.filter(folded).map(name);
  return {sideways, cut, outside, hidden, summary: summary.map(p => p.innerText)};
}"""


def _nothing_hidden(panel: Locator, headline: str) -> None:
    """Nothing in the panel's output area scrolls sideways, no label is cut, and every
    line of the run's summary (results, warnings, advice) is shown whole."""
    panel.scroll_into_view_if_needed()
    # Every control shown: the ones under "more settings" too.
    more = panel.get_by_text("more settings").first
    more.click()
    panel.locator(".widget-text input").first.wait_for(state="visible", timeout=10_000)
    seen = panel.evaluate(_HIDDEN_JS)
    assert seen["sideways"] == [], f"scrolls sideways: {seen['sideways']}"
    assert seen["cut"] == [], f"cut with an ellipsis: {seen['cut']}"
    assert seen["outside"] == [] and seen["hidden"] == [], seen
    assert any(headline in text for text in seen["summary"]), seen["summary"]
    more.click()  # folded again, as the panel is drawn


def _a_hover_shows_the_exact_figures(page: Page, panel: Locator) -> None:
    """Hover a point: vega's tooltip gives its median, interval and samples."""
    panel.scroll_into_view_if_needed()
    view = panel.locator(".jp-RenderedVega5")
    if SCREENSHOT:  # the whole chart in the window, for the picture
        view.evaluate("e => e.scrollIntoView({block: 'center'})")
    point = view.locator('svg path[aria-roledescription="point"]').first
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    # As a hand moves: vega 5 shows a tooltip on moving over a mark, not on arriving.
    page.mouse.move(x - 20, y - 20)
    page.mouse.move(x, y, steps=5)
    tooltip = page.locator("#vg-tooltip-element")
    tooltip.wait_for(state="visible", timeout=10_000)
    text = tooltip.inner_text()
    for words in ("median", "interval from", "interval level", "samples", "message size"):
        assert words in text, f"{words!r} not in the tooltip: {text!r}"
    # The level the data give, never a typed-in 95%: the median's order-statistic
    # interval of 6 samples drops the lowest and highest (1 - 2/64 = 97%); of 12, a
    # point that pools two presses of Run, the 3rd to 10th (1 - 2 x 79/4096 = 96%).
    counted = re.search(r"samples\W+(\d+)", text)
    assert counted, f"no sample count in the tooltip: {text!r}"
    samples = int(counted.group(1))
    level = {6: "97%", 12: "96%"}[samples]
    assert re.search(rf"interval level\W+{level}", text) and "95%" not in text, text
    # Settings as the axis spells them (1k B, not 1024).
    assert re.search(r"message size \(B\)\W+\d+[kMG]? B\b", text), text
    if SCREENSHOT:
        page.screenshot(path=Path(SCREENSHOT) / "tooltip.png", clip=_around(view, tooltip))


def _around(*items: Locator, margin: float = 12) -> dict[str, float]:
    """The box that holds every item, with a margin."""
    boxes = [i.bounding_box() for i in items]
    left = max(0, min(b["x"] for b in boxes) - margin)
    top = max(0, min(b["y"] for b in boxes) - margin)
    right = max(b["x"] + b["width"] for b in boxes) + margin
    bottom = max(b["y"] + b["height"] for b in boxes) + margin
    return {"x": left, "y": top, "width": right - left, "height": bottom - top}


def _url(server: str, front_end: str, notebook: str) -> str:
    return server + FRONT_ENDS[front_end][1].format(notebook)


_HEADLINES = {"throughput": "msgs/s delivered", "latency": "µs", "flood": "tasks/s"}


def _run_redraws_in_place(page: Page, panel: Locator, before: str) -> str:
    """Press the panel's Run: the chart in the page is redrawn from the new data, in the
    output it had, and no output is added. The new chart's SVG."""
    # The panel's own cell: Notebook 7 renders other cells' outputs lazily as the page
    # scrolls, so a count over the whole page can grow with no output added.
    cell = panel.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' jp-Cell ')][1]")
    outputs = cell.locator(".jp-OutputArea-child").count()
    assert outputs >= 1, "the panel's cell was not found"
    panel.get_by_role("button", name="Run").click()
    after = wait_until(
        lambda: (svg := _chart_svg(panel)) != before and svg,
        120,
        "the chart redrawn",
        every=0.25,
    )
    assert cell.locator(".jp-OutputArea-child").count() == outputs, "no new output"
    return after


def _every_panel_fits_and_hides_nothing(page: Page, front_end: str) -> None:
    for name in ("throughput", "latency", "flood"):
        box = _panel(page, name)
        _everything_inside_the_output_area(box)
        _nothing_hidden(box, _HEADLINES[name])
        if SCREENSHOT:
            _picture(page, box, Path(SCREENSHOT) / f"panel-{name}-{front_end}.png")


# Whether the panel lies whole inside the area that scrolls it (the notebook's), with
# a margin; if not, it is centred there, and the next poll looks again (the front end
# lays itself out anew after the window is resized, in its own time).
_SHOWN_WHOLE_JS = """([panel, margin]) => {
  let area = panel.parentElement;
  while (area && !(['auto', 'scroll'].includes(getComputedStyle(area).overflowY)
                   && area.scrollHeight > area.clientHeight)) area = area.parentElement;
  if (!area) return true;
  const a = area.getBoundingClientRect(), r = panel.getBoundingClientRect();
  if (r.top - margin >= a.top && r.bottom + margin <= a.bottom) return true;
  panel.scrollIntoView({block: 'center'});
  return false;
}"""


def _picture(page: Page, panel: Locator, path: Path) -> None:
    """The whole panel with a margin, as the documentation shows it: the window made
    tall enough for all of it to lie inside the notebook's scrolled area (a taller
    panel would be cut by the toolbar and the status bar), then set back."""
    window = page.viewport_size
    assert window is not None
    margin = 6
    tall = int(panel.evaluate("e => e.getBoundingClientRect().height")) + 400
    page.set_viewport_size({"width": window["width"], "height": max(window["height"], tall)})
    try:
        page.wait_for_function(
            _SHOWN_WHOLE_JS, arg=[panel.element_handle(), margin], timeout=30_000, polling=250
        )
        box = panel.bounding_box()
        assert box is not None
        left, top = max(0, box["x"] - margin), max(0, box["y"] - margin)
        right = min(window["width"], box["x"] + box["width"] + margin)
        bottom = box["y"] + box["height"] + margin
        page.screenshot(
            path=path, clip={"x": left, "y": top, "width": right - left, "height": bottom - top}
        )
    finally:
        page.set_viewport_size(window)


def test_the_panel_redraws_its_chart_in_place_offline_in_both_front_ends(server):
    """JupyterLab runs the dashboard's panels. Notebook 7 then opens them, saved, on the
    kernel that ran them, as a person who opens a running notebook in the other front
    end: the panels are live again (their widgets restored from the kernel) and redraw
    there."""
    refused: list[str] = []
    with _offline_page(refused) as page:
        page.goto(_url(server, "jupyterlab", PANELS))
        _run_all(page)
        panel = page.locator(".widget-vbox", has_text="ZeroMQ PUSH/PULL throughput").first
        panel.scroll_into_view_if_needed()
        before = _chart_svg(panel)
        assert "ZeroMQ PUSH/PULL throughput, 3 sizes" in before  # 1k, 2k, 4k
        # As a person works: the file browser open beside.
        page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")
        page.locator(".jp-FileBrowser").wait_for(state="visible", timeout=30_000)
        readout = panel.locator(".zmqbench-readout").first
        assert readout.inner_text() == "1k to 4k"
        _widen_size_range(panel, steps=3)
        page.wait_for_function("r => r.innerText === '1k to 32k'", arg=readout.element_handle())
        after = _run_redraws_in_place(page, panel, before)
        # The new chart is drawn from the new data: 8k to 32k joined 1k, 2k and 4k.
        assert "ZeroMQ PUSH/PULL throughput, 6 sizes" in after
        _every_panel_fits_and_hides_nothing(page, "jupyterlab")
        _a_hover_shows_the_exact_figures(page, panel)
        # Saved with its outputs, the panels' among them, for the other front end.
        page.evaluate("window.jupyterapp.commands.execute('docmanager:save'); 0")
        page.wait_for_function(f"{_CURRENT}.context.model.dirty === false", timeout=30_000)

    with _offline_page(refused) as page:
        page.goto(_url(server, "notebook7", PANELS))
        panel = page.locator(".widget-vbox", has_text="ZeroMQ PUSH/PULL throughput").first
        panel.locator(".widget-output .jp-RenderedVega5 svg.marks").wait_for(timeout=120_000)
        page.wait_for_function(f"{_KERNEL}?.status === 'idle'", timeout=120_000)
        panel.scroll_into_view_if_needed()
        before = _chart_svg(panel)
        assert "ZeroMQ PUSH/PULL throughput, 6 sizes" in before, "the chart as JupyterLab left it"
        assert panel.locator(".zmqbench-readout").first.inner_text() == "1k to 32k"
        # Live again: the latency panel's Run (2 sizes: seconds, where the throughput
        # panel's 6 take four times as long) redraws its chart here too.
        latency = page.locator(".widget-vbox", has_text="ZeroMQ REQ/REP round trip").first
        latency.scroll_into_view_if_needed()
        before = _chart_svg(latency)
        after = _run_redraws_in_place(page, latency, before)
        assert "ZeroMQ REQ/REP round trip" in after
        _every_panel_fits_and_hides_nothing(page, "notebook7")
    # Whatever the page asked of the outside was refused, and the chart drew anyway.
    print("requests refused:", refused or "none")


@pytest.mark.parametrize("front_end", sorted(FRONT_ENDS))
def test_a_saved_notebook_shows_its_charts_untrusted_and_offline(server, front_end):
    """examples/01_throughput.ipynb as stored (never run here, so not trusted): its
    charts are live Vega views drawn by the front end's own vega, nothing fetched."""
    refused: list[str] = []
    with _offline_page(refused) as page:
        page.goto(_url(server, front_end, "01_throughput.ipynb"))
        page.wait_for_function(
            f"window.jupyterapp && {_CURRENT}?.context?.isReady"
            f" && {_CURRENT}.content.widgets.length > 3",
            timeout=120_000,
        )
        trusted = page.evaluate(
            f"{_CURRENT}.content.widgets.filter(c => c.model.type === 'code')"
            ".map(c => c.model.trusted)"
        )
        assert not any(trusted), "the stored notebook should open untrusted"
        chart = page.locator(".jp-RenderedVega5 svg.marks").first
        chart.wait_for(timeout=60_000)
        assert "ZeroMQ PUSH/PULL throughput" in chart.evaluate("s => s.textContent")
        if SCREENSHOT:
            chart.scroll_into_view_if_needed()
            page.locator(".jp-RenderedVega5").first.screenshot(
                path=Path(SCREENSHOT) / f"untrusted-{front_end}.png"
            )
    assert refused == [], f"the page asked the outside for {refused}"


def test_no_text_of_any_chart_leaves_its_canvas_in_a_real_browser():
    """Every chart kind over sweeps of 1, 2 and 7 values, as the SVG every viewer gets,
    drawn by chromium: each text's measured box lies inside the chart's canvas, and
    the canvas fits 900 px."""
    from chart_frames import CASES, svg_of

    from zmqbench_magic.charts.layout import MAX_WIDTH

    pictures = "".join(
        f'<div data-case="{kind} / {values}">{svg_of(kind, values)}</div>' for kind, values in CASES
    )
    with _offline_page() as page:
        page.set_content(f"<html><body style='margin:0'>{pictures}</body></html>")
        report = page.evaluate(
            """() => [...document.querySelectorAll('div[data-case]')].map(div => {
                 const svg = div.querySelector('svg').getBoundingClientRect();
                 const out = [...div.querySelectorAll('text')].filter(t => t.textContent)
                   .map(t => [t.textContent, t.getBoundingClientRect()])
                   .filter(([_, r]) => r.left < svg.left - 1 || r.right > svg.right + 1 ||
                                       r.top < svg.top - 1 || r.bottom > svg.bottom + 1)
                   .map(([text]) => text);
                 return {name: div.dataset.case, width: svg.width, outside: out,
                         texts: div.querySelectorAll('text').length};
               })"""
        )
    assert len(report) == len(CASES)
    for chart in report:
        assert chart["texts"] > 0, chart["name"]
        assert chart["width"] <= MAX_WIDTH, chart
        assert chart["outside"] == [], chart

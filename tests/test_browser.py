"""What a person sees: examples/04_dashboard.ipynb in JupyterLab 4 and Notebook 7, in
Debian's chromium driven by playwright, with every request that is not to 127.0.0.1
aborted. The notebook is run, the throughput panel's size slider is moved, Run is
pressed, and the chart in the page must be redrawn, in place, from the new data.

Needs ``/usr/bin/chromium`` (``apt-get install -y chromium``; scripts/test.sh installs
it). Without it these tests fail rather than skip: the check is part of the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import pytest
from conftest import cluster_processes
from playwright.sync_api import Locator, Page, sync_playwright

# JupyterLab and Notebook 7 in a real browser: minutes.
pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
NOTEBOOK = Path(__file__).parent.parent / "examples" / "04_dashboard.ipynb"
SCREENSHOT = os.environ.get("ZMQBENCH_SCREENSHOT")  # where to keep a picture of the panel
# The front ends: how to start the server, and where the notebook opens.
FRONT_ENDS = {
    "jupyterlab": ("jupyterlab", "--LabApp", "/lab/tree/04_dashboard.ipynb?reset"),
    "notebook7": ("notebook", "--JupyterNotebookApp", "/notebooks/04_dashboard.ipynb"),
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


@pytest.fixture(params=sorted(FRONT_ENDS))
def server(request, tmp_path):
    """A Jupyter server on 127.0.0.1 with its own config, runtime and settings
    directories, serving a copy of the notebook (so the example is never rewritten)."""
    module, app, path = FRONT_ENDS[request.param]
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing: apt-get install -y chromium"
    shutil.copy(NOTEBOOK, tmp_path)
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # No "would you like news?" toast over the page.
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    ipc_dirs = set(Path(tempfile.gettempdir()).glob("zmqbench-*"))
    port = _free_port()
    command = [
        sys.executable, "-m", module, "--allow-root", "--ip=127.0.0.1", f"--port={port}",
        "--no-browser", "--IdentityProvider.token=", f"--ServerApp.root_dir={tmp_path}",
        # Loopback only and no token: the test's own API calls need no XSRF cookie.
        "--ServerApp.disable_check_xsrf=True",
        f"{app}.expose_app_in_browser=True", f"{app}.user_settings_dir={tmp_path / 'settings'}",
        f"{app}.workspaces_dir={tmp_path / 'workspaces'}", "--LabApp.news_url=None",
    ]  # fmt: skip
    if module == "jupyterlab":
        command.append("--LabApp.extension_manager=readonly")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}  # fmt: skip
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(base, process, tmp_path / "server.log")
        yield base + path
    finally:
        _stop_server(base, process)
        log.close()
    assert cluster_processes() == [], "the notebook's kernel left a cluster behind"
    left = set(Path(tempfile.gettempdir()).glob("zmqbench-*")) - ipc_dirs
    assert left == set(), "the notebook's kernel left ipc or profile directories behind"


def _wait_for_server(base: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited:\n{log.read_text()[-3000:]}"
        try:
            _get(f"{base}/api/status")
            return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"the server did not answer within 120 s:\n{log.read_text()[-3000:]}")


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
    """The SVG the page shows in the panel's one output (rendered as an image)."""
    image = panel.locator(".widget-output img")
    assert image.count() == 1, "the chart is shown once, in place"
    assert image.evaluate("img => img.complete && img.naturalWidth > 0"), "the image did not draw"
    source = image.get_attribute("src")
    assert source.startswith("data:image/svg+xml")
    return urllib.parse.unquote(source.split(",", 1)[1])


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


def test_the_panel_redraws_its_chart_in_place_offline(server):
    refused: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.route("**/*", lambda route: _local_only(route, refused))
            page.goto(server)
            _run_all(page)
            panel = page.locator(".widget-vbox", has_text="ZeroMQ PUSH/PULL throughput").first
            panel.scroll_into_view_if_needed()
            before = _chart_svg(panel)
            assert "ZeroMQ PUSH/PULL throughput, 3 sizes" in before  # 1k, 2k, 4k
            readout = panel.locator(".widget-readout").first
            assert readout.inner_text() == "1k-4k"
            _widen_size_range(panel, steps=4)
            page.wait_for_function("r => r.innerText === '1k-64k'", arg=readout.element_handle())
            outputs = page.locator(".jp-OutputArea-child").count()
            panel.get_by_role("button", name="Run").click()
            deadline = time.monotonic() + 120
            while (after := _chart_svg(panel)) == before:
                assert time.monotonic() < deadline, "the chart was not redrawn within 120 s"
                time.sleep(0.25)
            # The new chart is drawn from the new data: 8k to 64k joined 1k, 2k and 4k.
            assert "ZeroMQ PUSH/PULL throughput, 7 sizes" in after
            assert page.locator(".jp-OutputArea-child").count() == outputs, "no new output"
            if SCREENSHOT:
                page.set_viewport_size({"width": 1800, "height": 1500})  # the whole panel
                panel.screenshot(path=SCREENSHOT)
        finally:
            browser.close()
    # Whatever the page asked of the outside was refused, and the chart drew anyway.
    print("requests refused:", refused or "none")

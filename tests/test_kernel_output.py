"""What a magic sends a real kernel's front end: one display of the chart as a Vega 5
view, a PNG and an SVG, with no object repr in the text. Starts a real ipykernel
through jupyter_client and reads its iopub messages."""

from __future__ import annotations

import base64

import pytest
from jupyter_client.manager import start_new_kernel

from zmqbench_magic.charts import VEGA_MIMETYPE


@pytest.fixture(scope="module")
def kernel():
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


def _run(client, code: str) -> list[dict]:
    """Run ``code``; every iopub message's content it produced, until idle."""
    messages = []
    reply = client.execute_interactive(
        code, timeout=120, output_hook=lambda m: messages.append(m), allow_stdin=False
    )
    assert reply["content"]["status"] == "ok", reply["content"]
    return messages


@pytest.mark.slow  # a real kernel
def test_a_magic_displays_one_live_chart_with_a_png_and_an_svg_beside_it(kernel):
    _run(kernel, "%load_ext zmqbench_magic")
    messages = _run(
        kernel,
        "%zmqthr -q -n 200 -r 2 --warmup 0 --size 100 1k --copy true false --transport inproc",
    )
    displays = [m["content"] for m in messages if m["msg_type"] == "display_data"]
    charts = [d for d in displays if VEGA_MIMETYPE in d["data"]]
    assert len(charts) == 1
    (chart,) = charts
    assert set(chart["data"]) == {VEGA_MIMETYPE, "image/png", "image/svg+xml", "text/plain"}
    assert base64.b64decode(chart["data"]["image/png"]).startswith(b"\x89PNG")
    assert "PUSH/PULL throughput, 2 sizes" in chart["data"]["image/svg+xml"]
    assert chart["metadata"]["image/png"]["width"] > 0
    streams = "".join(m["content"].get("text", "") for m in messages if m["msg_type"] == "stream")
    assert "object>" not in streams and "no chart in a terminal" not in streams

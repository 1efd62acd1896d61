"""The panels' pictures in the documentation, taken by the browser test.

Runs ``tests/test_browser.py``'s JupyterLab test (chromium at 1,400 x 900, the file
browser open, examples/04_dashboard.ipynb run, the size range moved, Run pressed)
with ``ZMQBENCH_SCREENSHOT`` set, copies the three panels and the hover it captured
to ``docs/images/``, and writes when, at which commit and on which machine to
``docs/benchmarks/screenshots.md``, which the panels page shows under them.

    python bench/panel_screenshots.py      # ~3 min on 2 cores
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from report import ROOT, report

PICTURES = {
    "panel-throughput-jupyterlab.png": "panel-throughput.png",
    "panel-latency-jupyterlab.png": "panel-latency.png",
    "panel-flood-jupyterlab.png": "panel-flood.png",
    "tooltip.png": "tooltip.png",
}


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="zmqbench-shots-") as folder:
        test = "tests/test_browser.py::test_the_panel_redraws_its_chart_in_place_offline"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{test}[jupyterlab]"],
            cwd=ROOT,
            env={**os.environ, "ZMQBENCH_SCREENSHOT": folder},
            check=False,
        )
        if done.returncode != 0:  # raised: the report writes nothing for a failed run
            msg = "the browser test failed: no picture was replaced"
            raise RuntimeError(msg)
        for taken, kept in PICTURES.items():
            shutil.copyfile(Path(folder) / taken, ROOT / "docs" / "images" / kept)
            print(f"docs/images/{kept}: {taken.removesuffix('.png')}")
    return 0


if __name__ == "__main__":
    with report("screenshots"):
        status = main()
    sys.exit(status)

"""The panels' pictures in the documentation, taken by the browser test.

Runs the browser test that drives the panels (``TEST``: chromium at 1,400 x 900,
examples/04_dashboard.ipynb run in JupyterLab with the file browser open, the size
range moved and Run pressed; then the same notebook opened in Notebook 7 and Run
pressed there) with ``ZMQBENCH_SCREENSHOT`` set. The test takes each panel whole,
with a margin (its window made tall enough for the panel while the picture is
taken), in both front ends, and a hover. This copies those the panels page shows
to ``docs/images/`` (none unless every one was taken) and writes when, at which
commit and on which machine to ``docs/benchmarks/screenshots.md``, which the panels
page shows under them.

    python bench/panel_screenshots.py      # ~4 min on 2 cores
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from report import ROOT, report

# The test that drives the panels in both front ends (tests/test_docs.py checks that
# it still exists under this name).
TEST = "tests/test_browser.py::test_the_panel_redraws_its_chart_in_place_offline_in_both_front_ends"
# What the panels page shows: the three panels in JupyterLab, the throughput panel
# again in Notebook 7 (after its Run there), and a hover.
PICTURES = [
    "panel-throughput-jupyterlab.png",
    "panel-latency-jupyterlab.png",
    "panel-flood-jupyterlab.png",
    "panel-throughput-notebook7.png",
    "tooltip.png",
]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="zmqbench-shots-") as folder:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST],
            cwd=ROOT,
            env={**os.environ, "ZMQBENCH_SCREENSHOT": folder},
            check=False,
        )
        missing = [name for name in PICTURES if not (Path(folder) / name).is_file()]
        if done.returncode != 0 or missing:  # raised: the report writes nothing then
            msg = f"the browser test failed or took no {missing}: no picture was replaced"
            raise RuntimeError(msg)
        for name in PICTURES:
            shutil.copyfile(Path(folder) / name, ROOT / "docs" / "images" / name)
            print(f"docs/images/{name}")
    return 0


if __name__ == "__main__":
    with report("screenshots"):
        status = main()
    sys.exit(status)

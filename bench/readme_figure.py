"""The README's picture: throughput and the zero-copy speed-up over tcp on 127.0.0.1,
measured here by the CLI's own path, saved as ``docs/images/throughput.svg``; the
summary it was drawn from goes to ``docs/benchmarks/figure.md`` with its provenance.

    python bench/readme_figure.py            # ~2 minutes on 2 cores
    python bench/readme_figure.py --quick    # checks the script; writes to a temp dir
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from report import ROOT, report

from zmqbench_magic import cli

# With the copy threshold at 0, every zero-copy send is one: at pyzmq's default (64 KiB)
# the zero-copy arm below 64 KiB would be a copy, and its speed-up 1 by construction.
SWEEP = [
    *("--size", "100", "1k", "8k", "32k", "64k", "256k", "1M"),
    *("--copy", "true", "false", "--copy-threshold", "0"),
]


def main(argv: list[str] | None = None) -> int:
    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    # From the checkout's root, so the summary names the picture by its place in the
    # project, not by this machine's folders.
    os.chdir(ROOT)
    folder = Path(tempfile.mkdtemp()) if quick else Path("docs") / "images"
    options = ["-r", "1", "--min-time", "0.01", "--size", "1k"] if quick else SWEEP
    return cli.main(["thr", *options, "--svg", str(folder / "throughput.svg")])


if __name__ == "__main__":
    with report("figure"):
        status = main()
    sys.exit(status)

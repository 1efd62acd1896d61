"""Parameters every benchmark has: message size, samples kept and discarded, timeout."""

from __future__ import annotations

from .declare import Param
from .units import GiB, KiB

# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
SIZE = Param(
    "size", 1 * KiB, "message size; k and M are powers of 1024 (100, 1k, 64k, 1M)",
    "message size (B)", "size", unit="B", low=1, high=1 * GiB, sweep=True, short="s",
)
REPEAT = Param(
    "repeat", 5, "samples kept per point (after warm-up)",
    "samples", "int", low=1, high=1000, short="r",
)
WARMUP = Param(
    "warmup", 1, "samples run and discarded before the kept ones (after calibration)",
    "warm-up samples", "int", low=0, high=100,
)
MIN_TIME = Param(
    "min_time", 0.2, "calibrated samples last at least this long",
    "minimum sample time (s)", "float", unit="s", low=0.001, high=60.0,
)
TIMEOUT = Param(
    "timeout", 10.0, "longest wait for any one receive, send, start or stop before giving up",
    "timeout (s)", "float", unit="s", low=0.1, high=3600.0,
)
# fmt: on

"""Parameters every benchmark has: message size, how it is sampled, timeout, label."""

from __future__ import annotations

from .declare import Param
from .units import GiB, KiB

# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
SIZE = Param(
    "size", 1 * KiB, "message size; k and M are powers of 1024 (100, 1k, 64k, 1M)",
    "message size", "size", unit="B", low=1, high=1 * GiB, sweep=True, short="s",
)
REPEAT = Param(
    "repeat", 10,
    "rounds of samples: each round takes one sample of every point, in a random "
    "order, on fresh far ends; 6 or more give a 95% interval for each median, and a "
    "comparison of two arms over 12 points needs 9 or more to call a difference",
    "rounds", "int", low=1, high=1000, short="r",
)
WARMUP = Param(
    "warmup", 1, "samples run and discarded before the kept ones (after calibration)",
    "warm-up samples", "int", low=0, high=100,
)
MIN_TIME = Param(
    "min_time", 0.1, "calibrated samples last at least this long",
    "minimum sample time", "float", unit="s", low=0.001, high=60.0,
)
PRECISION = Param(
    "precision", 0.0,
    "keep taking rounds of every point (past --repeat, within --max-time) until each "
    "point's 99% interval is within this of its median, e.g. 5% (checking at 99% keeps "
    "the reported 95% intervals honest after stopping on them); 0: off",
    "precision", "fraction", low=0.0, high=1.0,
)
MAX_TIME = Param(
    "max_time", 300.0,
    "with --precision or --until decided: stop adding rounds after this long",
    "maximum run time", "float", unit="s", low=1.0, high=86400.0,
)
UNTIL = Param(
    "until", "rounds",
    "rounds: take --repeat rounds, then compare; decided: compare after every round and "
    "go on (within --max-time, past --repeat) with the points not yet faster, slower or "
    "same, at most 5% false calls however often it looks; for a run that measures two "
    "arms in the same rounds (--copy true false, --loop python native, --transport tcp "
    "ipc, --python A B)",
    "rounds taken", "choice", choices=("rounds", "decided"),
    labels=("--repeat rounds", "until decided"),
)
LABEL = Param(
    "label", "",
    "a name for this run, kept in its rows' run column and used by compare; "
    "empty: an id from the benchmark and the time",
    "run label", "str",
)
SEED = Param(
    "seed", 0,
    "seed of the random order in which each round visits the points (so no arm is "
    "always measured first); kept in the result as order_seed, to repeat an order; "
    "0: a fresh seed each run",
    "order seed", "int", low=0, high=2**32 - 1,
)
TOLERANCE = Param(
    "tolerance", 0.01,
    "a comparison calls a point faster or slower only when its ratio lies beyond "
    "1 ± this, and same only when its whole interval lies within it",
    "tolerance", "fraction", low=0.0, high=0.5,
)
CPU = Param(
    "cpu", "",
    "pin the run's processes on this host to these CPUs (e.g. isolated ones): 2-3 "
    "every one; 0/1 the driver (a flood's client) on 0 and the far end (a flood's "
    "controller and engines) on 1; empty: wherever the scheduler puts them",
    "pinned to CPUs", "cpus",
)
HISTORY_ORDER = Param(
    "by", "date",
    "order a history's runs by their date, or by the version of this they ran with "
    "(27.10 after 27.9)",
    "run order", "choice",
    choices=("date", "python", "pyzmq", "libzmq", "ipyparallel", "zmqbench_magic"),
)
FAIL_ON = Param(
    "fail_on", (),
    "exit with status 1 when any point of the comparison is called this (after Holm's "
    "adjustment): slower, faster, any (slower or faster) or inconclusive; several may "
    "be given; none: always 0",
    "failing verdicts", "choice", choices=("slower", "faster", "any", "inconclusive"),
)
# A far end's start waits at least this long, whatever the timeout per message: a
# Python interpreter importing pyzmq on a busy machine takes seconds, and a far end
# that dies while starting is noticed at once anyway.
START_FLOOR_S = 10.0
TIMEOUT = Param(
    "timeout", 10.0,
    "longest wait for any one receive, send or stop before giving up (and for a far "
    f"end's start, at least {START_FLOOR_S:g} s)",
    "timeout", "float", unit="s", low=0.1, high=3600.0,
)
# fmt: on

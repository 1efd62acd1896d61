"""Synthetic runs with a known answer, for measuring the verdicts themselves: how often
a comparison calls a difference that is not there, and how often it finds one that is
(the tests check the rates; ``bench/bench_verdicts.py`` prints them).

The noise model of a paired run: each round moves both arms by a shared factor (the
machine's state in that round, ``ROUND_NOISE``), and each sample has ``OWN_NOISE`` of
its own, both log-normal; the two runs of an unpaired comparison share nothing. A
throughput sweep of copy against zero-copy at up to 12 sizes, 16 B to 32 MB.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .resultset import ResultSet

ROUND_NOISE, OWN_NOISE = 0.05, 0.02
SIZES = tuple(2**k for k in range(4, 28, 2))


def paired_sweep(
    rng: np.random.Generator, shift: float, rounds: int = 10, points: int = len(SIZES)
) -> pd.DataFrame:
    """One run's samples: copy, and zero-copy ``1 + shift`` times as fast, at ``points``
    sizes, measured in the same ``rounds``."""
    rows = []
    for size in SIZES[:points]:
        shared = rng.lognormal(0, ROUND_NOISE, rounds)
        for copy, factor in ((True, 1.0), (False, 1.0 + shift)):
            own = rng.lognormal(0, OWN_NOISE, rounds)
            rows += [
                {
                    "size": size,
                    "copy": copy,
                    "run": "r",
                    "sample": i,
                    "msgs_per_s": 1000 * factor * shared[i] * own[i],
                }
                for i in range(rounds)
            ]
    return pd.DataFrame(rows)


def paired_arms(
    rng: np.random.Generator,
    shift: float,
    rounds: int,
    own_noise: float = OWN_NOISE,
    tails: str = "normal",
) -> tuple[np.ndarray, np.ndarray]:
    """One point's two arms, ``rounds`` samples each, the candidate ``1 + shift`` times
    the baseline: each round's shared factor and each arm's own noise (log-normal; with
    ``tails="heavy"``, Student's t with 3 degrees of freedom scaled to the same spread,
    as a machine's occasional stall makes it)."""
    shared = rng.lognormal(0, ROUND_NOISE, rounds)

    def own() -> np.ndarray:
        if tails == "heavy":
            return np.exp(own_noise * rng.standard_t(3, rounds) / np.sqrt(3))
        return rng.lognormal(0, own_noise, rounds)

    return 1000 * shared * own(), 1000 * (1 + shift) * shared * own()


def unpaired_run(
    rng: np.random.Generator, factor: float = 1.0, n: int = 10, points: int = len(SIZES)
) -> ResultSet:
    """One run of its own, ``factor`` times a baseline's rate, ``n`` samples a point:
    one side of an unpaired comparison (``a.compare(b)``)."""
    rows = []
    for size in SIZES[:points]:
        values = 1000 * factor * rng.lognormal(0, np.hypot(ROUND_NOISE, OWN_NOISE), n)
        rows += [
            {
                "size": size,
                "copy": True,
                "transport": "tcp",
                "peer": "process",
                "copy_threshold": 65536,
                "sample": i,
                "msgs_per_s": v,
            }
            for i, v in enumerate(values)
        ]
    return ResultSet("thr", tuple(rows))


__all__ = ["OWN_NOISE", "ROUND_NOISE", "SIZES", "paired_arms", "paired_sweep", "unpaired_run"]

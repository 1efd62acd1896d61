"""A plan before a run taken ``--until decided``: how many rounds a difference of a
given size needs, at a tolerance, over a number of points, where the rounds' ratios
vary by a given noise (``zmqbench plan``).

The noise is that of one round's ratio of the two arms. Where it was not measured,
this host's noise floor (``zmqbench noise``) bounds it: a floor's ``within_run`` is
the widest spread of one arm's samples over a run, and a ratio of two such samples
varies by at most about √2 times that (less, as pairing cancels what the two arms
share in a round).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..statistics.sequential import fewest_rounds, plan
from ..storage.noise_floor import Floors

# The differences a plan gives rounds for, as fractions (1.0: twice as fast); 0: the
# two arms alike, decided same.
DIFFERENCES = (0.0, 0.02, 0.05, 0.10, 0.25, 1.0)


def noise_from_floor(floors: Floors) -> float | None:
    """The most a round's ratio varies by, from a stored noise floor's widest
    within-run spread (None where no floor is stored)."""
    spreads = [float(f["within_run"]) for f in floors.values()]
    return math.sqrt(2) * max(spreads) if spreads else None


def plan_lines(
    noise: float, tolerance: float, points: int, differences: Sequence[float] = DIFFERENCES
) -> list[str]:
    """The plan in words, one line per difference.

    >>> print("\\n".join(plan_lines(0.03, 0.01, 12, [0.05, 1.0])))
    rounds until decided, ±1.0% tolerance, 12 point(s), each round's ratio varying by 3.0%:
      +5%: about 15 rounds (faster or slower)
      +100%: about 5 rounds (faster or slower); no fewer than 5 over 12 point(s)
    """
    lines = [
        f"rounds until decided, ±{tolerance:.1%} tolerance, {points} point(s), each "
        f"round's ratio varying by {noise:.1%}:"
    ]
    fewest = fewest_rounds(points)
    for difference, rounds in plan(noise, tolerance, points, differences):
        name = "the same" if not difference else f"+{difference:.0%}"
        if rounds is None:
            lines.append(f"  {name}: not within 10,000 rounds (at the tolerance's edge)")
            continue
        what = "same" if difference <= tolerance else "faster or slower"
        line = f"  {name}: about {rounds:,} rounds ({what})"
        if rounds == fewest:
            line += f"; no fewer than {fewest} over {points} point(s)"
        lines.append(line)
    return lines


__all__ = ["DIFFERENCES", "noise_from_floor", "plan_lines"]

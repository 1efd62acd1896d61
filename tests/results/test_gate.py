"""The CI gate over a comparison's verdicts, on synthetic runs with a known answer: a
run compared with itself rarely fails ``--fail-on slower``, a slower one always does,
and each ``--fail-on`` value refuses what it names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from zmqbench_magic.results.statistics.gate import gate, gate_lines, refused_verdicts
from zmqbench_magic.results.synthetic import unpaired_run


def test_a_run_against_itself_fails_the_slower_gate_in_at_most_5_percent_of_pairs():
    """Holm's adjustment holds the chance of any false call over the 12 points at 5%;
    the gate refuses only calls, so its false failures are bounded alike (measured)."""
    rng = np.random.default_rng(7)
    failed = [
        bool(gate(unpaired_run(rng, 1.0).compare(unpaired_run(rng, 1.0)), ["slower"]))
        for _ in range(60)
    ]
    assert np.mean(failed) <= 0.05, np.mean(failed)


def test_a_20_percent_slower_run_fails_the_gate_at_every_point():
    rng = np.random.default_rng(8)
    table = unpaired_run(rng, 1.0, points=4).compare(unpaired_run(rng, 0.8, points=4))
    failed = gate(table, ["slower"])
    assert len(failed) == 4 and all(": slower, ratio 0." in line for line in failed)
    assert failed[0].startswith("size=16: ")  # the column telling the points apart
    assert gate(table, ["faster"]) == []
    assert len(gate(table, ["any"])) == 4


def _table(*verdicts: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "size": [2**i for i in range(len(verdicts))],
            "verdict": list(verdicts),
            "ratio": 1.0,
            "ci_low": 0.9,
            "ci_high": 1.1,
            "ci_level": 0.95,
        }
    )


@pytest.mark.parametrize(
    ("fail_on", "refused"),
    [
        (["slower"], 1),
        (["faster"], 1),
        (["any"], 2),
        (["inconclusive"], 1),
        (["slower", "inconclusive"], 2),
        ([], 0),
    ],
)
def test_each_value_refuses_what_it_names(fail_on, refused):
    table = _table("slower", "faster", "same", "inconclusive")
    assert len(gate(table, fail_on)) == refused


def test_an_empty_comparison_fails_any_gate_and_a_bad_value_is_named():
    assert gate(_table(), ["slower"]) == ["no point is in both results: nothing was compared"]
    with pytest.raises(ValueError, match="fail_on must be one of slower, faster, any, "):
        refused_verdicts(["slowr"])


def test_the_gate_says_passed_or_lists_what_failed_it():
    assert gate_lines([], ["slower"]) == ["gate --fail-on slower: passed"]
    lines = gate_lines(["size=1: slower, ratio 0.9"], ["slower", "any"])
    assert lines == [
        "gate --fail-on slower any: FAILED at 1 point(s)",
        "  size=1: slower, ratio 0.9",
    ]

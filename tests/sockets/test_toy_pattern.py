"""A topology added as one record, and nothing else: a DEALER dealing to N DEALERs,
which no module of the package names. --pattern takes it, its far ends start by their
role, every message is counted, and its rows, words and checks read the record."""

from __future__ import annotations

import pytest

from zmqbench_magic import run_throughput
from zmqbench_magic.params import PATTERN, ThroughputParams
from zmqbench_magic.params.patterns import Pattern, register_pattern, unregister_pattern

DEALERS = Pattern(
    "dealers",
    "this process's DEALER dealing its messages round-robin to N DEALERs",
    "receivers",
    "DEALER",
    "dealer",  # a ROUTER's receiver among the far ends' roles: a DEALER, as here
    "receiver {}",
    dealt=True,  # each message goes to one of the N: counted once in all
)


@pytest.fixture
def dealers() -> Pattern:
    register_pattern(DEALERS)
    yield DEALERS
    unregister_pattern(DEALERS.name)


def test_a_pattern_registered_as_a_record_alone_runs_end_to_end(dealers, no_leftovers):
    assert "dealers" in PATTERN.choices
    result = run_throughput(pattern="dealers", peers=[1, 2], size=100, count=2000, repeat=2)
    df = result.df
    assert set(df["pattern"]) == {"dealers"} and set(df["peers"]) == {1, 2}
    # Dealt, as the record says: every message reached one receiver, none was lost.
    assert (df["received"] == df["count"]).all() and (df["lost"] == 0).all()
    assert (df["slowest_peer_msgs_per_s"] <= df["fastest_peer_msgs_per_s"]).all()
    lines = str(result)
    assert "dealers 2 peers" in lines and "dealers 1 peer " in lines


def test_a_registered_pattern_is_checked_by_its_record_and_gone_once_removed(dealers):
    # Its record says it never publishes: --nodrop names the patterns that do.
    with pytest.raises(ValueError, match="only a publisher drops; add --pattern pubsub or proxy"):
        ThroughputParams(pattern="dealers", nodrop=True)
    unregister_pattern("dealers")
    try:
        with pytest.raises(ValueError, match="pattern must be one of pipeline, pubsub"):
            ThroughputParams(pattern="dealers")
    finally:
        register_pattern(DEALERS)  # for the fixture to remove
    with pytest.raises(ValueError, match="a pattern named dealers is registered already"):
        register_pattern(DEALERS)

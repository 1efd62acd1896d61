"""What a flood's rows contain is its test's record's word: the settings it alone reads
are its columns, the metrics it alone fills are filled, on the process pool and on a
real ipyparallel cluster, the cell form's included."""

from __future__ import annotations

import pandas as pd
import pytest

from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.parallel.flood import run_taskflood
from zmqbench_magic.params.flood_tests import CELL_TEST, FLOOD_TESTS, FloodTest

OWN_SETTINGS = {name for test in FLOOD_TESTS.values() for name in test.settings}
OWN_METRICS = {name for test in FLOOD_TESTS.values() for name in test.metrics}
# A small value of each setting some test alone reads.
SMALL = {"size": 1024, "duration": 0.001, "chunksize": 2}
QUICK = {"tasks": 8, "engines": 2, "repeat": 1, "warmup": 0}
CELL = "total = sum(range(100))"


def _run(test: FloodTest, backend: str) -> pd.DataFrame:
    settings = {name: SMALL[name] for name in test.settings}
    if test is CELL_TEST:
        return run_taskflood(task=CELL, backend=backend, **QUICK).df
    return run_taskflood(
        test=test.name, backend=backend, view=test.views[0], **settings, **QUICK
    ).df


def _as_the_record_says(df: pd.DataFrame, test: FloodTest) -> None:
    assert set(df["test"]) == {test.name}
    assert {name for name in OWN_SETTINGS if name in df} == set(test.settings)
    filled = {name for name in OWN_METRICS if name in df and df[name].notna().all()}
    assert filled == set(test.metrics)
    assert (df["tasks_per_s"] > 0).all() and (df["roundtrip_s"] >= df["sent_s"]).all()


@pytest.mark.parametrize(
    "test", [t for t in FLOOD_TESTS.values() if t.futures], ids=lambda t: t.name
)
def test_a_process_pool_flood_fills_what_its_tests_record_says(test):
    _as_the_record_says(_run(test, "processpool"), test)


@pytest.mark.slow  # a real cluster
def test_an_ipyparallel_flood_fills_what_its_tests_record_says():
    try:
        for test in FLOOD_TESTS.values():
            _as_the_record_says(_run(test, "ipyparallel"), test)
    finally:
        own_cluster.stop()

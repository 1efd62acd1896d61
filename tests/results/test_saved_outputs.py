"""What the package prints, writes and draws for real saved runs, byte for byte as
before the typed-point refactor.

The goldens in ``tests/data/saved_runs/outputs/`` are the outputs of the real runs saved
beside them (throughput with copy and zero-copy, as a sweep and until decided, two runs
of one sweep, latency, a pubsub pattern, a task flood on a local cluster): each run's
summary as printed and as CSV, its samples as CSV, the file it saves again, its
Markdown report, its default chart's Vega-Lite spec, ``zmqbench show``, the paired
verdicts, the flood's advice, and the comparisons and history of two saved runs
(:mod:`saved_outputs` renders them, each file in a fresh process). They were written
by the code as it was at 6880be0, before points became typed records and patterns
records: the refactor changed none of these bytes, and this test keeps it so.

When an output is meant to change, change it deliberately: make the change, run
``python -m tests.saved_outputs --write`` (the package on ``PYTHONPATH`` is the one
rendered), read ``git diff tests/data/saved_runs/outputs`` line by line, and commit the
goldens with the change that explains them. A new saved run is a ``--json`` file in
``tests/data/saved_runs/`` (its command in that folder's ``README.md``) and
``--write`` again.
"""

from __future__ import annotations

import pytest
from saved_outputs import GOLDEN_DIR, RUNS_DIR, diff, outputs

GOLDENS = sorted(path.name for path in GOLDEN_DIR.iterdir())


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    return outputs(RUNS_DIR)


@pytest.mark.parametrize("name", GOLDENS)
def test_an_output_is_its_golden_byte_for_byte(rendered: dict[str, str], name: str) -> None:
    golden = (GOLDEN_DIR / name).read_bytes()
    assert name in rendered, f"{name} is no longer rendered"
    if rendered[name].encode() != golden:
        changes = diff(name, golden.decode(), rendered[name])
        pytest.fail(f"{name} differs from its golden:\n{changes}")


def test_every_output_has_a_golden(rendered: dict[str, str]) -> None:
    assert sorted(rendered) == GOLDENS

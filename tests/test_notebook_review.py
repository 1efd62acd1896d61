"""The saved example notebooks, read as a reviewer reads them (tests/notebook_review.py):
no verdict printed twice that disagrees with itself or with its table, no crossover
that its verdicts do not imply, no verdict with too few rounds to be reachable, no
quiet run whose warnings are lost, no measured figure typed into prose. Copies with one
verdict, one crossover size or one unit changed fail: the review, or nbval's comparison
through examples/sanitize.cfg, whichever can see it. And the review runs over a fresh
run's outputs too (tests/fresh_review.py, a plugin beside nbval): a notebook whose run
prints a verdict its own table contradicts fails."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from fresh_review import REVIEW_NAME, fresh_cells
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbval.plugin import coalesce_streams, get_sanitize_patterns
from notebook_review import CROSSOVER, VERSUS_LINE, printed, review, unwrap

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))
THROUGHPUT = ROOT / "examples" / "01_throughput.ipynb"
OPPOSITE = {"faster": "slower", "slower": "faster", "same": "slower", "inconclusive": "faster"}


def _cells(notebook: Path) -> list[dict]:
    return json.loads(notebook.read_text())["cells"]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_a_saved_notebook_holds_up_to_a_review(notebook):
    assert review(_cells(notebook)) == []


def _edit_stream(cell: dict, old: str, new: str) -> None:
    """One change in what a cell printed (its first stream holding ``old``)."""
    for output in cell["outputs"]:
        text = "".join(output.get("text", ""))
        if old in text:
            output["text"] = text.replace(old, new, 1)
            return
    raise AssertionError(f"{old!r} is not printed by the cell")


def _last_verdict_line_cell(cells: list[dict]) -> tuple[dict, str]:
    """The conclusion's verdict line: the last cell that prints one, and the line."""
    for cell in reversed(cells):
        if cell["cell_type"] != "code":
            continue
        for line in unwrap(printed(cell)):
            if VERSUS_LINE.match(line):
                return cell, line
    raise AssertionError("no verdict line printed")


def test_a_conclusion_whose_verdict_is_flipped_is_caught():
    cells = copy.deepcopy(_cells(THROUGHPUT))
    cell, line = _last_verdict_line_cell(cells)
    word = re.search(r"\): (faster|slower|same|inconclusive) at ", line)
    assert word, line
    calls = line[word.start(1) :]
    _edit_stream(cell, calls.split(" at ")[0] + " at", OPPOSITE[word.group(1)] + " at")
    problems = review(cells)
    assert problems and "agree with no other output" in problems[0], problems


def test_a_table_whose_verdict_is_flipped_is_caught():
    cells = copy.deepcopy(_cells(THROUGHPUT))
    (table_cell,) = [
        c
        for c in cells
        if c["cell_type"] == "code" and "zero_copy_speedup(r.df)" in "".join(c["source"])
    ]
    (output,) = [o for o in table_cell["outputs"] if "text/plain" in o.get("data", {})]
    text = "".join(output["data"]["text/plain"])
    row = re.search(r"(?m)^0 .* (faster|slower|same|inconclusive)\s*$", text)
    assert row, text
    flipped = text[: row.start(1)] + OPPOSITE[row.group(1)] + text[row.end(1) :]
    output["data"]["text/plain"] = flipped
    problems = review(cells)
    assert any("(a table)" in p for p in problems), problems


def test_a_crossover_moved_to_other_sizes_is_caught():
    cells = copy.deepcopy(_cells(THROUGHPUT))
    claimed = [
        (c, m) for c in cells if c["cell_type"] == "code" for m in CROSSOVER.finditer(printed(c))
    ]
    assert claimed, "01 prints no crossover: a change of the sweep would show here"
    cell, match = claimed[0]
    low, high = match.groups()
    _edit_stream(cell, match.group(0), f"crossover between {high} B and {low}0 B")
    problems = review(cells)
    assert any("a crossover between" in p for p in problems), problems


def test_a_crossover_moved_in_the_seeds_table_is_caught():
    cells = copy.deepcopy(_cells(THROUGHPUT))
    tables = [
        o["data"]
        for c in cells
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
        if "where zero-copy starts to pay" in "".join(o.get("data", {}).get("text/html", ""))
    ]
    assert len(tables) == 1, "01 tables its crossover beside the seed's once"
    text = "".join(tables[0]["text/html"])
    between = re.search(r"between (\S+) B and (\S+) B", text)
    assert between, "the seeds table claims no crossover where its verdicts imply one"
    tables[0]["text/html"] = text.replace(between.group(0), "between 1k B and 8k B")
    problems = review(cells)
    assert any("a crossover between 1k B and 8k B" in p for p in problems), problems


@pytest.mark.parametrize(
    ("notebook", "unit", "other"),
    [("02_latency.ipynb", " µs (n=", " ms (n="), ("01_throughput.ipynb", " Gbit/s (", " Mbit/s (")],
)
def test_a_summary_line_in_another_unit_is_caught(notebook, unit, other):
    cells = copy.deepcopy(_cells(ROOT / "examples" / notebook))
    (cell, *_) = [c for c in cells if c["cell_type"] == "code" and unit in printed(c)]
    _edit_stream(cell, unit, other)
    problems = review(cells)
    assert any("in another unit" in p for p in problems), problems


def _sanitized(text: str) -> str:
    for regex, replacement in get_sanitize_patterns((ROOT / "examples/sanitize.cfg").read_text()):
        text = re.sub(regex, replacement, text)
    return text


def test_nbval_sees_a_changed_unit_or_percentile_and_not_the_noise():
    line = (
        "tcp 1k B copy: mean 71.2 µs (n=10, 98% CI 69.7 to 73.1); pooled p50 70.1, p99 95, "
        "p99.9 120, max 1,071 µs"
    )
    # Another run: other numbers, other verdict words, wrapped elsewhere.
    noisy = line.replace("71.2", "80.9").replace("1,071", "2,304")
    assert _sanitized(noisy) == _sanitized(line)
    assert _sanitized("slower at 1M B") == _sanitized("faster at 1M B")
    for changed in (
        line.replace("µs", "ms"),
        line.replace("p99 95", "p90 95"),
        line.replace("1k B", "1k kB"),
    ):
        assert _sanitized(changed) != _sanitized(line), changed


def test_a_floods_memory_advice_is_masked_whatever_the_run_found():
    """A process whose peak rose by bytes in one run and not at all in the next: two
    forms of one sentence, both what the run found."""
    head = "advice: with 2 process-pool workers, each task in flight "
    grew = head + "took about 96 B in this kernel (medians of 6 samples of a flood of 256 tasks)"
    flat = head + "showed no rise in the peak resident memory of this kernel (under 4 B a task)"
    assert _sanitized(grew + "\n") == _sanitized(flat + "\n")


def test_a_gates_outcome_is_masked_whatever_the_run_found():
    passed = "gate --fail-on slower: passed\n"
    failed = "gate --fail-on slower: FAILED at 2 points\n  size=1: slower, ratio 0.9\n"
    assert _sanitized(passed) == _sanitized(failed)


def _as_nbval_holds_them(outputs: list) -> list:
    """A cell's saved outputs as nbval holds a fresh run's: text as one string, each
    stream's parts coalesced into one output."""
    return coalesce_streams(nbformat.from_dict(copy.deepcopy(outputs)))


def _streams(outputs: list[dict]) -> dict[str, str]:
    found: dict[str, str] = {}
    for output in outputs:
        if output["output_type"] == "stream":
            found[output["name"]] = found.get(output["name"], "") + "".join(output["text"])
    return found


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_fresh_outputs_reach_the_review_in_the_saved_form(notebook):
    """What nbval holds of a run, put back in the notebook, is what the saved notebook
    holds: the same outputs, in the same shapes (text as lines), streams aside
    (nbval coalesces them: one per stream, the same text)."""
    saved = _cells(notebook)
    held = nbformat.read(notebook, as_version=4)
    outputs = [_as_nbval_holds_them(c.outputs) for c in held.cells if c.cell_type == "code"]
    fresh = fresh_cells(held, outputs)
    assert [c["source"] for c in fresh] == [c["source"] for c in saved]
    for ran, kept in zip(fresh, saved, strict=True):
        if kept["cell_type"] != "code":
            continue
        others = [o for o in kept["outputs"] if o["output_type"] != "stream"]
        assert [o for o in ran["outputs"] if o["output_type"] != "stream"] == others
        assert _streams(ran["outputs"]) == _streams(kept["outputs"])
    assert review(fresh) == review(saved)


_LINE = (
    "zero-copy vs copy, msgs_per_s paired by round (±5% tolerance): faster at 100 B; slower at 1k B"
)


def _comparison(table_verdict_at_100: str) -> nbformat.NotebookNode:
    """A notebook whose run prints a verdict line (a stream), then shows a table of the
    same points (a result's text/plain, a DataFrame's text as the examples show theirs)
    whose verdict at 100 B is the one given. No pandas: its import takes a second."""
    table = f"   size verdict\n0   100 {table_verdict_at_100}\n1  1024 slower"
    return new_notebook(
        cells=[
            new_markdown_cell("# Zero-copy against a copy"),
            new_code_cell(f"print({_LINE!r})"),
            new_code_cell(
                f"class Table:\n    def __repr__(self):\n        return {table!r}\n\n\nTable()"
            ),
        ]
    )


def test_a_fresh_run_whose_table_contradicts_its_verdict_line_fails(tmp_path):
    """Both notebooks run in a real kernel under nbval with the review's plugin: the
    review follows each notebook's cells, fails the one whose run contradicts itself
    (naming it and the contradiction) and passes the other."""
    nbformat.write(_comparison("slower"), tmp_path / "contradicting.ipynb")
    nbformat.write(_comparison("faster"), tmp_path / "agreeing.ipynb")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # this folder's run, not the project's
    tests = str(Path(__file__).resolve().parent)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")])),
    }
    run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "fresh_review", "-p", "no:cacheprovider"),
            *("--nbval-lax", "--nbval-current-env", "-rA", "-n", "0"),
            *("contradicting.ipynb", "agreeing.ipynb"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert f"PASSED agreeing.ipynb::{REVIEW_NAME}" in out, out
    assert f"FAILED contradicting.ipynb::{REVIEW_NAME}" in out, out
    assert "1 failed, 5 passed" in out, out
    failure = out.split(f"contradicting.ipynb::{REVIEW_NAME} _")[1]
    assert "contradicting.ipynb, as this run printed it, does not hold up to a review" in failure
    assert "cell 1 (Cell 0): zero-copy vs copy" in failure, failure
    assert "{'100 B': 'slower', '1k B': 'slower'} agree with no other output" in failure, failure

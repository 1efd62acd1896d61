"""The review of tests/notebook_review.py over what a run of the example notebooks has
just printed, not only over the saved run: a pytest plugin beside nbval
(``pytest examples -p fresh_review --nbval-lax ...``, as ``scripts/test.sh examples``).

nbval masks the numbers and the verdict words of the cells it compares, so a fresh run
whose conclusion disagrees with its own table would pass it. nbval runs each code cell
as one item in the notebook's one kernel, and the item keeps what its cell printed
(``test_outputs``). This plugin adds one item to each notebook collected whole, after
its last cell: it puts the cells' fresh outputs in the notebook in the form a saved
notebook has (:func:`fresh_cells`), runs :func:`notebook_review.review` over it, and
fails naming the notebook and every problem found. Nothing runs twice.

The item is the notebook's own (its node id begins with the notebook's path), so the
run's dealing of the work in several processes (pytest-xdist, tests/conftest.py) gives
it to the process that runs the notebook's cells, right after them: each process
collects every item and runs those dealt to it, and the outputs are read there.
"""

from __future__ import annotations

import json
import re
from typing import Any

import nbformat
import pytest
from nbformat.v4.nbjson import writes
from nbval.plugin import IPyNbCell, IPyNbFile
from notebook_review import review

REVIEW_NAME = "review of the fresh outputs"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """After each notebook whose code cells were all collected (and none deselected),
    its review: last, once another plugin has put the items in its order."""
    notebooks: dict[IPyNbFile, list[IPyNbCell]] = {}
    for item in items:
        if isinstance(item, IPyNbCell):
            notebooks.setdefault(item.parent, []).append(item)
    for notebook, cells in notebooks.items():
        code_cells = sum(cell.cell_type == "code" for cell in notebook.nb.cells)
        if len(cells) != code_cells:
            continue  # a part of the notebook: no whole run to review
        reviewed = FreshReview.from_parent(notebook, name=REVIEW_NAME, cells=cells)
        items.insert(items.index(cells[-1]) + 1, reviewed)


def fresh_cells(notebook: nbformat.NotebookNode, outputs: list[list[Any]]) -> list[dict]:
    """``notebook``'s cells with its code cells' outputs replaced by ``outputs`` (one
    list per code cell, in order, as nbval holds them: streams coalesced, text as one
    string), in the form the notebook's file would have: written as Jupyter writes it
    (text split into lines) and read back as JSON, as tests/test_notebook_review.py
    reads the saved notebooks."""
    fresh = iter(outputs)
    cells = [
        {**cell, "outputs": next(fresh)} if cell.cell_type == "code" else cell
        for cell in notebook.cells
    ]
    return json.loads(writes(nbformat.from_dict({**notebook, "cells": cells})))["cells"]


def _unfinished(cell: IPyNbCell) -> str | None:
    """Why ``cell`` has no whole fresh output, if so: it never ran, or it stopped at an
    error (nbval reports either as the cell's failure)."""
    if cell.options["skip"]:
        return None
    if cell.test_outputs is None:
        return "did not run"
    failed = any(output.output_type == "error" for output in cell.test_outputs)
    if failed and not cell.options["check_exception"]:
        return "stopped at an error"
    return None


def _numbered(problem: str, kinds: list[str]) -> str:
    """``cell 12: ...`` (the review counts every cell; ``kinds``: each cell's type) with
    nbval's number for the cell beside it (it counts code cells): ``cell 12 (Cell 7): ...``."""
    match = re.match(r"cell (\d+)", problem)
    if not match or int(match[1]) >= len(kinds) or kinds[int(match[1])] != "code":
        return problem
    return f"{match[0]} (Cell {kinds[: int(match[1])].count('code')}){problem[match.end() :]}"


class ReviewProblems(Exception):
    """The problems a review found in a notebook's fresh outputs."""


class FreshReview(pytest.Item):
    """A notebook's review over the outputs its cells printed in this run."""

    def __init__(self, *, cells: list[IPyNbCell], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cells = cells

    def runtest(self) -> None:
        notebook = self.parent
        assert isinstance(notebook, IPyNbFile)
        if notebook.timed_out:
            pytest.skip("a cell timed out (its failure is reported): no whole run to review")
        for cell in self.cells:
            why = _unfinished(cell)
            if why:
                pytest.skip(
                    f"Cell {cell.cell_num} {why} (its failure is reported): no whole run to review"
                )
        # A cell nbval skips ran in no kernel: it printed nothing this run.
        outputs = [[] if cell.options["skip"] else cell.test_outputs for cell in self.cells]
        problems = review(fresh_cells(notebook.nb, outputs))
        if problems:
            kinds = [cell.cell_type for cell in notebook.nb.cells]
            raise ReviewProblems([_numbered(problem, kinds) for problem in problems])

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ReviewProblems):
            (problems,) = excinfo.value.args
            return "\n".join(
                [
                    f"{self.nodeid.split('::')[0]}, as this run printed it, does not hold up "
                    "to a review "
                    "(tests/notebook_review.py):",
                    *(f"  {problem}" for problem in problems),
                ]
            )
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.path.name}::{REVIEW_NAME}"

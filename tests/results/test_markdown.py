"""Results as Markdown: tables whose cells hold what they hold, notes as a list."""

from __future__ import annotations

import numpy as np

from zmqbench_magic.results.synthetic import unpaired_run
from zmqbench_magic.results.words.markdown import comparison_markdown, lines_markdown


def test_a_comparison_is_a_table_of_its_points_then_its_notes():
    rng = np.random.default_rng(4)
    table = unpaired_run(rng, 1.0, points=2).compare(unpaired_run(rng, 0.5, points=2))
    table["transport"] = ["tcp|ipc", "tcp"]  # a pipe in a cell must not open a new one
    lines = comparison_markdown(table).splitlines()
    header, rule, *rows = lines[: lines.index("")]
    assert header.count("|") == rule.count("|") == 9
    assert [row.count("|") - row.count("\\|") for row in rows] == [9, 9]
    assert "transport=tcp\\|ipc" in rows[0] and "**slower**" in rows[0]
    notes = lines[lines.index("") + 1 :]
    assert notes and all(note.startswith("- ") for note in notes)
    assert notes[0].startswith("- unpaired (separate runs); faster/slower: beyond")


def test_an_empty_comparison_and_plain_text():
    rng = np.random.default_rng(5)
    empty = unpaired_run(rng, points=1).compare(unpaired_run(rng, points=1)).iloc[0:0]
    assert comparison_markdown(empty) == "no point is in both results: check --match"
    assert lines_markdown(["a  b", "c"]) == "```text\na  b\nc\n```"

"""A notebook read as a careful reviewer reads it: what its saved outputs claim, and
whether the claims agree with each other.

nbval compares a fresh run with the saved one, but a noisy machine may turn a verdict
from run to run, so it masks the verdict words and the numbers. What nbval cannot pin,
this reads in one saved run: every verdict a line or a table prints about a point, every
crossover claimed, and the rules a conclusion rests on. :func:`review` returns the
problems found (none for a notebook that holds up); the tests run it over the saved
notebooks, and over copies with one word changed, which it must catch; and a run of the
notebooks runs it over what each has just printed (tests/fresh_review.py).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass

from zmqbench_magic.params.units import format_size, parse_size

VERDICT_WORDS = ("faster", "slower", "same", "inconclusive")
# A comparison's one line (results.words.text.versus_line), unwrapped: its words, metric and
# design, then the calls grouped by verdict.
VERSUS_LINE = re.compile(
    r"^(?P<words>.+?), (?P<metric>\w+) "
    r"(?P<how>paired by round(?:, decided round by round)?|unpaired \(separate blocks\)) "
    r"\(±[\d.]+% tolerance\): (?P<calls>.*)$"
)
_CALL = re.compile(r"^(faster|slower|same|inconclusive) at (.+)$")
# A verdict's reason names the pairs a test needs: printed where too few rounds ran.
CANNOT_PASS = re.compile(r"cannot reach p < [\d.]+")
CROSSOVER = re.compile(r"crossover between (\S+) B and (\S+) B")
# A table's row for it (the seeds' "where zero-copy starts to pay"), its tags stripped.
TABLED_CROSSOVER = re.compile(
    r"where zero-copy starts to pay\W.{0,200}?between (\S+) B and (\S+) B", re.S
)
_TAG = re.compile(r"<[^>]+>")
_MAGIC_QUIET = re.compile(r"^\s*(?P<name>\w+)\s*=\s*%(zmqthr|zmqlat|taskflood)\b.*\s-q\b", re.M)
# Figures a run measures, typed into prose: rates, latencies and "N times" factors.
_TYPED = re.compile(
    r"(?<![\w.`])\d[\d,.]*\s?(?:k|M)?\s?(?:msgs/s|Gbit/s|Mbit/s|tasks/s|µs)(?!\w)"
    # A link's rate is a setting of the run (tc's rate), not a figure it measured.
    r"(?!\s+(?:link|Ethernet|network))"
    r"|(?<![\w.`])\d+(?:\.\d+)?\s?(?:x|×)(?![\w])"
)
# A seed is a published figure cited with its year; inline code is the run's own text.
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_CODE = re.compile(r"`[^`]*`")


@dataclass(frozen=True)
class Claim:
    """Verdicts one output gives: per point label, the word; where it was printed."""

    source: str  # "line" or "table"
    words: str
    metric: str
    how: str
    calls: dict[str, str]
    where: str


def unwrap(text: str) -> list[str]:
    """The printed lines as written before they were fitted to 100 columns: an indented
    line continues the one before it."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(" ") and lines and line.strip():
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def _code_cells(cells: list[dict]) -> Iterator[tuple[int, dict]]:
    return ((i, c) for i, c in enumerate(cells) if c["cell_type"] == "code")


def printed(cell: dict) -> str:
    """What a code cell printed (its streams)."""
    return "".join(
        "".join(o["text"]) for o in cell.get("outputs", []) if o["output_type"] == "stream"
    )


def _shown(cell: dict, kind: str) -> list[str]:
    return ["".join(o["data"][kind]) for o in cell.get("outputs", []) if kind in o.get("data", {})]


def _split_calls(calls: str) -> dict[str, str]:
    """``slower at 100 B; inconclusive at 1k B, 8k B (reason; more); faster at 1M B``,
    or decided round by round ``faster at 1M B (5 rounds), 64k B (9 rounds: reason)``:
    per label, its verdict. A reason is in parentheses and may hold anything."""
    found: dict[str, str] = {}
    for text in _split_at_depth_zero(calls, "; "):
        match = _CALL.match(text)
        if not match:
            continue
        word, where = match.groups()
        for label in _split_at_depth_zero(where, ", "):
            found[label.split(" (", 1)[0].strip()] = word
    return found


def _split_at_depth_zero(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` outside parentheses, each part stripped."""
    depth, start, parts = 0, 0, []
    for at, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth == 0 and text.startswith(separator, at):
            parts.append(text[start:at].strip())
            start = at + len(separator)
    return [*parts, text[start:].strip()]


def verdict_lines(cells: list[dict]) -> list[Claim]:
    claims = []
    for number, cell in _code_cells(cells):
        for line in unwrap(printed(cell)):
            match = VERSUS_LINE.match(line)
            if match:
                claims.append(
                    Claim(
                        "line",
                        match["words"],
                        match["metric"],
                        match["how"],
                        _split_calls(match["calls"]),
                        f"cell {number}: {line[:120]}",
                    )
                )
    return claims


def _label(column: str, value: str) -> str | None:
    """A table cell as a verdict line names it: ``1k B`` for a size of 1024."""
    if not value.isdigit():
        return None  # a cell of several words: the row does not split into columns
    if column == "size":
        return f"{format_size(parse_size(value))} B"
    if column == "tasks":
        return f"{value} tasks"
    return None


def _table_blocks(text: str) -> Iterator[tuple[list[str], list[list[str]]]]:
    """A DataFrame's plain text, block by block (pandas wraps wide frames): each block's
    column names and its rows split on spaces (index first). Only blocks whose cells
    hold no spaces split cleanly; the others are left out by the caller."""
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line.rstrip(" \\") for line in block.splitlines() if line.strip()]
        if len(lines) < 2:
            continue
        yield lines[0].split(), [line.split() for line in lines[1:]]


def verdict_tables(cells: list[dict]) -> list[Claim]:
    """Tables with a ``verdict`` column beside a size or a task count: per row, the
    label a verdict line would give the point, and the verdict."""
    claims = []
    for number, cell in _code_cells(cells):
        for text in _shown(cell, "text/plain"):
            for header, rows in _table_blocks(text):
                if "verdict" not in header:
                    continue
                keys = [c for c in ("size", "tasks") if c in header]
                if len(keys) != 1:
                    continue
                at, verdict_at = header.index(keys[0]) + 1, header.index("verdict") + 1
                # Cells up to the verdict are one word each; after it a reason may be
                # several, or none (an empty reason leaves its row a word short).
                fitting = [r for r in rows if len(r) > verdict_at]
                if not fitting or len(fitting) != len(rows):
                    continue
                labels = [_label(keys[0], row[at]) for row in fitting]
                if None in labels or len(set(labels)) < len(labels):
                    continue  # another column tells the rows apart: not one comparison
                calls = {
                    str(label): row[verdict_at]
                    for label, row in zip(labels, fitting, strict=True)
                    if row[verdict_at] in VERDICT_WORDS
                }
                if calls:
                    claims.append(Claim("table", "", "", "", calls, f"cell {number} (a table)"))
    return claims


def _agrees(one: Claim, other: Claim) -> bool | None:
    """None where the two speak of different points or comparisons; else whether every
    point they share has one verdict."""
    if set(one.calls) != set(other.calls) or "every point" in one.calls:
        return None
    # Two lines speak of one comparison when they name it alike; a table names none, so
    # it answers to any line of its points (and one of them must agree with it).
    if one.source == other.source == "line" and (one.words, one.metric, one.how) != (
        other.words,
        other.metric,
        other.how,
    ):
        return None
    if one.source == other.source == "table":
        return None
    return all(one.calls[label] == other.calls[label] for label in one.calls)


def contradictions(cells: list[dict]) -> list[str]:
    """Every verdict printed twice about the same points agrees: a line printed again
    (a conclusion repeating the run's summary) says what it said, and a table of
    verdicts agrees with at least one line of its points (several comparisons may share
    the points: one of them is the table's)."""
    claims = verdict_lines(cells) + verdict_tables(cells)
    problems = []
    for claim in claims:
        peers = [
            _agrees(claim, other)
            for other in claims
            if other is not claim and _agrees(claim, other) is not None
        ]
        if peers and not any(peers):
            problems.append(
                f"{claim.where}: its verdicts {claim.calls} agree with no other output of "
                "the same points"
            )
    return problems


def _crossover_from(calls: dict[str, str]) -> tuple[str, str] | None:
    """Where a zero-copy verdict line puts the crossover: between the largest size not
    called faster and the next, when zero-copy is faster at every size above it."""
    sizes = sorted(calls, key=lambda label: parse_size(label.removesuffix(" B")))
    ahead = [calls[s] == "faster" for s in sizes]
    if not ahead or not ahead[-1]:
        return None
    first = len(ahead)
    while first > 0 and ahead[first - 1]:
        first -= 1
    if first == 0:
        return None
    return sizes[first - 1].removesuffix(" B"), sizes[first].removesuffix(" B")


def crossover_claims(cells: list[dict]) -> list[str]:
    """Every crossover a notebook prints or tabulates is the one its zero-copy verdict
    line implies, and all of them name the same sizes."""
    zero_copy = [
        c
        for c in verdict_lines(cells)
        if c.metric == "msgs_per_s" and "every point" not in c.calls and len(c.calls) > 2
    ]
    texts = []
    for number, cell in _code_cells(cells):
        texts += [(number, t) for t in unwrap(printed(cell))]
        texts += [(number, html.unescape(_TAG.sub(" ", t))) for t in _shown(cell, "text/html")]
    problems = []
    for number, text in texts:
        for low, high in CROSSOVER.findall(text) + TABLED_CROSSOVER.findall(text):
            implied = [_crossover_from(c.calls) for c in zero_copy]
            if (low, high) not in implied:
                problems.append(
                    f"cell {number}: a crossover between {low} B and {high} B, where the "
                    f"verdicts printed imply {implied or 'none'}"
                )
        unclaimed = "where zero-copy starts to pay" in text and "none claimed" in text
        if unclaimed and any(_crossover_from(c.calls) for c in zero_copy):
            problems.append(f"cell {number}: no crossover claimed where the verdicts imply one")
    return problems


# A summary line prints each figure in one unit, whatever it measured: a line of its
# kind (told by its words) in any other unit was changed by hand.
_UNITS = (
    ("pooled p50", re.compile(r": mean [\d.,]+ µs \(n=.*; pooled p50 .* max [\d.,]+ µs")),
    (
        "msgs/s delivered",
        re.compile(r"[\d.,]+ msgs/s delivered, [\d.,]+[kM]? sent, [\d.,]+ Gbit/s"),
    ),
    (", round trip ", re.compile(r": sent [\d.,]+ ms, round trip [\d.,]+ ms, [\d.,]+ tasks/s")),
)


def units(cells: list[dict]) -> list[str]:
    """Every summary line prints its figures in their one unit."""
    return [
        f"cell {number}: a summary line in another unit: {line[:120]}"
        for number, cell in _code_cells(cells)
        for line in unwrap(printed(cell))
        for words, form in _UNITS
        if words in line and not form.search(line)
    ]


def unreachable_verdicts(cells: list[dict]) -> list[str]:
    """No verdict computed with fewer rounds than its test can ever pass with."""
    return [
        f"cell {n}: {match.group(0)}: too few rounds for the verdict to be reachable"
        for n, cell in _code_cells(cells)
        for text in [printed(cell), *_shown(cell, "text/plain")]
        if (match := CANNOT_PASS.search(text))
    ]


def quiet_runs(cells: list[dict]) -> list[str]:
    """A run made with ``-q`` prints nothing: its warnings must reach the saved output
    some other way (the result printed, or its ``.warnings``), in a later cell."""
    problems = []
    sources = ["".join(c["source"]) for c in cells]
    for number, source in enumerate(sources):
        if cells[number]["cell_type"] != "code":
            continue
        for match in _MAGIC_QUIET.finditer(source):
            name = match["name"]
            shown = re.compile(
                rf"print\(\s*{name}\s*\)|\b{name}\.warnings\b|^\s*{name}\s*$|warnings_text\(\s*{name}\b",
                re.M,
            )
            if not any(shown.search(s) for s in sources[number:]):
                problems.append(
                    f"cell {number}: {name} runs with -q and its warnings are never shown"
                )
    return problems


def typed_figures(cells: list[dict]) -> list[str]:
    """A markdown cell types no measured figure, but a published one cited with its year."""
    problems = []
    for number, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        for paragraph in "".join(cell["source"]).split("\n\n"):
            if _YEAR.search(paragraph):
                continue
            for match in _TYPED.finditer(_CODE.sub("", paragraph)):
                problems.append(f"cell {number}: a typed figure {match.group(0)!r}")
    return problems


def review(cells: list[dict]) -> list[str]:
    """Everything a careful reader would object to in one notebook: its cells, as its
    file holds them (saved, or a fresh run's outputs put in their place)."""
    return (
        contradictions(cells)
        + crossover_claims(cells)
        + units(cells)
        + unreachable_verdicts(cells)
        + quiet_runs(cells)
        + typed_figures(cells)
    )

"""Results in words: one %timeit-style line per point of a summary."""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...params import COPY, IDLE, KINDS
from ...params.backends import BACKENDS
from ...params.columns import Row
from ...params.declare import departures
from ...params.interpreter import arm_names
from ...params.pressure import held
from ...params.socket_point import SAID_IN_A_SUMMARY, SocketPoint
from ...params.taskflood import BACKEND, STAGE_COLUMNS, STAGES
from ...params.units import format_duration, format_rate, format_size, plural
from ..statistics.compare import arms_versus, point_columns

if TYPE_CHECKING:
    from ..resultlike import ResultLike


# A terminal's width that every line of a summary fits (80-column terminals wrap the
# few longer lines at word boundaries, never inside a number).
LINE_WIDTH = 100


def fit(lines: list[str], width: int = LINE_WIDTH) -> list[str]:
    """Each line within ``width`` columns, wrapped at spaces only (a number is never
    split); a wrapped line goes on under the text after its first ``: ``."""
    fitted = []
    for line in lines:
        if len(line) <= width:
            fitted.append(line)
            continue
        head = line.find(": ") + 2
        indent = " " * (head if 2 <= head <= width // 3 else 4)
        fitted += textwrap.wrap(
            line,
            width,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
    return fitted


def flood_where(row: Row) -> list[str]:
    """The words naming a flood's point, as columns: tasks, engines, how."""

    def has(key: str) -> bool:  # the column exists and this test filled it
        return not pd.isna(row.get(key, float("nan")))

    # A file from before --backend existed ran ipyparallel (also when joined with newer).
    named = row.get("backend")
    backend = BACKENDS[named if isinstance(named, str) else BACKEND.default]
    how = f"{row['view']}/{row['scheme']}" if backend.views else backend.name
    if has("chunksize") and row["chunksize"] != 1:
        how += f" chunks of {int(row['chunksize'])}"
    if has("size"):
        how += f" {format_size(int(row['size']))} B"
    if has("duration"):
        how += f" {format_duration(row['duration'])}"
    return [plural(int(row["tasks"]), "task"), backend.workers(int(row["engines"])), how]


def flood_figures(row: Row) -> str:
    def has(key: str) -> bool:
        return not pd.isna(row.get(key, float("nan")))

    extra = ""
    if has("mbit_per_s"):
        extra = f", {row['mbit_per_s']:,.0f} Mbit/s"
    if has("efficiency"):
        extra = f", efficiency {row['efficiency']:.0%}"
    if has("task_s"):
        extra = (
            f", task {row['task_s'] * 1e3:,.2f} ms, overhead "
            f"{row['overhead_fraction']:.0%} of the round trip"
        )
    if has("queue_s"):
        stages = " / ".join(_three(row[column] * 1e3) for column in STAGE_COLUMNS)
        extra += f"; per task {stages} ms ({'/'.join(STAGES)})"
    return (
        f"sent {_three(row['sent_s'] * 1e3)} ms, round trip "
        f"{_three(row['roundtrip_s'] * 1e3)} ms, {figure(row['tasks_per_s'])} tasks/s{extra} "
        f"({_samples(row)})"
    )


def figure(value: float) -> str:
    """A measured figure with the digits it has: ``1,234,567``, ``45.6``, ``0.312``;
    ``n/a`` where it was not measured."""
    if pd.isna(value):
        return "n/a"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.1f}".rstrip("0").rstrip(".")


def bound(value: float, outward: int = 0) -> str:
    """An interval's end to 3 significant digits (``238k``, ``5.12M``, ``92``): the
    interval says how far the figure may be off, so its own last digits say nothing.
    ``outward`` -1 rounds a low end down and +1 a high end up, so the printed interval
    still holds every figure it held (a median of 56.4 never reads outside "56.3 to 57")."""
    if outward and not pd.isna(value) and value != 0:
        step = 10 ** (math.floor(math.log10(abs(value))) - 2)
        value = (math.floor if outward < 0 else math.ceil)(round(value / step, 9)) * step
    return format_rate(value) if abs(value) >= 10_000 else _three(value)


def _three(value: float) -> str:
    """``0.216``, ``45.6``, ``747``, ``1,386``: 3 significant digits, whole numbers
    from 1,000 up (a time's or a rate's last digits vary from sample to sample)."""
    if pd.isna(value) or abs(float(f"{value:.3g}")) >= 1000:  # 999.7 reads 1,000
        return figure(value)
    return f"{value:.3g}"


def _samples(row: Row, scale: float = 1.0) -> str:
    """``n=10, 98% CI 1.21M to 1.25M``: how many samples and how sure, at the level
    the interval really reaches."""
    level = row.get("ci_level", 0)
    if pd.isna(row.get("ci_low", float("nan"))) or row["n"] < 2:
        return f"n={row['n']}"
    low, high = bound(row["ci_low"] * scale, -1), bound(row["ci_high"] * scale, +1)
    return f"n={row['n']}, {level:.0%} CI {low} to {high}"


def socket_where(row: Row) -> list[str]:
    """The words naming a ZeroMQ point, as columns: transport, size, copy mode, the
    pattern and its peers where they are not one pipeline (a server's clients where
    they are more than one), and the settings a summary names where the point departs
    from the default (``SAID_IN_A_SUMMARY``), each in its declared phrase."""
    words = [row["transport"], f"{format_size(int(row['size']))} B", COPY.label(row["copy"])]
    words.append(SocketPoint.of_row(row).crowd_words())
    return [*words, " ".join(departures(row, SAID_IN_A_SUMMARY))]


def throughput_figures(row: Row) -> str:
    """``1.23M msgs/s delivered, 2.1M sent, 0.98 Gbit/s (...)``, and why where the
    send-only rate reads below delivered; at an offered rate,
    what the sender achieved and how long it was blocked, and a loss beside the rate
    it flatters (the rate counts only what arrived); how old a read message was, where
    that is known (``reads 0.9 ms old``)."""
    sent = row.get("send_msgs_per_s", math.nan)
    sent_words = "" if pd.isna(sent) else f", {bound(sent)} sent"
    if row.get("rate", 0):
        sent_words = _paced_words(row)
    lost = row.get("lost", 0)
    lost_words = f", {lost:,.0f} lost" if not pd.isna(lost) and lost > 0 else ""
    if not pd.isna(row.get("join_ms", math.nan)):
        lost_words = (
            f", its first message {_three(row['join_ms'])} ms after connecting, "
            f"{row['missed_at_join']:,.0f} missed before it{lost_words}"
        )
    age = row.get("age_ms", math.nan)
    sent_words += "" if pd.isna(age) else f", reads {_three(age)} ms old"
    return (
        f"{figure(row['msgs_per_s'])} msgs/s delivered{lost_words}{sent_words}, "
        f"{figure(row['mbit_per_s'] / 1000)} Gbit/s ({_samples(row)})"
        f"{_short_burst(row)}"
    )


def _short_burst(row: Row) -> str:
    """Said where send-only reads below delivered: it times only the first sends (the
    sender's own queue's worth, often a millisecond or less), not the whole sample, so
    the two rates are of different stretches."""
    sent, delivered = row.get("send_msgs_per_s", math.nan), row["msgs_per_s"]
    if row.get("rate", 0) or pd.isna(sent) or not sent < delivered:
        return ""  # a paced sender's words are its offered rate's
    burst = row.get("send_only_count", math.nan)
    first = "first sends" if pd.isna(burst) else f"first {burst:,.0f} sends"
    return (
        f"; sent reads below delivered: it times only the {first} (what the sender's "
        "own queue holds), not the whole sample"
    )


def _paced_words(row: Row) -> str:
    """``, sent 9,998 of 10k offered (rate NOT held), blocked 12%``."""
    achieved = row.get("sent_per_s", math.nan)
    unheld = "" if pd.isna(achieved) or held(achieved, row["rate"]) else " (rate NOT held)"
    blocked = row.get("blocked_share", math.nan)
    blocked_words = "" if pd.isna(blocked) else f", blocked {blocked:.0%}"
    return f", sent {figure(achieved)} of {format_rate(row['rate'])} offered{unheld}{blocked_words}"


def latency_figures(row: Row) -> str:
    """``mean 93.6 µs (n=10, 98% CI 75.3 to 103); pooled p50 94.1, ..., max 1,071 µs``:
    the mean as the other kinds' headlines are, the median over the samples of each
    sample's mean round trip, beside the interval of that same median; then the
    percentiles over every round trip of the point's samples, pooled."""
    achieved = _achieved(row) if row.get("rate", 0) else ""
    return (
        f"mean {_three(row.get('sample_mean_us', math.nan))} µs ({_samples(row)}); "
        f"pooled p50 {_three(row['p50_us'])}, "
        f"p99 {_three(row['p99_us'])}, p99.9 {_three(row['p999_us'])}, "
        f"max {_three(row['max_us'])} µs{achieved}"
    )


def _achieved(row: Row) -> str:
    """``, achieved 9,998 msgs/s``, and says so when the offered rate was not held."""
    held = "" if row.get("held", True) else " (rate NOT held)"
    return f", achieved {figure(row['achieved_per_s'])} msgs/s{held}"


def comparison_lines(table: pd.DataFrame) -> list[str]:
    """One line per compared point, then what the table as a whole says::

    size=1024: msgs_per_s medians 1,000 -> 1,120; ratio 1.12 (Hodges-Lehmann, 95% CI
      1.05 to 1.20, n=10): faster
    size=64: ... ratio 1.03 (Hodges-Lehmann, 75% CI 0.97 to 1.09, n=3): inconclusive:
      need at least 6 pairs of samples (rounds): ...
    """
    if table.empty:
        return ["no point is in both results: check --match"]
    keys = point_columns(table)
    lines = []
    for row in table.to_dict("records"):
        where = " ".join(f"{k}={row[k]}" for k in keys) or "all"
        verdict = row["verdict"] + (f": {row['reason']}" if row.get("reason") else "")
        lines.append(
            f"{where}: {row['metric']} medians {figure(row['baseline'])} -> "
            f"{figure(row['candidate'])}; ratio {row['ratio']:.3f} "
            # Not the medians' quotient: the Hodges-Lehmann estimate its interval belongs
            # to (of the rounds' ratios, or of every cross-arm ratio), named as such.
            f"(Hodges-Lehmann, {row['ci_level']:.0%} CI {row['ci_low']:.3f} to "
            f"{row['ci_high']:.3f}, n={row['n']}): {verdict}"
        )
    return lines + comparison_notes(table)


def comparison_notes(table: pd.DataFrame) -> list[str]:
    """What a comparison's table as a whole says, after its points: how the points were
    compared and called, where the tolerance came from, a shift every point shares, and
    what else the two runs differ in."""
    lines = []
    tolerance = table.attrs.get("tolerance")
    if tolerance is not None and table.attrs.get("until") == "decided":
        lines.append(
            f"paired by round and looked at after every round; faster/slower: the "
            f"interval that holds at every round at once lies beyond ±{tolerance:.1%} "
            f"(at most 5% false calls over {table.attrs['family']} point(s), however "
            "many rounds); same: its 95% interval within it; the intervals shown are 95%"
        )
    elif tolerance is not None:
        how = "paired by round" if table["paired"].all() else "unpaired (separate runs)"
        band = f"±{tolerance:.1%}"
        if "tolerance" in table and table["tolerance"].nunique() > 1:
            band = f"each point's tolerance (±{table['tolerance'].min():.1%} to {band})"
        lines.append(
            f"{how}; faster/slower: beyond {band} after Holm's adjustment across "
            f"{len(table)} point(s); same: the whole interval within it"
        )
    if table.attrs.get("noise_floor"):
        lines.append(f"tolerance: {table.attrs['noise_floor']}")
    if table.attrs.get("shift"):
        lines.append(f"note: {table.attrs['shift']}")
    if table.attrs.get("unlike"):
        lines.append(
            f"note: the two runs differ in more than what was compared: "
            f"{'; '.join(table.attrs['unlike'])}; every ratio includes these"
        )
    return lines


# Two-arm parameters whose comparison a run states on its own when it measured both
# arms: (column, baseline, candidate, words).
_ARMS = (
    ("copy", True, False, "zero-copy vs copy"),
    ("loop", "python", "native", "native loop vs python"),
    ("loop", "python", "asyncio", "asyncio loop vs python"),
)


def verdict_lines(result: ResultLike) -> list[str]:
    """For each two-arm parameter measured both ways, the paired verdicts in one line:
    ``zero-copy vs copy (paired, ±1.0%): faster at 64k, 1M; inconclusive at 100 B ...``."""
    arms = list(_ARMS)
    df = result.df
    if "idle" in df.columns and df["idle"].nunique() == 2 and 0 in set(df["idle"]):
        # After a pause against back to back: the question --idle asks.
        paused = max(df["idle"])
        arms.append(("idle", 0.0, paused, f"{IDLE.words(paused)} vs back to back"))
    environments = python_arms(result)
    if len(environments) == 2:
        # Environments side by side: the first named is the baseline.
        old, new = environments
        arms.append(("python", old, new, f"python {new} vs {old}"))
    decided = next((m["decided"] for m in result.runs.values() if m.get("decided")), None)
    if decided and not any(arm[:3] == tuple(decided) for arm in arms):
        column, old, new = decided
        words_of = KINDS[result.benchmark].params.words
        arms.append((column, old, new, f"{words_of({column: new})} vs {words_of({column: old})}"))
    lines = [versus_line(result, *arm) for arm in arms]
    return [line for line in lines if line]


def python_arms(result: ResultLike) -> list[str]:
    """The environments a run compared side by side (its ``python`` column), in the
    order ``--python`` named them: the first is the baseline."""
    df = result.df
    if "python" not in df.columns:
        return []
    measured = df["python"].dropna().unique().tolist()
    given = result.settings.get("python") or ()
    named = list(arm_names([given] if isinstance(given, str) else given).values())
    return [arm for arm in named if arm in measured] if set(named) >= set(measured) else measured


def versus_line(
    result: ResultLike,
    column: str,
    baseline: Any,
    candidate: Any,
    words: str = "",
    metric: str | None = None,
) -> str:
    """The verdicts of ``candidate`` against ``baseline`` (two values of ``column``),
    paired by round where the two were measured in the same rounds, in one unwrapped
    line, the points grouped by verdict; "" where the run did not measure both.

    >>> versus_line(r, "transport", "tcp", "ipc")  # doctest: +SKIP
    'ipc vs tcp, sample_mean_us paired by round (±1.0% tolerance): faster at 1 B, 1k B; ...'
    """
    df = result.df
    if column not in df.columns or not {baseline, candidate} <= set(df[column]):
        return ""
    table = arms_versus(result, column, baseline, candidate, metric)
    if table.empty:
        return ""
    words_of = KINDS[result.benchmark].params.words
    keys = [c for c in point_columns(table) if table[c].nunique() > 1]
    labels = [words_of(dict(row)) for row in table[keys].to_dict("records")] if keys else None
    decided = table.attrs.get("until") == "decided"
    if decided:  # how many rounds each point took, and an undecided one's own reason
        labels = [
            f"{label} ({_rounds_taken(row)})"
            for label, row in zip(
                labels or ["every point"] * len(table), table.to_dict("records"), strict=True
            )
        ]
    parts = []
    for verdict, rows in table.groupby("verdict", sort=False):
        if verdict == "inconclusive" and not decided:
            where = _each_with_its_reason(rows, labels)
        else:
            where = ", ".join(labels[i] for i in rows.index) if labels else "every point"
        parts.append(f"{verdict} at {where}")
    metric = table["metric"].iloc[0]
    words = words or f"{candidate} vs {baseline}"
    # Arms on clusters of their own (a scheme, a backend) share no rounds.
    how = "paired by round" if table["paired"].all() else "unpaired (separate blocks)"
    if decided:
        how += ", decided round by round"
    return f"{words}, {metric} {how} (±{table.attrs['tolerance']:.1%} tolerance): " + "; ".join(
        parts
    )


def _each_with_its_reason(rows: pd.DataFrame, labels: list[str] | None) -> str:
    """Undecided points, each followed by its own reason: points that share a reason
    word for word are listed together before it, so ``1 B, 16 B (reason a), 64k B
    (reason b)``. One point's reason never stands for another's."""
    by_reason: dict[str, list[str]] = {}
    for i, reason in rows["reason"].items():
        by_reason.setdefault(str(reason), []).append(labels[i] if labels else "every point")
    return ", ".join(f"{', '.join(where)} ({reason})" for reason, where in by_reason.items())


def _rounds_taken(row: Row) -> str:
    """``5 rounds``, and for a point still undecided what its reason says after them."""
    taken = f"{row['n']} round{'s' * (row['n'] != 1)}"
    reason = str(row.get("reason") or "")
    return f"{taken}: {reason.partition('): ')[2] or reason}" if reason else taken


def versus_text(
    result: ResultLike,
    column: str,
    baseline: Any,
    candidate: Any,
    words: str = "",
    metric: str | None = None,
) -> str:
    """:func:`versus_line`, wrapped to 100 columns as the summaries are: what a notebook
    prints as a conclusion of its own run (of ``metric``, the kind's own by default)."""
    return "\n".join(fit([versus_line(result, column, baseline, candidate, words, metric)]))


def warnings_text(result: ResultLike) -> str:
    """A result's warnings as its summary prints them, wrapped to 100 columns: what a
    run made with ``-q`` (which prints nothing) still owes the page it is shown on.
    Empty when the run had none."""
    return "\n".join(fit([f"warning: {w}" for w in result.warnings]))

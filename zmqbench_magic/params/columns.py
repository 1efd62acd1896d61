"""A result's columns that are not parameters: a :class:`Metric` is a measured quantity
(its column, title and unit), a :class:`Column` what a sample row records about itself
or what the summary adds per point. With the parameters they make up every column a
user meets, so the column reference in the documentation is generated from here and
from each kind's own (``BenchParams.columns``), and a test checks that a real run has
no column missing from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# A sample's row, column name -> value, as a loop builds it and the results read it.
# Its columns are open (each kind, pattern, far end and driver adds its own, every one
# declared here or among a kind's parameters and checked against a real run), so a row
# stays a mapping; the name says which mapping it is.
Row = dict[str, Any]
# A latency point's every round trip: the point's settings and run, as its rows carry
# them, and ``rtt_hist``, a log histogram's JSON (results.statistics.histogram).
Distribution = dict[str, Any]
# What a run keeps beside its rows, as JSON: the environment and host facts it ran in,
# its name and id, its notes, and what its kind adds (a cluster's, the arms' drivers').
Metadata = Mapping[str, Any]


@dataclass(frozen=True)
class Metric:
    """A measured quantity: the DataFrame column (unit in the name), its title and its
    unit, which every axis, legend and line takes from here."""

    name: str
    title: str
    help: str
    better: str = ""  # "higher" or "lower": which way a comparison calls faster
    unit: str = ""

    @property
    def axis_title(self) -> str:
        """``delivered (msgs/s)``."""
        return with_unit(self.title, self.unit)

    def __post_init__(self) -> None:
        if self.better not in ("", "higher", "lower"):
            msg = f"better must be higher, lower or empty, got {self.better!r}"
            raise ValueError(msg)


def with_unit(title: str, unit: str) -> str:
    """``title (unit)``, or the title alone for a quantity without a unit."""
    return f"{title} ({unit})" if unit else title


@dataclass(frozen=True)
class Column:
    """A bookkeeping column: its name and its meaning."""

    name: str
    help: str


# Every kind's sample rows; each kind adds its own (``BenchParams.columns``).
SAMPLE_COLUMNS = (
    Column("run", "the run's label, or an id made from the benchmark and the time"),
    Column("benchmark", "the benchmark kind's name: thr, lat or flood"),
    Column("sample", "the round the sample was taken in, from 0"),
    Column(
        "order",
        "the sample's place in its round's random order (the run's seed is metadata['order_seed'])",
    ),
    Column("t_start_s", "when the sample started, seconds from the run's start"),
    Column(
        "other_load",
        "the share of the machine's CPU that other processes used during the sample; "
        "NaN when the sample was too short to tell",
    ),
)

SUMMARY_COLUMNS = (
    Column("n", "samples of the point (rounds)"),
    Column("ci_low", "the lower end of the headline metric's median's interval"),
    Column("ci_high", "the upper end of that interval"),
    Column("ci_level", "the confidence the interval reaches with n samples (0.98 with 10)"),
    Column("<metric>_min", "the headline metric's smallest sample"),
    Column("<metric>_max", "the headline metric's largest sample"),
    Column("spread", "the headline metric's standard deviation over its mean (population)"),
)

__all__ = ["SAMPLE_COLUMNS", "SUMMARY_COLUMNS", "Column", "Metric", "with_unit"]

"""The result columns that are neither a parameter nor a metric: what each sample row
records about itself, and what the summary adds per point. With the parameters and
the metrics they make up every column a user meets, so the column reference in the
documentation is generated from here (and a test checks that a real run has no
column missing from it)."""

from __future__ import annotations

from dataclasses import dataclass

from .sockets import COUNT, HELD_FRACTION, LatencyParams, ThroughputParams
from .taskflood import TEST, FloodParams


@dataclass(frozen=True)
class Column:
    """A bookkeeping column: its name, its meaning, and the benchmarks that have it
    (none named: every one)."""

    name: str
    help: str
    benchmarks: tuple[str, ...] = ()

    def of(self, benchmark: str) -> bool:
        """Whether a result of ``benchmark`` has this column."""
        return not self.benchmarks or benchmark in self.benchmarks


_THR, _LAT, _FLOOD = (
    (ThroughputParams.benchmark,),
    (LatencyParams.benchmark,),
    (FloodParams.benchmark,),
)
_ZMQ = _THR + _LAT

# fmt: off
SAMPLE_COLUMNS = (
    Column("run", "the run's label, or an id made from the benchmark and the time"),
    Column("benchmark", "thr, lat or flood"),
    Column("sample", "the round the sample was taken in, from 0"),
    Column("order", "the sample's place in its round's random order (the run's seed is "
                    "metadata['order_seed'])"),
    Column("block", "the cluster size's block of rounds (a flood sweeps its engine counts "
                    "in blocks, so the cluster is resized once per block)", _FLOOD),
    Column("t_start_s", "when the sample started, seconds from the run's start"),
    Column("other_load", "the share of the machine's CPU that other processes used during "
                         "the sample; NaN when the sample was too short to tell"),
    Column("test", f"the flood's test, a setting of the whole run: {TEST.help}", _FLOOD),
    Column("count", f"messages (round trips) in the sample: {COUNT.option}, or as calibrated",
           _ZMQ),
    Column("frames", "frames per message (a cell's multipart payload)", _ZMQ),
    Column("hwm", "the high-water mark of each queue, messages", _ZMQ),
    Column("far_end", "the far end's process id, or its thread's id", _ZMQ),
    Column("cpu_clock", "which clock counted the CPU columns: process or thread", _ZMQ),
    Column("elapsed_s", "the sample's measured time, seconds", _ZMQ),
    Column("received", "messages delivered in the sample (under the count: lost)", _THR),
    Column("late", "messages that arrived after a loss was declared, drained", _THR),
    Column("send_elapsed_s", "the sender's send calls alone, seconds", _THR),
    Column("queue_capacity", "messages the two ZeroMQ queues and the kernel's socket "
                             "buffers hold between the ends", _THR),
    Column("round_trips", "round trips the sample timed", _LAT),
    Column("min_us", "the fastest round trip of the sample (the summary: of the point)",
           _LAT),
    Column("held", f"an offered rate answered at {HELD_FRACTION:.0%} or more (the summary: "
                   "by every sample)", _LAT),
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
# fmt: on

__all__ = ["SAMPLE_COLUMNS", "SUMMARY_COLUMNS", "Column"]

"""What a ZeroMQ sample measures (``%zmqthr``, ``%zmqlat``): each kind's metrics, with
the CPU and memory every sample records, and a latency point's pooled percentiles."""

from __future__ import annotations

from .declare import Metric
from .patterns import CLIENT_METRICS, PATTERN_METRICS, SEQUENCE_METRICS
from .pressure import AGE_METRICS, HELD_FRACTION, JOIN_METRICS, PRESSURE_METRICS

# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
# One round trip, as the latency charts draw them (a distribution's x, a load curve's y).
RTT = Metric("rtt_us", "round trip", "one round trip's time", "lower", unit="µs")

# CPU per message, each end (netperf's "service demand"); one declaration for both
# benchmarks, where a latency "message" is one round trip.
_CPU_CLOCK = (
    "; a far end in its own process counts the whole process (ZeroMQ's I/O thread "
    "included), a far end in a thread counts that thread and the driver its own"
)
SEND_CPU = Metric(
    "send_cpu_us_per_msg", "sender CPU per message",
    "CPU time of the sending end (latency: the driver) per message or round trip"
    + _CPU_CLOCK, "lower", unit="µs")
RECV_CPU = Metric(
    "recv_cpu_us_per_msg", "receiver CPU per message",
    "CPU time of the receiving end (latency: the echoing far end) per message or round "
    "trip" + _CPU_CLOCK, "lower", unit="µs")
# Resident memory of each end over a kept sample (zmqbench_magic.method.resident): what
# copying or zero-copy sends cost in memory, beside what they cost in time.
_PEAK = (
    "; the kernel's own high-water mark, set back as the sample starts; NaN where the "
    "end is not a process of its own on this host"
)
MEMORY_METRICS = (
    Metric("driver_peak_mb", "driver peak memory",
           "peak resident memory of the driving process during the sample (a far end in a "
           "thread is inside it)" + _PEAK, "lower", unit="MB"),
    Metric("far_peak_mb", "far end peak memory",
           "peak resident memory of the far end's process during the sample" + _PEAK,
           "lower", unit="MB"),
    # What the queues grew to: a slow consumer's backlog, held in both processes.
    Metric("driver_growth_mb", "driver memory growth",
           "how far the driving process's resident memory rose during the sample, its "
           "peak less its size as the sample started (a queue filling shows here)"
           + _PEAK, "lower", unit="MB"),
    Metric("far_growth_mb", "far end memory growth",
           "how far the far end's resident memory rose during the sample, its peak less "
           "its size as the sample started" + _PEAK, "lower", unit="MB"),
)
THR_METRICS = (
    Metric("msgs_per_s", "delivered",
           "messages delivered per second, first to last receive at the receiver", "higher",
           unit="msgs/s"),
    Metric("send_msgs_per_s", "send-only",
           "messages per second through the sender's send calls alone, timed over a "
           "sample's first sends that its own queue holds (send_only_count), which no full "
           "queue can slow: what a send call costs the application", "higher",
           unit="msgs/s"),
    Metric("mbit_per_s", "bandwidth", "delivered payload megabits (10^6) per second",
           "higher", unit="Mbit/s"),
    *PATTERN_METRICS,
    *SEQUENCE_METRICS,
    *PRESSURE_METRICS,
    *AGE_METRICS,
    *JOIN_METRICS,
    SEND_CPU,
    RECV_CPU,
    *MEMORY_METRICS,
)
# A latency sample's own figures: the DataFrame's columns, one row per sample, for the
# spread between samples and the paired comparisons.
LAT_METRICS = (
    Metric("sample_mean_us", "a sample's mean round trip",
           "mean round-trip time of one sample", "lower", unit="µs"),
    Metric("sample_p50_us", "a sample's median round trip",
           "50th percentile of one sample's round trips", "lower", unit="µs"),
    Metric("sample_p90_us", "a sample's p90 round trip",
           "90th percentile of one sample's round trips", "lower", unit="µs"),
    Metric("sample_p99_us", "a sample's p99 round trip",
           "99th percentile of one sample's round trips", "lower", unit="µs"),
    Metric("sample_p999_us", "a sample's p99.9 round trip",
           "99.9th percentile of one sample's round trips", "lower", unit="µs"),
    Metric("max_us", "slowest round trip",
           "slowest round trip of the sample (the summary: of the point)", "lower", unit="µs"),
    Metric("achieved_per_s", "achieved rate",
           "round trips answered per second, from the first intended send to the last "
           "reply (closed loop: one over the mean round trip); under "
           f"{HELD_FRACTION:.0%} of an offered rate, that rate was not held",
           "higher", unit="msgs/s"),
    Metric("send_lag_p99_us", "p99 send lag",
           "open loop: 99th percentile of how late each message left after its intended "
           "send time (the sender's own pacing, or a full queue); NaN in a closed loop",
           "lower", unit="µs"),
    *CLIENT_METRICS,
    SEND_CPU,
    RECV_CPU,
    *MEMORY_METRICS,
)
# A latency point's figures over every round trip of all its samples (the summary's,
# the text's and the charts'): a stall in one sample shows in them.
LAT_POOLED = (
    Metric("mean_us", "mean round trip", "mean of every round trip of the point", "lower",
           unit="µs"),
    Metric("p50_us", "median round trip",
           "50th percentile of every round trip of the point", "lower", unit="µs"),
    Metric("p90_us", "p90 round trip", "90th percentile of every round trip of the point",
           "lower", unit="µs"),
    Metric("p99_us", "p99 round trip", "99th percentile of every round trip of the point",
           "lower", unit="µs"),
    Metric("p999_us", "p99.9 round trip",
           "99.9th percentile of every round trip of the point", "lower", unit="µs"),
    Metric("round_trips", "round trips", "how many round trips the figures are taken over"),
)
# fmt: on

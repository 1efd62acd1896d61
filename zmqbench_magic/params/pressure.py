"""The pace of a ZeroMQ run: an offered rate (``--rate``: latency's open loop, a
throughput sender's pace), a pause before each round trip (``%zmqlat --idle``), and
queues under pressure (``%zmqthr --work``, ``--slow-peers``): consumers slower than
their producer, and what the queues between them then do (a PUSH waits for room, a PUB
drops); their figures and the settings they refuse.

A throughput point with an offered rate or working receivers runs as a pattern
(:meth:`.socket_point.SocketPoint.crowd_shape`), the one-to-one pipeline as a pattern
of one receiver, so that one loop paces and one loop works.
"""

from __future__ import annotations

import math
from typing import Any

from .declare import Metric, Param
from .patterns import PATTERNS, PIPELINE, Pattern, patterns_where

# fmt: off
RATE = Param(
    "rate", 0.0,
    "offered load, messages per second (k and M are powers of 1000): the sender sends "
    "each message at its intended time, whether or not the far end keeps up; %zmqlat "
    "times each round trip from that time (over DEALER/ROUTER), %zmqthr counts what "
    "arrived and how long the sender waited for room (each sender of a pattern at this "
    "rate); 0: unpaced (%zmqlat: a closed loop, REQ/REP ping-pong; %zmqthr: as fast as "
    "the sender can)",
    # The lowest open-loop rate: a sample (10 messages or more) then lasts a second.
    "offered rate", "rate", unit="msgs/s", low=10, high=10_000_000, sweep=True,
    off=0.0, off_means="unpaced", said="at {} msgs/s",
)
IDLE = Param(
    "idle", 0.0,
    "pause before each round trip (a closed loop), so each is the first after that "
    "long idle: what a pair costs when it wakes (libzmq #4673, #3577); a sample is "
    "--count round trips, by default enough pauses to last min-time",
    "idle before each round trip", "duration", unit="s", low=0.001, high=60.0, sweep=True,
    off=0.0, off_means="back to back", phrase="after {} idle",
)
WORK = Param(
    "work", 0.0,
    "time each receiver spends on every message it takes, a busy wait (so it holds at "
    "any rate): a consumer slower than its producer, whose queues then fill (a PUSH "
    "waits for room, a PUB drops); with --slow-peers K only the first K receivers of a "
    "pattern work",
    "receiver's work per message", "duration", unit="s", low=1e-6, high=1.0, sweep=True,
    off=0.0, off_means="none", phrase="{} of work per message",
)
SLOW_PEERS = Param(
    "slow_peers", 0,
    "how many of a pattern's receivers do --work, the first K, while the others take "
    "messages as they come: one slow subscriber among fast ones (libzmq #3280)",
    "receivers that work", "int", low=1, high=256, off=0, off_means="every receiver",
)
CONFLATE = Param(
    "conflate", False,
    "each receiver's socket keeps only the newest message (ZMQ_CONFLATE), so a slow "
    "consumer reads fresh messages and the others are replaced (counted as lost); "
    "pipeline, pubsub and proxy (its subscribers); a message of one frame (libzmq "
    "refuses multipart messages with it); needs --sequence true and --rate, so that "
    "each read's age (age_ms) is known",
    "receiver keeps newest only", "bool", choices=(False, True), sweep=True,
    labels=("queued", "conflated"),
)
PRESSURE_METRICS = (
    Metric("sent_per_s", "sent",
           "the rate a sender achieved over its own time (paced: its n sends span n - 1 "
           "intervals, from the first one's intended time to the last send; the slowest "
           "sender's where a pattern has several): against --rate, whether the offered "
           "rate was held", "higher", unit="msgs/s"),
    Metric("blocked_share", "blocked",
           "the share of a paced sender's time (--rate) spent waiting for room in a full "
           "queue (a PUSH, or a PUB with --nodrop, at its high-water mark; the most "
           "blocked sender's); empty when unpaced", "lower"),
)
# How old a message is when a receiver reads it: known where the hub sends numbered
# messages at --rate to receivers on this machine (the send and the read on one clock).
AGE_METRICS = (
    Metric("age_ms", "age at read",
           "the median, over every message any receiver read, of the time from the hub's "
           "send of it to the receiver's read (after its work on the one before): what a "
           "queue ahead of a slow consumer costs in staleness, and what --conflate saves; "
           "NaN without --sequence true and --rate", "lower", unit="ms"),
    Metric("freshest_peer_age_ms", "age at read, least late receiver",
           "the lowest of the receivers' own median ages at read: how late the messages of "
           "the receiver that keeps up best arrive, beside a slow one (libzmq #3280: does "
           "one slow subscriber make the others' messages late?); NaN without --sequence "
           "true and --rate", "lower", unit="ms"),
)
# A slow joiner's figures (--pattern joiner); empty at every other pattern.
JOIN_METRICS = (
    Metric("join_ms", "time to first message",
           "from a subscriber's connect to its first message, while the publisher sends "
           "at --rate: the slow joiner's window (its connection and its subscription "
           "reaching the publisher)", "lower", unit="ms"),
    Metric("missed_at_join", "missed at join",
           "messages the publisher sent after the subscriber's connect that it never "
           "saw: those sent before its subscription arrived", "lower", unit="msgs"),
)
# fmt: on
# A slow joiner connects once this share of a sample's messages has been published,
JOIN_AFTER = 0.25
# and is given this long after it to connect, subscribe and hear messages: a join takes
# milliseconds on an idle machine, but a sample that ended before a busy one's join got
# there measured nothing (a subscriber with 0 messages).
JOIN_ROOM_S = 0.5


def joiner_count(rate: float) -> int:
    """The fewest messages a slow joiner's sample at ``rate`` may publish: enough for
    :data:`JOIN_ROOM_S` after the subscriber joins."""
    return math.ceil(rate * JOIN_ROOM_S / (1 - JOIN_AFTER))


def paced_count(rate: float, min_time: float, pattern: Pattern = PIPELINE) -> int:
    """A paced sample's count: it lasts count / rate whatever the machine, so no trial
    sample is needed to find one lasting ``min_time`` (and a slow joiner's trials of
    ten messages would end before it joined); a joiner's, at least
    :func:`joiner_count`."""
    count = max(math.ceil(rate * min_time), 2)
    return max(count, joiner_count(rate)) if pattern.joins_late else count


# An open-loop sample "held" its rate when it answered (sent) at least this share of it.
HELD_FRACTION = 0.95


def check_pressure(params: Any) -> None:
    """A ValueError for pacing or working that a setting cannot take, before anything
    starts."""
    rate, work = any(params.rate), any(params.work)
    if params.slow_peers and not work:
        msg = (
            f"{SLOW_PEERS.option} {params.slow_peers}: only receivers that work are slow; "
            f"add {WORK.option}"
        )
        raise ValueError(msg)
    if not (rate or work):
        return
    longest = max(params.work)
    if longest >= params.timeout:
        msg = (
            f"work {WORK.label(longest)} per message: a receiver would spend longer on one "
            f"message than the --timeout of {params.timeout:g} s that its sender waits for "
            "room; give a shorter --work or a longer --timeout"
        )
        raise ValueError(msg)
    what = "--rate paces the sender" if rate else "--work slows the receivers"
    refusals = [
        (
            rate
            and "native" in params.loop
            and (params.sequence or any(PATTERNS[p].joins_late for p in params.pattern)),
            "of numbered messages in the Python loop alone: use --loop python",
        ),
        ("asyncio" in params.loop, "of a pattern's loop: --loop asyncio drives one socket"),
        (True in params.curve, "of a pattern: --curve true encrypts one far end's path"),
        (params.driver == "process", "of a pattern: --driver process drives one far end"),
    ]
    for refused, why in refusals:
        if refused:
            raise ValueError(f"{what} {why}")


def check_joiner(params: Any) -> None:
    """A ValueError for a slow joiner with no publisher already sending, or several."""
    if not any(PATTERNS[p].joins_late for p in params.pattern):
        return
    if not all(params.rate):
        msg = (
            "--pattern joiner: a subscriber joins a publisher that is already sending; give "
            "every --rate above 0"
        )
        raise ValueError(msg)
    if params.peers != (1,) or params.sequence:
        msg = (
            "--pattern joiner joins one subscriber, its messages always numbered: leave out "
            "--peers and --sequence"
        )
        raise ValueError(msg)
    fastest = max(params.rate)
    if params.count and params.count < joiner_count(fastest):
        after_ms = params.count * (1 - JOIN_AFTER) / fastest * 1e3
        msg = (
            f"--pattern joiner at --rate {RATE.label(fastest)}: count {params.count:,} leaves "
            f"the subscriber {after_ms:.3g} ms after it joins; give at least "
            f"{joiner_count(fastest):,} ({JOIN_ROOM_S:g} s), or leave the count out to have "
            "it set by each rate"
        )
        raise ValueError(msg)


def check_conflate(params: Any) -> None:
    """A ValueError for ``--conflate true`` where no read's age can be known, or where
    its receivers are not the hub's."""
    if True not in params.conflate:
        return
    what = f"{CONFLATE.option} true"
    conflating = patterns_where("conflates")
    others = sorted(set(params.pattern) - set(conflating))
    refusals = [
        (not params.sequence, "each read's age comes from its number: add --sequence true"),
        (not all(params.rate), "each read's age is from its paced send: give every --rate above 0"),
        (
            bool(others),
            f"its receivers hear one publisher or pusher: {', '.join(conflating)}, "
            f"not {' '.join(others)}",
        ),
        (set(params.loop) != {"python"}, "ages are read in the Python loop: use --loop python"),
        (bool(params.remote), "a send and its read share this machine's clock: leave out --remote"),
    ]
    for refused, why in refusals:
        if refused:
            raise ValueError(f"{what}: {why}")


def held(sent_per_s: float, rate: float) -> bool:
    """Whether a sender achieved its offered rate (within :data:`HELD_FRACTION`)."""
    return sent_per_s >= HELD_FRACTION * rate


__all__ = [
    "AGE_METRICS",
    "CONFLATE",
    "HELD_FRACTION",
    "IDLE",
    "JOIN_METRICS",
    "PRESSURE_METRICS",
    "RATE",
    "SLOW_PEERS",
    "WORK",
    "check_conflate",
    "check_joiner",
    "check_pressure",
    "held",
    "joiner_count",
    "paced_count",
]

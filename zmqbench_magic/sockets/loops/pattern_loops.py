"""One throughput sample of a pattern (:mod:`.crowd`): the receivers armed, the senders
sent, each receiving far end's own count and times, and the figures they make.

The aggregate rate is every delivery of every receiver, timed from the first receive
anywhere to the last (one clock, the machine's monotonic one, which every process
reads; receivers on other hosts share no clock, so there it is over the longest
receiver's own first to last receive); each peer's own rate is its deliveries over
its own first to last receive (a sender's, in ``fanin``: its sends over its own
sending time), and the slowest is named. ``lost`` is what should
have arrived and did not, counted exactly: the senders' counts are known, and a
receiver short of its share waits for the senders' word that they are done, then a
silence, before it reports. With numbered messages (``--sequence true``) ``lost`` is
counted from the numbers each receiver missed, and must agree with that count.
Numbered messages sent at a rate by the hub to receivers on this machine have known
ages: the hub keeps each send's time, each receiver each read's (one clock again), and
``age_ms`` is the median of read time less send time over every message read.
"""

from __future__ import annotations

import bisect
import math
import time
from array import array
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypedDict, cast

from ...method.control import gc_off
from ...method.load import CpuMeter
from ...params.columns import Row
from ...params.pressure import JOIN_AFTER
from ..far_ends.peer import PeerError
from ..kernel.crowd import Crowd, Member
from ..payload import Payload
from ..protocol import (
    GO,
    SENT,
    Join,
    JoinReport,
    MemberReport,
    Numbered,
    Receive,
    ReceiveFigures,
    ReceiveReport,
    Send,
    SendFigures,
    SendReport,
)
from .member_loops import Received, receive
from .numbering import NUMBER_MASK, missing, union
from .own_thread import OwnThread, on_own_thread
from .pair import UNNUMBERED, native_bytes, send_all, send_all_native, send_all_numbered
from .pressure_loops import (
    Schedule,
    numbered_sender_for,
    paced_sends,
    paced_sends_native,
    sender_for,
)
from .queues import queue_capacity
from .timing import send_only_count, send_rate, two_phases


class AgedSends(SendFigures, total=False):
    sent_at: array[float]  # a paced hub's first try to send each numbered message


class HubFigures(AgedSends, Received, total=False):
    """Whichever of the hub's loops ran (none: no socket), beside the far ends' reports."""


class _Working(TypedDict):
    work: float  # seconds on each message, for the first slow_peers receivers (0: all)
    slow_peers: int


def pattern_sample(
    crowd: Crowd,
    payload: Payload,
    count: int,
    copy: bool,
    loop: str = "python",
    *,
    sequence: bool = False,
    rate: float = 0.0,
    work: float = 0.0,
    slow_peers: int = 0,
) -> tuple[Row, float]:
    """A sample of ``count`` messages from each sender (the hub: ``count`` in all);
    with ``sequence`` each message numbered (:mod:`.numbering`), and its row says which
    went missing; each sender paced to ``rate`` messages a second, and the first
    ``slow_peers`` receivers (0: all) working ``work`` seconds on each message
    (:mod:`.pressure_loops`). Numbered and paced from the hub to receivers on this
    machine, each message's age when read is known (``age_ms``)."""
    frames = len(payload.frames)
    working = _Working(work=work, slow_peers=slow_peers)
    # One clock for the hub's sends and the reads: receivers on this machine.
    aged = sequence and bool(rate) and crowd.hub_sends and not crowd.doors
    _arm_receivers(crowd, count, sequence, working, copy=copy, frames=frames, loop=loop, aged=aged)
    burst = send_only_count(count, crowd.hwm)
    message = tuple(bytes(memoryview(f)) for f in payload.frames) if crowd.senders else ()
    for index, sender in enumerate(crowd.senders, 1):
        order = Send(
            cmd="send",
            count=count,
            burst=burst,
            copy=copy,
            loop=loop,
            copy_threshold=crowd.copy_threshold,
        )
        crowd.arm([sender], _numbered_and_paced(order, index if sequence else 0, rate), message)
    meter, clock = CpuMeter(crowd.pids), crowd.cpu_clock
    meter.start()
    with gc_off():
        cpu_start = clock()
        # The far ends that send (a fan-in's, a proxy's publishers beside the hub) go
        # first; the hub sends alongside them or receives what they send.
        for sender in crowd.senders:
            crowd.command(sender, GO)
        hub_loop: Callable[[], SendFigures | Received]
        if crowd.hub_sends and rate:
            hub_loop = partial(_hub_paced, crowd, payload, count, copy, loop, sequence, rate, aged)
        elif crowd.hub_sends:
            hub_loop = partial(_hub_send, crowd, payload, count, copy, loop, burst, sequence)
        else:
            hub_loop = partial(_hub_receive, crowd, count, copy, frames, loop, sequence, work)
        # On a thread of its own, as a pair's loop (own_thread: the heap it allocates from).
        hub_thread = on_own_thread(hub_loop)
        hub, hub_cpu = hub_thread.value, _hub_cpu(crowd, clock() - cpu_start, hub_thread)
        for sender in crowd.senders:
            if not crowd.reported(sender):
                sender.report = crowd.report(sender, 2 * crowd.timeout)
        for receiver in crowd.receivers:
            crowd.command(receiver, SENT)
        for receiver in crowd.receivers:
            receiver.report = crowd.report(receiver, 2 * crowd.timeout)
    other_load = meter.stop()
    row, elapsed = _row(crowd, payload, count, hub, hub_cpu, other_load)
    if sequence:
        row |= _numbered_row(crowd, count, _received(crowd.receivers) or [hub], row)
        row |= _ages(crowd.receivers, hub)
    return row, elapsed


def _numbered_and_paced(order: Send, sender: int, rate: float) -> Send:
    """A far sender's order, its messages stamped with its number ``sender`` (0: not
    numbered) and paced to ``rate`` (0: flat out)."""
    if sender:
        order["sender"] = sender
    if rate:
        order["rate"] = rate
    return order


def _hub_cpu(crowd: Crowd, clocked: float, hub_thread: OwnThread) -> float:
    """The hub's CPU seconds: what the kernel's clock read, when it is the whole
    process's (far ends of their own), else the hub's own thread's."""
    return clocked if crowd.peer == "process" else hub_thread.cpu


def _arm_receivers(
    crowd: Crowd,
    count: int,
    sequence: bool,
    working: _Working,
    *,
    copy: bool,
    frames: int,
    loop: str,
    aged: bool,
) -> None:
    """Each receiving far end armed; numbered, told which senders it hears (the hub is
    sender 0; a pair's receiver hears its own sender) and how many each sends; the
    first ``working["slow_peers"]`` (0: all) told to work ``working["work"]`` seconds
    on each message; ``aged``: each read's stamp and time sent back."""
    expect = crowd.expected_each(count)
    slow = working["slow_peers"] or len(crowd.receivers)
    for index, receiver in enumerate(crowd.receivers, 1):
        order = Receive(
            cmd="receive",
            expect=expect,
            work=working["work"] if index <= slow else 0.0,
            copy=copy,
            frames=frames,
            loop=loop,
            ages=aged,
        )
        if sequence:
            heard = [index] if crowd.pattern.in_pairs else [0]
            order["numbered"] = Numbered(senders=heard, count=count)
        crowd.arm([receiver], order)


def _hub_paced(
    crowd: Crowd,
    payload: Payload,
    count: int,
    copy: bool,
    loop: str,
    sequence: bool,
    rate: float,
    aged: bool = False,
) -> SendFigures | AgedSends:
    """The hub's sends at ``rate`` a second, each at its intended time, and the time
    it waited for room in full queues (:mod:`.pressure_loops`); ``aged``, each
    numbered message's first try to send it too (``"sent_at"``, indexed by its
    number). The native loop paces unnumbered messages in C."""
    assert crowd.data is not None
    crowd.data.copy_threshold = crowd.copy_threshold
    if loop == "native":
        schedule = Schedule(rate)
        frame = native_bytes(crowd, payload)
        paced_sends_native(crowd.data, frame, copy, schedule, count, crowd.check_stall)
        return schedule.figures(count)
    if sequence:
        send_one = numbered_sender_for(crowd.data, native_bytes(crowd, payload), 0)
    else:
        send_one = sender_for(crowd.data, list(payload.frames), copy)
    if not aged:
        schedule = Schedule(rate)
        paced_sends(crowd.data, send_one, schedule, 0, count, crowd.check_stall)
        return schedule.figures(count)
    sent_at: array[float] = array("d")
    send_numbered, keep, now = send_one, sent_at.append, time.perf_counter
    tried = [0.0]

    def send_kept(i: int, flags: int) -> None:
        # The time of its first try (without waiting), read before the send: the
        # message was ready then, and a read can never seem to precede it (a clock
        # read after the send lags it whenever the woken I/O thread takes the core).
        if flags:
            tried[0] = now()
        send_numbered(i, flags)  # a full queue raises: the retry waits for room
        keep(tried[0])

    schedule = Schedule(rate)
    paced_sends(crowd.data, send_kept, schedule, 0, count, crowd.check_stall)
    return {**schedule.figures(count), "sent_at": sent_at}


def _ages(receivers: list[Member], hub: HubFigures) -> dict[str, float]:
    """``age_ms``: the median age, in ms, of every message the ``receivers`` read, its
    read time less the hub's send time of its number (the two frames after each
    report); ``freshest_peer_age_ms``: the lowest of each receiver's own median age (a
    slow receiver's late reads cannot hide the others' in it); nothing where the hub
    kept no send times."""
    if "sent_at" not in hub:
        return {}
    import numpy as np

    sent = np.frombuffer(hub["sent_at"], dtype=np.float64)
    ages = []
    for member in receivers:
        stamps, read_at = member.attached[-2:]
        numbers = (np.frombuffer(stamps, dtype=np.uint64) & NUMBER_MASK).astype(np.int64)
        known = numbers < len(sent)  # a stray number has no send time
        ages.append(np.frombuffer(read_at, dtype=np.float64)[known] - sent[numbers[known]])
    every = np.concatenate(ages) if ages else np.empty(0)
    own = [float(np.median(one)) * 1e3 for one in ages if one.size]
    return {
        "age_ms": float(np.median(every)) * 1e3 if every.size else math.nan,
        "freshest_peer_age_ms": min(own, default=math.nan),
    }


def _hub_send(
    crowd: Crowd, payload: Payload, count: int, copy: bool, loop: str, burst: int, sequence: bool
) -> SendFigures:
    """The hub's sends, timed as the pipeline's are (:func:`.pair.throughput_sample`)."""
    assert crowd.data is not None
    crowd.data.copy_threshold = crowd.copy_threshold
    if sequence:
        # The hub is sender 0; each message is stamped into a copy of these bytes.
        frame = native_bytes(crowd, payload)
        send_from = partial(send_all_numbered, crowd, frame, 0, loop)
    elif loop == "native":
        frame = native_bytes(crowd, payload)
        send_from = partial(send_all_native, crowd, frame, copy)
    else:
        put = crowd.data.send if len(payload.frames) == 1 else crowd.data.send_multipart
        send_from = partial(send_all, crowd, put, payload.message, copy)
    burst_elapsed, elapsed = two_phases(send_from, burst, count)
    return {"sent": count, "burst": burst, "burst_elapsed": burst_elapsed, "elapsed": elapsed}


# The hub starts publishing this long after the joiner is armed with its time to join.
_LEAD_S = 0.05


def joiner_sample(
    crowd: Crowd, payload: Payload, count: int, copy: bool, loop: str = "python", *, rate: float
) -> tuple[Row, float]:
    """A slow joiner's sample: the hub publishes ``count`` numbered messages at
    ``rate``, each send's time kept; a quarter of the way in, the subscriber connects
    (at a time both read on the machine's one clock). What it missed is what the hub
    sent from its connect on, before the first message it got; what it lost, what it
    did not get from its first message on. Python's loop (``loop``: only it paces)."""
    del loop
    assert crowd.data is not None
    (joiner,) = crowd.receivers
    schedule = Schedule(rate, start=time.perf_counter() + _LEAD_S)
    joins_at = schedule.start + math.ceil(count * JOIN_AFTER) / rate
    crowd.arm([joiner], Join(cmd="join", url=crowd.hub_url, at=joins_at, count=count, copy=copy))
    sent_at: array[float] = array("d")
    numbered = numbered_sender_for(crowd.data, native_bytes(crowd, payload), 0)

    def send_one(i: int, flags: int) -> None:
        numbered(i, flags)
        sent_at.append(time.perf_counter())

    meter, clock = CpuMeter(crowd.pids), crowd.cpu_clock
    meter.start()
    with gc_off():
        cpu_start = clock()
        hub_thread = on_own_thread(
            partial(paced_sends, crowd.data, send_one, schedule, 0, count, crowd.check_stall)
        )
        hub_cpu = _hub_cpu(crowd, clock() - cpu_start, hub_thread)
        crowd.command(joiner, SENT)
        joiner.report = crowd.report(joiner, 2 * crowd.timeout)
    other_load = meter.stop()
    report = cast(JoinReport, joiner.report)  # a joiner's
    if report["received"] < 2:
        msg = f"the {crowd.describe()}'s subscriber got {report['received']} messages after joining"
        raise PeerError(msg)
    hub = cast(HubFigures, schedule.figures(count))  # a sender's figures
    row, elapsed = _row(crowd, payload, count, hub, hub_cpu, other_load)
    # What was sent from its connect on, before its first message, it missed (the
    # window); from its first message on, every message should have come.
    after_connect = bisect.bisect_left(sent_at, report["connected_at"])
    row |= {
        "lost": max(count - report["first_number"] - report["received"], 0),
        "join_ms": (report["first"] - report["connected_at"]) * 1e3,
        "missed_at_join": max(report["first_number"] - after_connect, 0),
    }
    return row, elapsed


def _hub_receive(
    crowd: Crowd, count: int, copy: bool, frames: int, loop: str, sequence: bool, work: float
) -> Received:
    """The hub's receives (``fanin``): every sender's ``count``, or short of them, until
    all have reported done and a silence followed; ``work`` seconds on each. Nothing
    where the hub has no socket (far ends send to far ends)."""
    if crowd.data is None:
        return {}
    order = Receive(
        cmd="receive",
        expect=crowd.expected_total(count),
        work=work,
        copy=copy,
        frames=frames,
        loop=loop,
        ages=False,
    )
    if sequence:
        order["numbered"] = Numbered(senders=list(range(1, len(crowd.senders) + 1)), count=count)
    return receive(
        crowd.data,
        order,
        notice=lambda: all(crowd.reported(s) for s in crowd.senders),
        timeout=crowd.timeout,
    )


def _numbered_row(crowd: Crowd, count: int, receiving: Sequence[ReceiveFigures], row: Row) -> Row:
    """What the numbers say went missing: ``lost`` counted from them, which must agree
    with the count (a PeerError names both where it does not)."""
    if crowd.expected_each(count):
        lost = sum(r["missed"] for r in receiving)
        gaps = sum(r["gaps"] for r in receiving)
        firsts = [r["first_lost"] for r in receiving if r["first_lost"] is not None]
        first_lost: float = min(firsts, default=math.nan)
        most: float = max(r["missed"] for r in receiving)
    else:
        # A PUSH shares its messages among its receivers: only their bitmaps together
        # say which went, and no receiver's own share, or loss, is known.
        came = union([m.attached[0] for m in crowd.receivers])
        gaps, lost, first = missing(came, count)
        first_lost, most = math.nan if first is None else first, math.nan
    counted = crowd.expected_total(count) - row["received"]
    if lost != counted:
        msg = (
            f"the {crowd.describe()}'s numbered messages say {lost} went missing, its counts "
            f"{counted} (of {crowd.expected_total(count)}, {row['received']} received)"
        )
        raise PeerError(msg)
    return {
        "lost": lost,
        "gaps": gaps,
        "first_lost": first_lost,
        "most_lost_by_one_peer": most,
        "reordered": sum(r["reordered"] for r in receiving),
    }


def _reports(members: list[Member]) -> list[MemberReport]:
    reports = [m.report for m in members]
    assert all(r is not None for r in reports), "a report read before it came"
    return [r for r in reports if r is not None]


def _received(receivers: list[Member]) -> list[ReceiveReport]:
    """The receivers' reports: each armed to receive (or join), each a ReceiveReport."""
    return [cast(ReceiveReport, r) for r in _reports(receivers)]


def _sent(senders: list[Member]) -> list[SendReport]:
    """The far senders' reports: each armed to send, each a SendReport."""
    return [cast(SendReport, r) for r in _reports(senders)]


def _rate(received: int, first: float, last: float) -> float:
    """Deliveries per second, first to last receive (they span ``received - 1``)."""
    return (received - 1) / (last - first) if received > 1 and last > first else math.nan


def _row(
    crowd: Crowd,
    payload: Payload,
    count: int,
    hub: HubFigures,
    hub_cpu: float,
    other_load: float,
) -> tuple[Row, float]:
    receivers, senders = _received(crowd.receivers), _sent(crowd.senders)
    receiving: Sequence[ReceiveFigures] = receivers or [hub]
    # A hub that sends is one sender, beside a proxy's publishers.
    sending = [hub] * crowd.hub_sends + senders or [hub]
    received = sum(r["received"] for r in receiving)
    got = [r for r in receiving if r["received"]]
    if received < 2 or not got:
        msg = f"the {crowd.describe()} received {received} of {crowd.expected_total(count)}"
        raise PeerError(msg)
    if crowd.doors and crowd.hub_sends:
        # Receivers on other hosts share no clock: every delivery over the longest
        # receiver's own first to last receive (they all run at once).
        elapsed = max(r["last"] - r["first"] for r in got)
        msgs_per_s = (received - len(got)) / elapsed if elapsed > 0 else math.nan
    else:
        first, last = min(r["first"] for r in got), max(r["last"] for r in got)
        elapsed, msgs_per_s = last - first, _rate(received, first, last)
    if not crowd.receivers:
        # One receiver, the hub: each sender's own figure is its sends over its own time.
        peer_rates = {m.name: send_rate(r) for m, r in zip(crowd.senders, sending, strict=True)}
    else:
        peer_rates = {
            m.name: _rate(r["received"], r["first"], r["last"])
            for m, r in zip(crowd.receivers, receiving, strict=True)
        }
    sent = sum(r["sent"] for r in sending)
    far_send_cpu = sum(r["cpu_s"] for r in senders)
    send_cpu = hub_cpu + far_send_cpu if crowd.hub_sends else far_send_cpu
    recv_cpu = sum(r["cpu_s"] for r in receivers) if crowd.receivers else hub_cpu
    expected = crowd.expected_total(count)
    timed_sends = [r for r in sending if r["burst_elapsed"] > 0]
    sent_per_s = min((send_rate(r) for r in sending if r["elapsed"] > 0), default=math.nan)
    blocked = [
        r["blocked_s"] / r["elapsed"] for r in sending if "blocked_s" in r and r["elapsed"] > 0
    ]
    timed_peers = {name: rate for name, rate in peer_rates.items() if not math.isnan(rate)}
    slowest_peer = min(timed_peers, key=timed_peers.__getitem__, default="")
    slowest = timed_peers.get(slowest_peer, math.nan)
    fastest = max(timed_peers.values(), default=math.nan)
    return {
        "received": received,
        "late": sum(r.get("late", 0) for r in receiving),
        "lost": max(expected - received, 0),
        "msgs_per_s": msgs_per_s,
        "slowest_peer_msgs_per_s": slowest,
        "fastest_peer_msgs_per_s": fastest,
        "peer_fairness": slowest / fastest if fastest else math.nan,
        "slowest_peer": slowest_peer,
        **UNNUMBERED,
        "send_msgs_per_s": (
            sum(r["burst"] / r["burst_elapsed"] for r in timed_sends) if timed_sends else math.nan
        ),
        "sent_per_s": sent_per_s,
        "blocked_share": max(blocked, default=math.nan),
        "send_only_count": sending[0]["burst"],
        "mbit_per_s": msgs_per_s * payload.size * 8 / 1e6,
        "elapsed_s": elapsed,
        "send_elapsed_s": max(r["elapsed"] for r in sending),
        "queue_capacity": queue_capacity(crowd.transport, crowd.hwm, payload.size),
        "other_load": other_load,
        "send_cpu_us_per_msg": send_cpu / sent * 1e6,
        "recv_cpu_us_per_msg": recv_cpu / received * 1e6,
        "cpu_clock": "process" if crowd.peer == "process" else "thread",
    }, elapsed


__all__ = ["joiner_sample", "pattern_sample"]

"""The topologies' parameters (``--pattern``, ``--peers``; latency's ``--clients``),
their metrics, and the rules they obey: which settings a pattern of many far ends
refuses, and when its ends outnumber the machine's cores.

The pipeline with one peer is the one-to-one PUSH/PULL run every earlier result is;
the other patterns have a side of N far ends (:mod:`zmqbench_magic.sockets.kernel.crowd`).
One client is the one REQ/REP pair every earlier latency result is; N clients are N
REQ far ends on this process's one ROUTER.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

from .columns import Column
from .declare import Metric, Param
from .far_end import remote_hosts

# The stamp a numbered message carries first (sockets/loops/numbering.py writes and reads it).
STAMP_BYTES = 8

# A publisher's and a ROUTER's own rule for a full queue, said beside a sample that
# lost messages ({hwm}: the queue's high-water mark).
_PUB_DROPS = (
    "A PUB drops a subscriber's messages once that subscriber's queue is full (its "
    "high-water mark, {hwm:,} messages): ZeroMQ's own rule."
)
_ROUTER_DROPS = (
    "A ROUTER drops a message whose receiver's queue is full (its high-water mark, "
    "{hwm:,} messages), unless --mandatory true (ZMQ_ROUTER_MANDATORY): ZeroMQ's own rule."
)
# What else loses messages where a pattern's own sockets never drop.
KNOWN_DROPS = "libzmq is known to drop messages over ipc (libzmq issue #4660)."


@dataclass(frozen=True)
class Pattern:
    """One topology of many far ends, registered once in :data:`PATTERNS`: its sockets,
    who sends, what it may lose, its rules and its words. Every layer reads what differs
    between patterns from here, so no code names a pattern to branch on it.

    The kernel's one socket is the hub; the side of N is the far ends' (a socket each,
    ``sockets/far_ends/member.py`` by its role). The booleans say what the code does differently
    for the patterns that have them."""

    name: str  # what --pattern takes, and a result's ``pattern`` column: "pubsub"
    help: str  # what it is, in --pattern's help after its name
    peers_are: str  # what --peers counts in it, in --peers' help: "subscribers"
    hub: str  # the hub's ZeroMQ socket type ("XPUB"); "": every end a far end (pairs)
    member: str = ""  # the role of each of its N far ends: "subscriber"
    member_name: str = ""  # each one's name in messages, "{}" its number: "subscriber {}"
    hub_sends: bool = True  # the hub sends (False: it receives, from N senders)
    joined_first: bool = False  # the hub waits for every far end to join (a publisher
    # drops what is sent before a subscription arrives; a ROUTER learns its receivers)
    dealt: bool = False  # the hub deals its messages among its receivers (PUSH,
    # ROUTER): each one's share is unknown, and the messages are counted once in all
    publishes: bool = False  # the hub's publisher may wait when full (--nodrop)
    routed: bool = False  # each message carries its receiver's routing id: --mandatory
    # applies, and the native loop (which sends no id) cannot drive it
    spreads: bool = False  # its N far ends may run on other hosts (--remote): each is
    # one socket the hub reaches (a proxy's subscribers reach the proxy, a pair's ends
    # each other)
    conflates: bool = False  # its receivers hear the hub alone (--conflate)
    through_proxy: bool = False  # a proxy far end between the hub and its N
    # (--publishers adds publishers beside the hub)
    in_pairs: bool = False  # each of its N is two far ends, a sender and its receiver
    joins_late: bool = False  # its one subscriber connects mid-run, at --rate
    serves: bool = False  # the hub answers N clients' requests (latency's --clients)
    offered: bool = True  # one of --pattern's choices (clients: latency's --clients)
    drops: str = KNOWN_DROPS  # why a sample lost messages ({hwm}: the queue's mark)

    def ends(self, peers: int, publishers: int = 1) -> int:
        """The processes (or threads) it keeps busy: this one and its far ends (a
        proxy's, and the publishers beside this process's PUB)."""
        proxy = publishers if self.through_proxy else 0  # the proxy and N - 1 publishers
        return 1 + (2 * peers if self.in_pairs else peers) + proxy

    def words(self, peers: int) -> str:
        """``pubsub 4 peers``; ``joiner`` (one subscriber, always); ``16 clients``."""
        if self.joins_late:
            return self.name
        if self.serves:
            return CLIENTS.words(peers)
        return f"{self.name} {PEERS.words(peers)}"

    def why_lost(self, hwm: int) -> str:
        return self.drops.format(hwm=hwm)


# fmt: off
PIPELINE = Pattern(
    "pipeline", "this process's PUSH to PULL, load-balanced over N PULLs with --peers N",
    "receivers", "PUSH", "sink", "receiver {}", dealt=True, spreads=True, conflates=True,
)
PUBSUB = Pattern(
    "pubsub", "this process's PUB to N SUB", "subscribers",
    # An XPUB publishes as a PUB does, and hears each subscription (verbose: every
    # one, not only the first of a topic), so the run starts once all have joined.
    "XPUB", "subscriber", "subscriber {}", joined_first=True, publishes=True,
    spreads=True, conflates=True, drops=_PUB_DROPS,
)
FANIN = Pattern(
    "fanin", "N PUSH into this process's PULL", "senders", "PULL", "source", "sender {}",
    hub_sends=False, spreads=True,
)
PAIRS = Pattern(
    "pairs", "N PUSH/PULL pairs at once, every end a far end", "pairs", "",
    hub_sends=False, in_pairs=True,
)
PROXY = Pattern(
    "proxy", "this process's PUB through an XSUB/XPUB zmq proxy to N SUB", "subscribers",
    "XPUB", "subscriber", "subscriber {}", joined_first=True, publishes=True,
    conflates=True, through_proxy=True, drops=_PUB_DROPS,
)
JOINER = Pattern(
    "joiner", "a SUB that connects while this process's PUB publishes at --rate: the "
    "time to its first message, and what it missed, ZeroMQ's slow joiner", "subscribers",
    # The slow joiner's publisher: it hears when the subscription arrives.
    "XPUB", "joiner", "joining subscriber", joins_late=True, drops=_PUB_DROPS,
)
ROUTER = Pattern(
    "router", "this process's ROUTER addressing each message to N DEALERs in turn: it "
    "drops a message whose receiver's queue is full, unless --mandatory true",
    # Each message to the next receiver by its routing id (hub.RoutedSocket).
    "receivers", "ROUTER", "dealer", "receiver {}", joined_first=True, dealt=True,
    routed=True, drops=_ROUTER_DROPS,
)
CLIENTS_SERVED = Pattern(
    "clients", "N REQ clients on this process's ROUTER, which echoes every request",
    # Without ROUTER_MANDATORY: a reply to a client that died is dropped; the server
    # looks at its clients' processes as it goes (client_loops.serve) and names it.
    "clients", "ROUTER", "client", "client {}", hub_sends=False, serves=True, offered=False,
)
# fmt: on
# Every pattern, by name: --pattern's choices in this order, then latency's clients.
PATTERNS: dict[str, Pattern] = {
    p.name: p for p in (PIPELINE, PUBSUB, FANIN, PAIRS, PROXY, JOINER, ROUTER, CLIENTS_SERVED)
}


def offered() -> tuple[Pattern, ...]:
    """The patterns --pattern takes, as registered now (a test may add one)."""
    return tuple(p for p in PATTERNS.values() if p.offered)


class _OfferedNames(Sequence[str]):
    """--pattern's choices: the offered patterns' names, read from :data:`PATTERNS`
    each time, so a pattern registered later is a choice too."""

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return tuple(p.name for p in offered())[index]

    def __len__(self) -> int:
        return len(offered())


def register_pattern(pattern: Pattern) -> None:
    """Add ``pattern`` to :data:`PATTERNS`: --pattern takes it from then on (its help,
    written once as the package loads, names the patterns registered then)."""
    if pattern.name in PATTERNS:
        msg = f"a pattern named {pattern.name} is registered already"
        raise ValueError(msg)
    PATTERNS[pattern.name] = pattern


def unregister_pattern(name: str) -> None:
    """Remove a pattern :func:`register_pattern` added."""
    del PATTERNS[name]


_OFFERED = offered()  # as the package loads: the help's
_SWEPT_PEERS = tuple(p for p in _OFFERED if not p.joins_late)  # a joiner has one peer


def pattern_of(name: object) -> Pattern:
    """The record of a pattern's name (a point's, a result row's); the one-to-one
    pipeline where none is given (an old result's rows, a run of one far end)."""
    return PATTERNS[name] if isinstance(name, str) and name in PATTERNS else PIPELINE


def _series(items: Any, joined_by: str = "or") -> str:
    """``a, b or c`` (``joined_by="and"``: ``a, b and c``)."""
    *most, last = items
    return f"{', '.join(most)} {joined_by} {last}" if most else last


def patterns_where(has: str) -> tuple[str, ...]:
    """The offered patterns' names that have the record field ``has``, for a message."""
    return tuple(p.name for p in offered() if getattr(p, has))


# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
PATTERN = Param(
    "pattern", PIPELINE.name,
    "the sockets' topology: " + _series(f"{p.name} ({p.help})" for p in _OFFERED),
    "pattern", "choice", choices=_OfferedNames(), sweep=True,
)
PEERS = Param(
    "peers", 1,
    "the pattern's N: " + _series(
        f"{counted} ({', '.join(p.name for p in _SWEPT_PEERS if p.peers_are == counted)})"
        for counted in dict.fromkeys(p.peers_are for p in _SWEPT_PEERS)
    ) + ", each a far end of its own",
    "peers", "int", low=1, high=256, sweep=True, phrase="{} peer|{} peers",
)
PUBLISHERS = Param(
    "publishers", 1,
    "publishers into the proxy (--pattern proxy): this process's PUB and N - 1 far ends "
    "publishing alongside it, each its own --count, as libzmq's proxy_thr has two; each "
    "subscriber then gets N x --count",
    "publishers", "int", low=1, high=64, phrase="{} publisher|{} publishers",
)
NODROP = Param(
    "nodrop", False,
    "a publisher whose subscriber's queue is full waits for room (ZMQ_XPUB_NODROP), as "
    "a PUSH does, instead of dropping the message (false, ZeroMQ's way); pubsub and "
    "proxy (this process's PUB and the proxy's XPUB alike, as libzmq's proxy_thr has them)",
    "publisher waits when full", "bool", choices=(False, True),
)
SEQUENCE = Param(
    "sequence", False,
    "number every message, so each receiver knows which it missed: the sender writes "
    "each message's number into its first 8 bytes (so each message is built fresh, a "
    "copy per message even with --copy false) and each receiver reads it, which costs "
    "both loops time; gives gaps, first_lost and the most one receiver lost beside lost; "
    "needs --size 8 or more and a message of one frame",
    "numbered messages", "bool", choices=(False, True),
)
CLIENTS = Param(
    "clients", 1,
    "REQ clients at once on one server, this process's ROUTER echoing every request "
    "(libzmq #3830's question): each client a far end of its own running its own closed "
    "loop of --count round trips, every round trip timed and pooled into the point's "
    "percentiles; 1: the one REQ/REP pair",
    "clients", "int", low=1, high=256, sweep=True, phrase="{} client|{} clients",
)
# A latency sample's spread between its clients (one client: its own median).
CLIENT_METRICS = (
    Metric("slowest_client_p50_us", "slowest client's median",
           "the highest of the clients' own median round trips in the sample (one client: "
           "the sample's median): a client the server serves last shows here, where the "
           "pooled percentiles mix it with the others", "lower", unit="µs"),
)
PATTERN_METRICS = (
    Metric("lost", "lost",
           "messages that should have arrived and did not, all receivers together "
           "(a PUB drops a subscriber's messages once its queue is full; PUSH never drops)",
           "lower", unit="msgs"),
    Metric("slowest_peer_msgs_per_s", "slowest peer",
           "the slowest far end's own rate: a receiver's deliveries over its own first to "
           "last receive (fanin: a sender's sends over its own sending time)", "higher",
           unit="msgs/s"),
    Metric("fastest_peer_msgs_per_s", "fastest peer",
           "the fastest far end's own rate, as the slowest's", "higher", unit="msgs/s"),
    Metric("peer_fairness", "fairness",
           "the slowest peer's rate over the fastest's: 1 when every peer is served alike",
           "higher"),
)
# What numbered messages (--sequence true) tell beyond the count of lost ones; NaN
# without them (unknown, not none).
SEQUENCE_METRICS = (
    Metric("gaps", "gaps",
           "runs of consecutive messages missing, every receiver's and sender's together: "
           "one burst dropped is one gap (NaN without --sequence)", "lower"),
    Metric("first_lost", "first lost",
           "the lowest message number any receiver missed, counted from 0 in each sample "
           "(NaN when none was missed, or without --sequence)"),
    Metric("most_lost_by_one_peer", "most lost by one receiver",
           "the most messages any one receiver missed: which receiver's queue overflowed "
           "(NaN without --sequence, and in a pipeline of N receivers, whose shares "
           "are unknown)", "lower", unit="msgs"),
    Metric("reordered", "reordered",
           "numbered messages that came with a number lower than the next one expected "
           "from their sender: duplicated or out of order (NaN without --sequence)",
           "lower", unit="msgs"),
)
MANDATORY = Param(
    "mandatory", False,
    "the router's ROUTER waits for room in a full receiver's queue (ZMQ_ROUTER_MANDATORY: "
    "EAGAIN without waiting), as a PUSH does, instead of dropping the message (false, "
    "ZeroMQ's way), and a receiver that has gone is an error (EHOSTUNREACH) rather than "
    "a silent drop; --pattern router",
    "ROUTER waits when full", "bool", choices=(False, True),
)
# fmt: on
PATTERN_COLUMNS = (
    Column(
        "slowest_peer",
        "which far end was the slowest peer, and its host where it ran on another one "
        "(--remote): subscriber 3 on 10.0.0.2",
    ),
)


def check_sequence(params: Any) -> None:
    """A ValueError for ``--sequence true`` with a message it cannot number, or a loop
    that runs no pattern (a numbered one-to-one pipeline runs as a pattern of one)."""
    if not params.sequence:
        return
    smallest = min(params.size)
    if smallest < STAMP_BYTES:
        msg = (
            f"{SEQUENCE.option} true writes each message's number into its first "
            f"{STAMP_BYTES} bytes: --size must be from {STAMP_BYTES} B, got {smallest} B"
        )
        raise ValueError(msg)
    refusals = [
        ("asyncio" in params.loop, "--loop asyncio drives one socket: use python or native"),
        (True in params.curve, "--curve true encrypts one far end's path: leave it out"),
        (params.driver == "process", "--driver process drives one far end: leave it out"),
    ]
    for refused, why in refusals:
        if refused:
            raise ValueError(f"{SEQUENCE.option} true: {why}")


def check_sequenced_message(frames: int, size: int) -> None:
    """A ValueError for a message of the cell form (or ``payload=``) that
    ``--sequence true`` cannot number: one frame of 8 bytes or more."""
    if frames != 1 or size < STAMP_BYTES:
        msg = (
            f"{SEQUENCE.option} true numbers a message of one frame of {STAMP_BYTES} bytes "
            f"or more, got {frames} frame{'s' * (frames != 1)} of {size} B in all"
        )
        raise ValueError(msg)


def check_pattern(params: Any) -> None:
    """A ValueError for a setting that drives one far end, where a pattern has many,
    or one that no pattern of the sweep has a use for."""
    chosen = [PATTERNS[name] for name in params.pattern]
    if params.nodrop and not any(p.publishes for p in chosen):
        publishers = " or ".join(patterns_where("publishes"))
        msg = f"{NODROP.option} true: only a publisher drops; add {PATTERN.option} {publishers}"
        raise ValueError(msg)
    if params.publishers > 1 and not (len(chosen) == 1 and chosen[0].through_proxy):
        msg = (
            f"{PUBLISHERS.option} {params.publishers}: publishers feed a proxy; give "
            f"{PATTERN.option} {' or '.join(patterns_where('through_proxy'))} alone"
        )
        raise ValueError(msg)
    if params.publishers > 1 and params.sequence:
        msg = (
            f"{PUBLISHERS.option} {params.publishers}: {SEQUENCE.option} true numbers one "
            "publisher's messages through a proxy: leave one of them out"
        )
        raise ValueError(msg)
    if params.mandatory and not any(p.routed for p in chosen):
        routers = " or ".join(patterns_where("routed"))
        msg = f"{MANDATORY.option} true: only a ROUTER routes; add {PATTERN.option} {routers}"
        raise ValueError(msg)
    if chosen == [PIPELINE] and params.peers == (1,):
        _one_far_end_one_host(params.remote, f"{PATTERN.option} and {PEERS.option}")
        return
    what = f"{PATTERN.option} {' '.join(params.pattern)} {PEERS.option} "
    what += " ".join(str(n) for n in params.peers)
    refusals = [
        ("asyncio" in params.loop, "--loop asyncio drives one socket: use python or native"),
        (
            bool(params.remote) and not all(p.spreads for p in chosen),
            f"--remote spreads the peers of {_series(patterns_where('spreads'), 'and')} over "
            f"hosts; {_series((p.name for p in offered() if not p.spreads), 'and')} run on this "
            "machine: leave out --remote",
        ),
        (True in params.curve, "--curve true encrypts one far end's path: leave it out"),
        (params.driver == "process", "--driver process drives one far end: leave it out"),
        (
            any(p.routed for p in chosen) and "native" in params.loop,
            "a router's messages each carry their receiver's routing id, which the native "
            "loop does not send: use --loop python",
        ),
    ]
    for refused, why in refusals:
        if refused:
            raise ValueError(f"{what}: {why}")


def _one_far_end_one_host(remote: str, spread_by: str) -> None:
    hosts = remote_hosts(remote)
    if len(hosts) > 1:
        msg = (
            f"remote names {len(hosts)} hosts, and one far end runs on one: give one, or "
            f"spread a pattern's peers over them with {spread_by}"
        )
        raise ValueError(msg)


def check_clients(params: Any) -> None:
    """A ValueError for a setting that N clients' closed loops cannot take."""
    if params.clients == (1,):
        _one_far_end_one_host(params.remote, CLIENTS.option)
        return
    what = f"{CLIENTS.option} {' '.join(str(n) for n in params.clients)}"
    refusals = [
        (
            any(params.rate),
            "--rate offers one DEALER's open loop, clients run closed loops: leave out --rate",
        ),
        (
            any(params.idle),
            "--idle pauses one pair's loop, clients run back to back: leave out --idle",
        ),
        ("asyncio" in params.loop, "--loop asyncio drives one socket: use python or native"),
        (True in params.curve, "--curve true encrypts one pair's path: leave it out"),
        (
            params.driver == "process",
            "--driver process (or --python) drives one far end: leave it out",
        ),
    ]
    for refused, why in refusals:
        if refused:
            raise ValueError(f"{what}: {why} (or use {CLIENTS.option} 1)")


def crowded_clients(clients: tuple[int, ...]) -> list[str]:
    """Clients and their server outnumbering the cores: said before the run."""
    cores, most = os.cpu_count() or 1, max(clients)
    if most == 1 or most + 1 <= cores:
        return []
    return [
        f"{CLIENTS.words(most)} and their server keep {most + 1} ends busy on {cores} "
        "cores: their round trips include waiting for a core"
    ]


def crowded_cores(
    patterns: tuple[str, ...], peers: tuple[int, ...], publishers: int = 1
) -> list[str]:
    """Ends that outnumber the cores share them: said before the run."""
    cores = os.cpu_count() or 1
    ends, pattern, n = max((PATTERNS[p].ends(n, publishers), p, n) for p in patterns for n in peers)
    if ends <= cores:
        return []
    return [
        f"{pattern} with {PEERS.words(n)} keeps {ends} ends busy on {cores} cores: its "
        "figures measure the OS scheduler as much as ZeroMQ"
    ]

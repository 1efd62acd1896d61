"""Every control message between the kernel and its far ends (and its driver
processes), declared once.

Two protocols, each JSON over a PAIR socket the kernel binds and the far end connects:

- **a pair's far end** (:mod:`.peer`: a PULL sink, a REP echo, a ROUTER for an offered
  rate), driven by :class:`.link.Link`: the far end says :class:`Ready`; each sample,
  the kernel sends a :class:`PeerOrder`, the far end answers :class:`Armed`, the data
  moves, and it reports (:class:`SinkReport`, :class:`EchoReport`);
- **a pattern's member** (:mod:`.member`: a subscriber, receiver, sender, proxy, joining
  subscriber or client), driven by :class:`.crowd.Crowd`: the member says
  :class:`MemberReady`; each sample, the kernel arms it with a :class:`Receive`,
  :class:`Send`, :class:`Ping` or :class:`Join` (a sender's message frames after the
  JSON), it answers :class:`Armed`; a sender or client waits for :class:`GO`, a
  receiver for the last message or :data:`SENT` and a silence; then its report
  (:class:`ReceiveReport` and the others), with any frames after it.

Either ends with :data:`QUIT`; a far end that fails answers :class:`Failed`. A far
end on another host is opened first at its door (:mod:`.standing`, a REP the kernel's
REQ asks): :class:`DoorOpen`, answered :class:`DoorAnswer` or :class:`Failed`. Every
receive on both sides is bounded (a far end that hears nothing for its timeout leaves).

A report is its loop's figures (:class:`SinkFigures`, :class:`ReceiveFigures` and the
others; the kernel's hub makes receive and send figures with the same loops) and the
CPU the loop took (:class:`CpuUse`), which the far end adds once the loop is done.

A fresh driver process (``--driver process``: :mod:`.worker`, started by
:mod:`.driver`) runs both ends of a round and speaks JSON lines on its stdin and
stdout: the kernel writes a :class:`DriverJob`, then a :class:`TakeSample` per sample
and :data:`QUIT`; the process answers :class:`DriverReady` once its far end is up, a
:class:`SampleTaken` per sample, :class:`Closed` once its far end has ended cleanly,
or :class:`DriverFailed`; and :class:`Alive` every second meanwhile.

The types are what the code on both sides builds and reads: a field added here is
added everywhere it is used, and the type checker holds both sides to it.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from ..params.columns import Row
from ..params.point_record import Settings

# --- either far end -----------------------------------------------------------------


class Armed(TypedDict):
    """In its loop, waiting for the data (or, armed to send, for :data:`GO`)."""

    armed: Literal[True]


class Failed(TypedDict):
    """What went wrong, in words, before the far end leaves."""

    error: str


class Quit(TypedDict):
    cmd: Literal["quit"]


QUIT: Quit = {"cmd": "quit"}

# Which clock counted a loop's CPU: the whole process's (a far end of its own), or
# only its thread's (a far end in the kernel's process).
CpuClock = Literal["process", "thread"]


class CpuUse(TypedDict):
    """The CPU a far end's loop took, and which clock counted it."""

    cpu_s: float
    cpu_clock: CpuClock


# --- a pair's far end (peer.py) -------------------------------------------------------


class Ready(TypedDict):
    """Both its sockets connected: its process id (its thread's, a thread far end)."""

    ready: int


# A pair's far end's loops: receive (throughput), echo (closed loop), route (open).
PeerCommand = Literal["sink", "echo", "route"]
PeerLoop = Literal["python", "native"]


class PeerOrder(TypedDict):
    """One sample's loop: ``count`` messages (round trips) of ``frames`` frames, its
    Python or native loop (an asyncio driver's far end runs Python's)."""

    cmd: PeerCommand
    count: int
    copy: bool
    frames: int
    loop: PeerLoop


class SinkFigures(TypedDict, total=False):
    """A sink's loop: what came, over its first to last receive (``late``: messages
    that came after the driver's end, a stalled queue's)."""

    received: int
    elapsed: float
    late: int


class SinkReport(SinkFigures, CpuUse):
    """A sink's sample: its loop's figures and the CPU the loop took."""


class EchoFigures(TypedDict):
    """An echo's loop (a REP's or a ROUTER's): the requests it sent back."""

    echoed: int


class EchoReport(EchoFigures, CpuUse):
    """An echo's sample: its loop's figures and the CPU the loop took."""


# What the kernel may send a pair's far end; what the far end says: ready once, then
# armed and its report each sample.
ToPeer = PeerOrder | Quit
PeerReport = SinkReport | EchoReport
FromPeer = Ready | Armed | PeerReport


# --- a standing far end's door (standing.py) -------------------------------------------


class DoorOpen(TypedDict, total=False):
    """Open a pair's session in ``role`` (its data path CURVE-encrypted with ``curve``),
    or, ``member``, start one pattern member in ``role``; each answers within
    ``timeout`` of silence or leaves."""

    cmd: Literal["open"]
    timeout: float
    role: str
    hwm: int
    curve: bool
    member: bool


class DoorAnswer(TypedDict):
    """Where the opened far end's control and data sockets listen, and its process."""

    ctrl: str
    data: str
    pid: int


# --- a pattern's member (member.py) ---------------------------------------------------


class MemberReady(TypedDict, total=False):
    """Its data socket bound or connected: its process id and where it bound (for the
    kernel to pass on); a proxy's also where its XSUB bound, for publishers beside."""

    ready: int
    endpoint: str
    front: str


class Numbered(TypedDict):
    """``--sequence``: the senders a receiver hears (the hub is sender 0), and how many
    each sends."""

    senders: list[int]
    count: int


class _ReceiveFields(TypedDict):
    cmd: Literal["receive"]
    expect: int  # 0: a share it cannot know (a PUSH's or a ROUTER's among N)
    work: float  # seconds on each message (--work)
    copy: bool
    frames: int
    loop: str
    ages: bool  # each read's stamp and time sent back, as two frames after the report


class Receive(_ReceiveFields, total=False):
    """Receive until ``expect`` came, or (0, or short) until :data:`SENT` and a silence."""

    numbered: Numbered


class _SendFields(TypedDict):
    cmd: Literal["send"]
    count: int
    burst: int  # the first sends timed on their own (the send-only rate)
    copy: bool
    loop: str
    copy_threshold: int


class Send(_SendFields, total=False):
    """Send ``count`` of the message (its frames after the JSON) once told :data:`GO`;
    ``sender``: each message stamped with it and its number; ``rate``: paced."""

    sender: int
    rate: float


class Ping(TypedDict):
    """A client's ``count`` round trips back to back, once told :data:`GO`."""

    cmd: Literal["ping"]
    count: int
    copy: bool
    loop: str
    copy_threshold: int


class Join(TypedDict):
    """Connect to ``url`` at ``at`` (the machine's one clock) while the hub publishes,
    then receive as :class:`Receive` does from the first message on."""

    cmd: Literal["join"]
    url: str
    at: float
    count: int
    copy: bool


class Go(TypedDict):
    cmd: Literal["go"]


class Sent(TypedDict):
    cmd: Literal["sent"]


GO: Go = {"cmd": "go"}
SENT: Sent = {"cmd": "sent"}  # every sender is done: a receiver short of its share stops

# An order that arms a member's loop; what the kernel may send a member (go only to
# one armed to send, sent only to a receiver).
MemberLoopOrder = Receive | Send | Ping | Join
MemberOrder = MemberLoopOrder | Go | Sent | Quit


class ReceiveFigures(TypedDict, total=False):
    """A receive loop's figures (a receiver's, or the kernel's hub's), its first and
    last receive on the machine's monotonic clock; numbered, what it missed
    (``first_lost``: None where it missed nothing)."""

    received: int
    first: float
    last: float
    late: int
    gaps: int
    missed: int
    first_lost: int | None
    reordered: int


class ReceiveReport(ReceiveFigures, CpuUse):
    """A receiver's sample (numbered, its bitmap a frame after it where its share is
    unknown; with ``ages``, each read's stamp and time, two frames)."""


class SendFigures(TypedDict, total=False):
    """A send loop's figures (a sender's, or the kernel's hub's); ``burst`` sends
    timed on their own; paced, how long its sends were blocked."""

    sent: int
    elapsed: float
    burst: int
    burst_elapsed: float
    blocked_s: float


class SendReport(SendFigures, CpuUse):
    """A sender's sample: its loop's figures and the CPU the loop took."""


class PingFigures(TypedDict):
    """A client's round trips: how many, its first send and its last reply."""

    pinged: int
    first: float
    last: float


class PingReport(PingFigures, CpuUse):
    """A client's sample (each round trip's seconds in a float64 frame after it)."""


class JoinFigures(ReceiveFigures, total=False):
    """A joining subscriber's receive: also when it connected and the first number it
    got."""

    connected_at: float
    first_number: int


class JoinReport(JoinFigures, CpuUse):
    """A joining subscriber's sample."""


# A member's report after its loop; what a member says: ready once, then armed and its
# report each sample.
MemberReport = ReceiveReport | SendReport | PingReport | JoinReport
FromMember = MemberReady | Armed | MemberReport

# --- a driver process (worker.py), JSON lines ----------------------------------------

# A point as a message carries it: the settings it names, setting -> value (what
# ``SocketPoint.settings()`` gives and ``SocketPoint.of`` reads).
PointSettings = Settings


class DriverSettings(TypedDict):
    """The run's settings a driver process's samples need (the rest is the kernel's)."""

    count: int
    warmup: int
    min_time: float
    timeout: float
    address: str


class DriverJob(TypedDict):
    """One round of a group of points, the first line: the benchmark, its settings,
    the far end's CPUs (``--cpu``), the points, the counts calibrated already (a
    point's key as its pairs, and its count), the message's frames (base64; None: a
    blank message of each point's size)."""

    benchmark: str
    settings: DriverSettings
    far_cpus: list[int]
    group: list[PointSettings]
    counts: list[tuple[list[Any], int]]
    payload: list[str] | None


class TakeSample(TypedDict):
    """One kept sample of ``point``."""

    cmd: Literal["sample"]
    point: PointSettings


class DriverReady(TypedDict):
    """Its far end is up: its process id, its interpreter and the pyzmq and libzmq it
    loaded, and its ipc endpoints' folder (None: none), for the kernel to remove."""

    ready: int
    environment: dict[str, str]
    ipc_dir: str | None


class SampleTaken(TypedDict):
    """A sample's row (a latency sample's histogram as its JSON)."""

    row: Row


class Closed(TypedDict):
    """Its far end has ended cleanly."""

    closed: Literal[True]


class Alive(TypedDict):
    """Every second: the kernel bounds its wait by the timeout since the last one."""

    alive: Literal[True]


class DriverFailed(Failed):
    """What went wrong, and the error's type: the kernel raises the ones it knows as
    themselves."""

    kind: str


# What the kernel sends a driver process after its job; what the process answers
# (besides Alive and DriverFailed, which the kernel's reader takes itself).
ToDriver = TakeSample | Quit
FromDriver = DriverReady | SampleTaken | Closed


__all__ = [
    "GO",
    "QUIT",
    "SENT",
    "Alive",
    "Armed",
    "Closed",
    "CpuClock",
    "CpuUse",
    "DoorAnswer",
    "DoorOpen",
    "DriverFailed",
    "DriverJob",
    "DriverReady",
    "DriverSettings",
    "EchoFigures",
    "EchoReport",
    "Failed",
    "FromDriver",
    "FromMember",
    "FromPeer",
    "Go",
    "Join",
    "JoinFigures",
    "JoinReport",
    "MemberLoopOrder",
    "MemberOrder",
    "MemberReady",
    "MemberReport",
    "Numbered",
    "PeerCommand",
    "PeerLoop",
    "PeerOrder",
    "PeerReport",
    "Ping",
    "PingFigures",
    "PingReport",
    "PointSettings",
    "Quit",
    "Ready",
    "Receive",
    "ReceiveFigures",
    "ReceiveReport",
    "SampleTaken",
    "Send",
    "SendFigures",
    "SendReport",
    "Sent",
    "SinkFigures",
    "SinkReport",
    "TakeSample",
    "ToDriver",
    "ToPeer",
]

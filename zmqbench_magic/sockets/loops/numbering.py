"""Numbered messages (``--sequence true``): the stamp each sender writes into a
message's first 8 bytes, the tally a receiver keeps of the stamps it reads, and the
figures both make: which messages went missing, in how many runs, from which number.

A stamp is 8 bytes, little-endian: the sender's index in the top 16 bits (0 for the
kernel's hub, 1..N for a pattern's sending far ends), the message's number in its
sample (0..count-1) in the low 48. A receiver marks each stamp in a bitmap of its
senders' numbers as it comes (a bit per message: a sample of millions costs a few
hundred kB), and counts a number lower than the next one expected from its sender
as reordered (a duplicate, or one that came out of order); the gaps, the numbers
missed and the lowest of them are read off the bitmaps once the sample is over, so
a number missing at the tail is missed too, and counting them costs the loop
nothing. Only the standard library: a far end imports it without numpy.
"""

from __future__ import annotations

import ctypes
import struct
import time
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypedDict

import zmq

from ...params.patterns import STAMP_BYTES
from ..protocol import Numbered

# Where a stamp's two halves meet.
SENDER_SHIFT = 48
NUMBER_MASK = (1 << SENDER_SHIFT) - 1
STAMP = struct.Struct("<Q")  # STAMP_BYTES, little-endian
assert STAMP.size == STAMP_BYTES


def stamp_of(sender: int, number: int) -> int:
    """The stamp of message ``number`` from ``sender``.

    >>> hex(stamp_of(3, 5))
    '0x3000000000005'
    """
    return sender << SENDER_SHIFT | number


def read_stamp(message: Any) -> tuple[int, int]:
    """A message's sender and number, from its first 8 bytes.

    >>> read_stamp(stamp_of(2, 7).to_bytes(8, "little") + b"rest")
    (2, 7)
    """
    (stamp,) = STAMP.unpack_from(message)
    return stamp >> SENDER_SHIFT, stamp & NUMBER_MASK


def send_numbered(send: Any, message: bytes, sender: int, first: int, count: int) -> int:
    """Send messages ``first`` to ``count`` of ``sender``, each stamped with its
    number, until the socket's timeout (``zmq.Again``); how far it got.

    Each message is stamped into one buffer that libzmq then copies (``copy=True``
    whatever ``--copy`` says): a zero-copy send would hand libzmq a buffer that the
    next stamp overwrites while the message may still sit in a queue."""
    buffer = bytearray(message)
    stamp, base = STAMP.pack_into, sender << SENDER_SHIFT
    i = first
    try:
        for i in range(first, count):
            stamp(buffer, 0, base | i)
            send(buffer, copy=True)
    except zmq.Again:
        return i
    return count


class NumberedFigures(TypedDict):
    """What one receiver's numbers say (:meth:`Tally.figures`), a part of its report:
    the gaps, the numbers missed and the lowest of them (None: none), and how many
    came out of order."""

    gaps: int
    missed: int
    first_lost: int | None
    reordered: int


@dataclass
class Tally:
    """What one receiver keeps of the stamps it reads: a bitmap of each expected
    sender's numbers, the next number it expects from each, and how many came out of
    order (lower than expected, or from a sender or number it did not expect).

    >>> tally = Tally.of({"senders": [0], "count": 5})
    >>> tally.see(stamp_of(0, number) for number in (0, 1, 3, 2))
    >>> tally.figures()
    {'gaps': 1, 'missed': 1, 'first_lost': 4, 'reordered': 1}
    """

    senders: list[int]
    count: int
    slots: array[int] = field(repr=False)  # a sender's index -> its slot, -1: unexpected
    seen: bytearray = field(repr=False)  # count bits per slot, bit n: number n came
    nexts: array[int] = field(repr=False)  # per slot, the next number expected
    reordered: array[int] = field(repr=False)  # one counter, shared with the C loop

    @classmethod
    def of(cls, numbered: Numbered) -> Tally:
        """A receiver's tally from its order's ``numbered``: the senders it hears
        (their indices) and how many each sends."""
        senders, count = list(numbered["senders"]), int(numbered["count"])
        slots = array("i", [-1] * (max(senders) + 1))
        for slot, sender in enumerate(senders):
            slots[sender] = slot
        return cls(
            senders,
            count,
            slots,
            bytearray(_bitmap_bytes(count) * len(senders)),
            array("q", [0] * len(senders)),
            array("q", [0]),
        )

    def see(self, stamps: Iterable[int]) -> None:
        """Messages' stamps, in the order they came (the C loop does the same)."""
        slots, count, nexts, seen = self.slots, self.count, self.nexts, self.seen
        width, known, reordered = _bitmap_bytes(count) * 8, len(slots), 0
        for stamp in stamps:
            sender, number = stamp >> SENDER_SHIFT, stamp & NUMBER_MASK
            slot = slots[sender] if sender < known else -1
            if slot < 0 or number >= count:
                reordered += 1
                continue
            if number < nexts[slot]:
                reordered += 1
            else:
                nexts[slot] = number + 1
            at = slot * width + number
            seen[at >> 3] |= 1 << (at & 7)
        self.reordered[0] += reordered

    def bitmap(self, slot: int) -> bytes:
        """One sender's numbers that came, a bit each (bit n of the bytes read as one
        little-endian integer: number n)."""
        width = _bitmap_bytes(self.count)
        return bytes(self.seen[slot * width : (slot + 1) * width])

    def figures(self) -> NumberedFigures:
        """Gaps, numbers missed and the lowest of them (None: none) over every sender
        this receiver expected, and how many came out of order."""
        each = [missing(self.bitmap(slot), self.count) for slot in range(len(self.senders))]
        firsts = [first for _, _, first in each if first is not None]
        return {
            "gaps": sum(gaps for gaps, _, _ in each),
            "missed": sum(missed for _, missed, _ in each),
            "first_lost": min(firsts, default=None),
            "reordered": int(self.reordered[0]),
        }


def send_numbered_range(
    data: zmq.Socket, message: bytes, sender: int, loop: str | None, first: int, last: int
) -> None:
    """A sending far end's messages ``first`` to ``last``, each stamped, in Python or
    C (``loop`` "native"); a send that times out (the socket's whole timeout) is the
    receivers' failure, as an unnumbered one's is, and raises ``zmq.Again``."""
    if loop == "native":
        from . import native

        lib = native.library()
        went = native.check(
            lib, lib.zb_send_numbered(data.underlying, message, len(message), first, last, sender)
        )
        done = first + went
    else:
        done = send_numbered(data.send, message, sender, first, last)
    if done < last:
        raise zmq.Again


def receive_numbered_python(
    data: zmq.Socket, most: int, copy: bool, frames: int, tally: Tally
) -> tuple[int, float, float]:
    """As :func:`.member_loops._receive_python`, each message's stamp kept, then read into
    ``tally`` once the last one's time is taken: the loop only appends, about a fifth
    of what reading each stamp into the tally there would add to each receive."""
    del frames  # a numbered message is one frame (params.patterns.check_sequence)
    stamps: array[int] = array("Q")
    get: Any = data.recv  # bytes, or a Frame (copy=False): either a buffer to read
    keep, read, now = stamps.append, STAMP.unpack_from, time.perf_counter
    try:
        keep(read(get(copy=copy))[0])
    except zmq.Again:
        return 0, 0.0, 0.0
    first, got = now(), 1
    try:
        for _ in range(most - 1):
            keep(read(get(copy=copy))[0])
            got += 1
    except zmq.Again:
        ended = now() - int(data.rcvtimeo) / 1000
    else:
        ended = now()
    tally.see(stamps)
    return got, first, ended


@dataclass
class Reads:
    """Each message one receiver read, in order: its stamp, and when the read returned
    (``time.perf_counter``, the machine's one clock): with the hub's send times, each
    message's age when it was read (``--conflate``'s figure)."""

    stamps: array[int] = field(default_factory=lambda: array("Q"))
    at: array[float] = field(default_factory=lambda: array("d"))

    def frames(self) -> list[bytes]:
        """Both arrays as bytes, to travel as frames after a report."""
        return [self.stamps.tobytes(), self.at.tobytes()]


def receive_read_times_python(
    data: zmq.Socket, most: int, copy: bool, frames: int, tally: Tally, reads: Reads
) -> tuple[int, float, float]:
    """As :func:`receive_numbered_python`, each read's stamp and time kept in ``reads``
    (a clock read per message: only where ages are asked for)."""
    del frames  # a numbered message is one frame
    begin = len(reads.stamps)
    keep, at = reads.stamps.append, reads.at.append
    get: Any = data.recv
    read, now = STAMP.unpack_from, time.perf_counter
    got = 0
    try:
        for _ in range(most):
            keep(read(get(copy=copy))[0])
            at(now())
            got += 1
    except zmq.Again:
        ended = now() - int(data.rcvtimeo) / 1000
    else:
        ended = reads.at[-1]
    if not got:
        return 0, 0.0, 0.0
    tally.see(reads.stamps[begin:])
    return got, reads.at[begin], ended


def receive_numbered_native(
    data: zmq.Socket, most: int, copy: bool, frames: int, tally: Tally
) -> tuple[int, float, float]:
    """As :func:`.member_loops._receive_native`, each message's stamp read into ``tally`` in
    C, into the very arrays the tally reads its figures from (no copy either way)."""
    from . import native

    lib = native.library()
    first, last = ctypes.c_double(), ctypes.c_double()
    got = native.check(
        lib,
        lib.zb_sink_numbered(
            data.underlying,
            min(most, 2**62),  # "every message": an int64 all the same
            ctypes.byref(first),
            ctypes.byref(last),
            (ctypes.c_int32 * len(tally.slots)).from_buffer(tally.slots),
            len(tally.slots),
            tally.count,
            (ctypes.c_ubyte * len(tally.seen)).from_buffer(tally.seen),
            (ctypes.c_int64 * len(tally.nexts)).from_buffer(tally.nexts),
            (ctypes.c_int64 * 1).from_buffer(tally.reordered),
        ),
    )
    return got, first.value, last.value


def _bitmap_bytes(count: int) -> int:
    return (count + 7) // 8


def missing(bitmap: bytes, count: int) -> tuple[int, int, int | None]:
    """The gaps (runs of missing numbers), the numbers missed and the lowest of them
    (None: none) of a bitmap of ``count`` numbers.

    >>> missing(bytes([0b1110_0101]), 8)
    (2, 3, 1)
    """
    came = int.from_bytes(bitmap, "little")
    missed = ~came & ((1 << count) - 1)
    if not missed:
        return 0, 0, None
    # A gap starts at a missed number whose predecessor came (or at number 0).
    starts = missed & ~(missed << 1)
    return starts.bit_count(), missed.bit_count(), (missed & -missed).bit_length() - 1


def union(bitmaps: list[bytes]) -> bytes:
    """The numbers any of several receivers got (a PUSH's receivers share its
    messages, so only together do they say which went missing)."""
    width = max((len(b) for b in bitmaps), default=0)
    came = 0
    for bitmap in bitmaps:
        came |= int.from_bytes(bitmap, "little")
    return came.to_bytes(width, "little")


__all__ = [
    "NUMBER_MASK",
    "SENDER_SHIFT",
    "STAMP",
    "NumberedFigures",
    "Reads",
    "Tally",
    "missing",
    "read_stamp",
    "receive_numbered_native",
    "receive_numbered_python",
    "receive_read_times_python",
    "send_numbered",
    "send_numbered_range",
    "stamp_of",
    "union",
]

"""Byte counts as people write them: ``100``, ``1k``, ``64k``, ``1M`` (powers of 1024)."""

from __future__ import annotations

import re

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

_SIZE_RE = re.compile(r"^\s*(\d+)\s*([kKmMgG]?)\s*[bB]?\s*$")
_SIZE_FACTORS = {"": 1, "k": KiB, "m": MiB, "g": GiB}


def parse_size(text: str | int) -> int:
    """Parse a byte count such as ``100``, ``1k``, ``64k`` or ``1M`` (powers of 1024).

    >>> parse_size("64k")
    65536
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    match = _SIZE_RE.match(str(text))
    if isinstance(text, bool) or not match:
        msg = f"expected a whole number of bytes such as 100, 1k or 1M, got {text!r}"
        raise ValueError(msg)
    number, suffix = match.groups()
    return int(number) * _SIZE_FACTORS[suffix.lower()]


def format_size(size: int) -> str:
    """Shortest exact spelling of a byte count: ``65536`` -> ``'64k'``."""
    for suffix, factor in (("G", GiB), ("M", MiB), ("k", KiB)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{suffix}"
    return str(size)


def parse_bool(text: str | bool) -> bool:
    """``true``/``false`` (also yes/no, on/off, 1/0) to a bool."""
    if isinstance(text, bool):
        return text
    lowered = str(text).strip().lower()
    if lowered in ("true", "yes", "on", "1"):
        return True
    if lowered in ("false", "no", "off", "0"):
        return False
    msg = f"expected true or false, got {text!r}"
    raise ValueError(msg)


def spell_size(size: int) -> str:
    """``65536`` -> ``'64k (65536 B)'``, ``100`` -> ``'100 B'``: for messages."""
    short = format_size(size)
    return f"{size} B" if short == str(size) else f"{short} ({size} B)"

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


_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(s|ms|us|µs)?\s*$")
_DURATION_FACTORS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}


def parse_duration(text: str | float) -> float:
    """Parse a duration in seconds such as ``0``, ``0.1``, ``10ms`` or ``500us``.

    >>> parse_duration("10ms")
    0.01
    """
    return _scaled(
        text, _DURATION_RE, _DURATION_FACTORS, "a duration such as 0, 0.1, 10ms or 500us"
    )


def parse_fraction(text: str | float) -> float:
    """Parse a fraction such as ``5%`` or ``0.05``.

    >>> parse_fraction("5%")
    0.05
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    body = str(text).strip()
    try:
        return float(body[:-1]) / 100 if body.endswith("%") else float(body)
    except ValueError:
        msg = f"expected a fraction such as 5% or 0.05, got {text!r}"
        raise ValueError(msg) from None


_RATE_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kKmM]?)\s*(?:/s)?\s*$")
# Rates are counted in thousands, as every rate is (unlike sizes, in 1024s).
_RATE_FACTORS = {"": 1.0, "k": 1e3, "m": 1e6}


def parse_rate(text: str | float) -> float:
    """Parse messages per second such as ``0``, ``500``, ``10k`` or ``1.5M`` (powers of 1000).

    >>> parse_rate("10k")
    10000.0
    """
    return _scaled(text, _RATE_RE, _RATE_FACTORS, "messages per second such as 0, 500, 10k or 1M")


def parse_messages(text: str | int) -> int | str:
    """A count of messages such as ``100``, ``10k`` or ``1M`` (powers of 1000), or
    ``auto``: a high-water mark, or its choice left to the message size.

    >>> parse_messages("10k"), parse_messages("auto")
    (10000, 'auto')
    """
    if isinstance(text, str) and text.strip().lower() == "auto":
        return "auto"
    count = _scaled(text, _RATE_RE, _RATE_FACTORS, "a count of messages such as 0, 100 or 10k")
    if not count.is_integer():
        msg = f"expected a whole number of messages, got {text!r}"
        raise ValueError(msg)
    return int(count)


def _scaled(
    text: str | float, pattern: re.Pattern[str], factors: dict[str, float], expected: str
) -> float:
    """A number with an optional unit or suffix (``10ms``, ``1.5M``), in base units."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    match = pattern.match(str(text))
    if isinstance(text, bool) or not match:
        msg = f"expected {expected}, got {text!r}"
        raise ValueError(msg)
    number, suffix = match.groups()
    return float(number) * factors[(suffix or "").lower()]


def format_rate(rate: float) -> str:
    """``10000.0`` -> ``'10k'``, ``1500000`` -> ``'1.5M'``, ``999_600`` -> ``'1M'`` (not
    ``'1e+03k'``), as :func:`parse_rate` reads."""
    for suffix, factor in (("M", 1e6), ("k", 1e3)):
        # What rounds to 1,000 of the unit below (three figures) is 1 of this one.
        if rate >= factor * 0.9995:
            return f"{rate / factor:.3g}{suffix}"
    return f"{rate:g}"


def format_duration(seconds: float) -> str:
    """``0.01`` -> ``'10ms'``: the shortest of s, ms and us that keeps a whole number."""
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        value = seconds / factor
        if value >= 1 and abs(value - round(value)) < 1e-9:
            return f"{round(value)}{unit}"
    return f"{seconds:g}"


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 size``, ``7 sizes``, ``1 engine``: a count with its noun agreeing."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"

"""tcp addresses as a user writes them, checked before anything starts.

``127.0.0.1``, ``127.0.0.1:5555``, ``[::1]``, ``[::1]:5555``, ``localhost``, ``*``: an
interface to bind, with a port or none (a free one is then chosen). A port is 1 to
65535; an IPv6 literal goes in brackets (ZeroMQ's own syntax); a host name must
resolve. Each failure says which of these it was.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

_EXAMPLES = "e.g. 127.0.0.1, 127.0.0.1:5555, [::1] or [::1]:5555"


@dataclass(frozen=True)
class Address:
    """A tcp interface to bind: host (no brackets), optional port, and whether IPv6."""

    host: str
    port: int | None
    ipv6: bool

    @property
    def bind_host(self) -> str:
        """The host as ZeroMQ's tcp endpoints write it (IPv6 in brackets)."""
        return f"[{self.host}]" if self.ipv6 else self.host

    @property
    def connect_host(self) -> str:
        """Where a far end on this machine connects: a wildcard binds every interface,
        so the loopback of the same family is one of them."""
        if self.host in ("*", "0.0.0.0"):
            return "127.0.0.1"
        if self.host == "::":
            return "[::1]"
        return self.bind_host


def split_address(text: str) -> Address:
    """Parse ``text`` (see the module docstring); ``ValueError`` saying what is wrong.

    >>> split_address("[::1]:5555")
    Address(host='::1', port=5555, ipv6=True)
    >>> split_address("127.0.0.1")
    Address(host='127.0.0.1', port=None, ipv6=False)
    """
    text = str(text).strip()
    if not text:
        msg = f"expected a tcp interface address, {_EXAMPLES}; got nothing"
        raise ValueError(msg)
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest and not rest.startswith(":"):
            msg = f"expected [IPv6]:port, {_EXAMPLES}; got {text!r}"
            raise ValueError(msg)
        port_text = rest[1:] if rest else None
        _check_ipv6(host, text)
        return Address(host, _port(port_text, text), ipv6=True)
    if text.count(":") > 1:
        msg = f"an IPv6 address goes in brackets, e.g. [{text}] or [{text}]:5555; got {text!r}"
        raise ValueError(msg)
    host, sep, port_text = text.partition(":")
    port = _port(port_text if sep else None, text)
    _check_host(host, text)
    return Address(host, port, ipv6=False)


def _port(text: str | None, whole: str) -> int | None:
    if text is None:
        return None
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        msg = (
            f"port must be from 1 to 65535, or left out for a free one (127.0.0.1); "
            f"got {text!r} in {whole!r}"
        )
        raise ValueError(msg)
    return int(text)


def _check_ipv6(host: str, whole: str) -> None:
    if host == "*":
        return
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        msg = f"{host!r} in {whole!r} is not an IPv6 address ({_EXAMPLES})"
        raise ValueError(msg) from None


def _check_host(host: str, whole: str) -> None:
    """An IPv4 literal or the wildcard as it is; a name must resolve (to IPv4)."""
    if host in ("*", ""):
        if not host:
            msg = f"no host in {whole!r}; {_EXAMPLES}"
            raise ValueError(msg)
        return
    try:
        ipaddress.IPv4Address(host)
        return
    except ValueError:
        pass
    try:
        socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        msg = f"cannot resolve the host name {host!r} in {whole!r}: {exc}"
        raise ValueError(msg) from None


def check_address(text: str) -> str:
    """``text`` if it is a valid address (see :func:`split_address`), else ValueError."""
    split_address(text)
    return str(text).strip()


__all__ = ["Address", "check_address", "split_address", "split_url"]


def is_loopback_url(url: str) -> bool:
    """Whether ``tcp://HOST:PORT`` stays on this machine (127.0.0.0/8, ::1, localhost)."""
    host = url.removeprefix("tcp://").rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_url(text: str, schemes: tuple[str, ...], example: str) -> tuple[str, Address]:
    """``[SCHEME://]HOST:PORT`` of a server to connect to: its scheme (one of
    ``schemes``, or "" when none is given) and address; ``ValueError`` naming what is
    wrong and ``example``.

    >>> split_url("tcp://127.0.0.1:8786", ("tcp", "tls"), "tcp://127.0.0.1:8786")
    ('tcp', Address(host='127.0.0.1', port=8786, ipv6=False))
    """
    scheme, found, rest = str(text).strip().rpartition("://")
    allowed = " or ".join(f"{s}://" for s in schemes)
    if found and scheme not in schemes:
        also = f"; the scheme is {allowed} or none" if schemes else " with no scheme"
        msg = f"address {text!r}: give HOST:PORT, e.g. {example}{also}"
        raise ValueError(msg)
    try:
        address = split_address(rest)
    except ValueError as exc:
        msg = f"address {text!r}: {exc}"
        raise ValueError(msg) from None
    if address.port is None or address.host == "*":
        msg = f"address {text!r}: give HOST:PORT, e.g. {example}"
        raise ValueError(msg)
    return scheme, address

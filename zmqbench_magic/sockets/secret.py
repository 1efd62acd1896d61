"""CURVE keys: the secret a far end and its driver share, and sockets set up with it.

A secret is two CURVE key pairs, the far end's (the server) and its driver's (the
client). Whoever holds it can derive both public keys, so a far end that checks the
client's public key (:class:`OnlyKey`, a ZAP handler) obeys only a driver that holds
the same secret, and a driver that checks the server's key talks only to that far end.
The side that binds is the server.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq

from ..params.far_end import SECRET_FILE


@dataclass(frozen=True)
class Keys:
    """The two secret keys (Z85) of a shared secret; the public ones derive from them."""

    server_secret: bytes
    client_secret: bytes

    @classmethod
    def fresh(cls) -> Keys:
        return cls(zmq.curve_keypair()[1], zmq.curve_keypair()[1])

    @property
    def server_public(self) -> bytes:
        return zmq.curve_public(self.server_secret)

    @property
    def client_public(self) -> bytes:
        return zmq.curve_public(self.client_secret)

    def to_json(self) -> str:
        return json.dumps(
            {
                "server_secret": self.server_secret.decode(),
                "client_secret": self.client_secret.decode(),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Keys:
        fields = json.loads(text)
        return cls(fields["server_secret"].encode(), fields["client_secret"].encode())


# A standing far end's door: its tcp:// URL and the secret that reaches it (None: one
# on loopback without a secret).
Door = tuple[str, Keys | None]


def write_secret(path: str | os.PathLike[str]) -> Keys:
    """A fresh secret in a new file readable by its owner only (never overwritten)."""
    keys = Keys.fresh()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(keys.to_json() + "\n")
    return keys


def read_secret(path: str | os.PathLike[str]) -> Keys:
    """The secret in ``path``; a ``ValueError`` saying what is wrong with the file."""
    where = Path(path)
    try:
        mode = where.stat().st_mode
        text = where.read_text()
    except OSError as exc:
        msg = (
            f"secret file {str(where)!r} cannot be read ({exc.strerror}); make one with "
            f"`zmqbench peer {SECRET_FILE.option} PATH` (or `zmqbench secret PATH`) and give the "
            "same file to both sides"
        )
        raise ValueError(msg) from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        msg = f"secret file {str(where)!r} is readable by others: chmod 600 {where}"
        raise ValueError(msg)
    try:
        keys = Keys.from_json(text)
        keys.server_public, keys.client_public  # noqa: B018 - checks both are keys
    except (ValueError, KeyError, TypeError, zmq.ZMQError):
        msg = f"secret file {str(where)!r} holds no zmqbench secret (make a new one)"
        raise ValueError(msg) from None
    return keys


def as_server(sock: zmq.Socket, keys: Keys) -> None:
    """The binding side: proves it holds the server key of the secret."""
    sock.curve_secretkey = keys.server_secret
    sock.curve_publickey = keys.server_public
    sock.curve_server = True


# The monitor events of a CURVE handshake that failed: the other side holds another secret.
HANDSHAKE_FAILED = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)


def as_client(sock: zmq.Socket, keys: Keys) -> None:
    """The connecting side: talks only to the secret's server, with its client key."""
    sock.curve_serverkey = keys.server_public
    sock.curve_publickey = keys.client_public
    sock.curve_secretkey = keys.client_secret


class OnlyKey:
    """A ZAP credentials provider (pyzmq's authenticator) that allows one client key,
    and says on ``log`` whom it refused."""

    def __init__(self, keys: Keys, log: Any) -> None:
        self.allowed, self.log = keys.client_public, log

    def callback(self, domain: str, key: bytes) -> bool:
        if key == self.allowed:
            return True
        self.log("refused a client whose CURVE key is not this secret's")
        return False


def admit_only(ctx: zmq.Context, secret: Keys | None, log: Any) -> Any:
    """A ZAP authenticator on ``ctx`` that admits the secret's client key alone and says
    on ``log`` whom it refused (stop it before the context ends); None without a secret."""
    if secret is None:
        return None
    from zmq.auth.thread import ThreadAuthenticator

    authenticator = ThreadAuthenticator(ctx)
    authenticator.start()
    authenticator.configure_curve_callback("*", OnlyKey(secret, log))
    return authenticator

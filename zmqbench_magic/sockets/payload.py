"""A user's own message: bytes, any buffer (a numpy array, a memoryview), or a list
of them sent as one multipart message; and a cell's value as that message
(``%%zmqthr``, ``%%zmqlat``): the cell runs once in the user's namespace, and its last
expression is what the benchmark sends.

``shell`` is the IPython shell the magic runs in, used as given (its namespace, its
line cache, its traceback display); nothing here imports IPython.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import zmq

from ..params import SIZE

_HOW = (
    "give bytes, a buffer such as a numpy array or memoryview, or a list of them "
    "(one frame each): for text use 'text'.encode(), for other objects "
    "pickle.dumps(obj) or json.dumps(obj).encode()"
)


@dataclass(frozen=True)
class Payload:
    """The frames of one message, ready to send as they are."""

    frames: tuple[Any, ...]

    @property
    def size(self) -> int:
        """Total bytes over all frames."""
        return sum(_nbytes(f) for f in self.frames)

    @property
    def message(self) -> Any:
        """What ``send`` (one frame) or ``send_multipart`` (several) takes."""
        return self.frames[0] if len(self.frames) == 1 else list(self.frames)

    @classmethod
    def of(cls, value: Any) -> Payload:
        """Check and wrap a user's value.

        >>> Payload.of([b"head", bytearray(3)]).size
        7
        """
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if not items:
            msg = f"the message is an empty {type(value).__name__}; {_HOW}"
            raise ValueError(msg)
        return cls(tuple(_frame(item, len(items) > 1) for item in items))

    @classmethod
    def blank(cls, size: int) -> Payload:
        """The benchmarks' default message: ``size`` spaces."""
        return cls((b" " * size,))


def _frame(item: Any, multipart: bool) -> Any:
    if isinstance(item, (bytes, zmq.Frame)):
        return item
    if isinstance(item, str):
        msg = f"the message{' part' if multipart else ''} is a str ({item[:20]!r}); {_HOW}"
        raise ValueError(msg)
    try:
        view = memoryview(item)
    except TypeError:
        msg = f"the message{' part' if multipart else ''} is a {type(item).__name__}; {_HOW}"
        raise ValueError(msg) from None
    if not view.contiguous:
        name = type(item).__name__
        msg = f"the {name} is not contiguous in memory; copy it first (np.ascontiguousarray)"
        raise ValueError(msg)
    return item


def _nbytes(frame: Any) -> int:
    if isinstance(frame, zmq.Frame):
        return len(frame.bytes)
    return memoryview(frame).nbytes


class UserCodeFailed(Exception):
    """The user's cell raised; its traceback has been shown, once."""


def cell_value(shell: Any, cell: str) -> Any:
    """Run the cell in the user's namespace; return its last expression's value."""
    source = shell.transform_cell(cell)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        shell.showsyntaxerror()
        raise UserCodeFailed from None
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        msg = (
            "the cell's last line must be an expression giving the message, e.g. "
            "np.random.random(8192) or [b'header', body]"
        )
        raise ValueError(msg)
    setup = ast.Module(body=tree.body[:-1], type_ignores=[])
    last = ast.Expression(body=tree.body[-1].value)
    namespace = shell.user_ns
    # Registered with IPython's line cache, so a traceback shows the user's lines.
    filename = shell.compile.cache(source)
    try:
        exec(compile(setup, filename, "exec"), namespace)
        return eval(compile(last, filename, "eval"), namespace)
    except Exception:  # noqa: BLE001 - any error of the user's code is shown as theirs
        kind, error, trace = sys.exc_info()
        # From the user's own code on: this function's frame is no concern of theirs.
        shell.showtraceback((kind, error, trace.tb_next if trace else None))
        raise UserCodeFailed from None


def cell_payload(shell: Any, source: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The cell form's message: the cell's value, as ``payload``; ``--size`` is then
    the message's own, so giving it is an error."""
    if SIZE.name in given:
        msg = f"{SIZE.option} does not apply to the cell form: the cell's value is the message"
        raise ValueError(msg)
    return {"payload": cell_value(shell, source)}


__all__ = ["Payload", "UserCodeFailed", "cell_payload", "cell_value"]

"""A cell's value as the message (``%%zmqthr``, ``%%zmqlat``): the cell runs once in the
user's namespace, and its last expression is what the benchmark sends.

``shell`` is the IPython shell the magic runs in, used as given (its namespace, its
line cache, its traceback display); nothing here imports IPython.
"""

from __future__ import annotations

import ast
import sys
from typing import Any


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


__all__ = ["UserCodeFailed", "cell_value"]

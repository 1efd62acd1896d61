"""The far ends' control messages are declared once (sockets/protocol.py): no other
module of the layer writes one out by hand."""

from __future__ import annotations

import ast
from pathlib import Path

import zmqbench_magic.sockets as layer

# The words that make a dict a control message: an order, or a far end's answer.
_MESSAGE_KEYS = {"cmd", "armed", "ready", "error"}
# The declarations; and a driver process's JSON lines (kernel and driver, no far end).
_DECLARED_IN = {"protocol.py", "driver.py", "worker.py"}


def _messages_written(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        and any(isinstance(k, ast.Constant) and k.value in _MESSAGE_KEYS for k in node.keys)
    ]


def test_no_control_message_is_written_outside_its_declaration():
    planted = 'ctrl.send(json.dumps({"cmd": "go"}).encode())\norder = Go(cmd="go")\n'
    assert _messages_written(ast.parse(planted)) == [1]
    folder = Path(layer.__file__).parent
    modules = [path for path in folder.rglob("*.py") if path.name not in _DECLARED_IN]
    found = {
        path.name: lines
        for path in modules
        if (lines := _messages_written(ast.parse(path.read_text())))
    }
    assert found == {}

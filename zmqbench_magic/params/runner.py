"""Who runs a ZeroMQ benchmark's loops: the kernel itself, or fresh processes of one
interpreter or of several compared side by side."""

from __future__ import annotations

from .declare import Param
from .interpreter import KERNEL

# fmt: off
DRIVER = Param(
    "driver", "kernel",
    "who runs the driver's loop: kernel (this process, the Python you are in: its "
    "state is part of the figure) or process (both ends of every round in fresh "
    "processes the kernel starts, as pyperf's workers: the rounds are then "
    "independent, and their spread includes the between-process variance); --python "
    "implies process",
    "driver", "choice", choices=("kernel", "process"),
)
PYTHON = Param(
    "python", KERNEL,
    "the interpreter that runs both ends of an arm, each with its own pyzmq and libzmq "
    "(zmqbench env builds them): several values compare environments in one run, in "
    "interleaved rounds; NAME=PATH names an arm",
    "Python environment", "interpreter", sweep=True,
)
# fmt: on

__all__ = ["DRIVER", "PYTHON"]

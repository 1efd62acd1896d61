"""The flood, array echo, map and cell-form measurements (:func:`run_taskflood`), over
an ipyparallel cluster (:mod:`..clusters`) or a futures engine (:mod:`..engines`): the
run (:mod:`.run`), its sessions (:mod:`.session`), and its samples with the settling
between them (:mod:`.samples`)."""

from .run import run_taskflood

__all__ = ["run_taskflood"]

"""The flood, array echo, map and cell-form measurements (:func:`run_taskflood`), over
an ipyparallel cluster (:mod:`..clusters`) or a futures engine (:mod:`..engines`): the
run (:mod:`.run`), its sessions (:mod:`.session`), its samples (:mod:`.samples`) and
the settling between them (:mod:`.settle`)."""

from .run import run_taskflood

__all__ = ["run_taskflood"]

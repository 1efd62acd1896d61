"""Every benchmark kind, one module each named as the kind, registered here: a new
kind is its module and one line below.

A kind's module holds what the layers do for it as plain functions (measure, put a
point in words, draw, show a panel, take a cell), each importing what it needs inside
it: importing this package costs only the declarations (:mod:`..params`), so the far
end's process, which imports it too, stays on pyzmq alone.
"""

from __future__ import annotations

from ..params.kinds import register
from . import flood, kernelmsg, lat, thr

for _module in (thr, lat, flood, kernelmsg):
    register(_module)

"""Each kind's panel, by the kind's name, as its module gives it (``panel``,
:class:`..params.kinds.KindModule`): read when used, since a kind's module imports its
panel class from ``widgets.py``, which offers this table again to its users."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..params import KINDS
from ..params.kinds import Derived

PANELS: Mapping[str, type[Any]] = Derived(
    lambda: {name: kind.module.panel() for name, kind in KINDS.items() if kind.module.panel}
)

__all__ = ["PANELS"]

"""The chart a magic, a panel or the CLI shows for a result: its kind's choice.

Each kind's module picks its default chart (``chart``, :class:`..params.kinds.KindModule`)
from the builders below it (``figures.py``, ``flood_charts.py``, ...); this is the one
place the charts layer asks a kind's module, and no builder asks back.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ..params import KINDS
from ..params.columns import Distribution


def default_chart(
    benchmark: str, df: pd.DataFrame, distributions: Sequence[Distribution] = ()
) -> alt.TopLevelMixin:
    """What a magic shows for a result of ``benchmark``: its kind's default chart."""
    return KINDS[benchmark].module.chart(df, distributions)


__all__ = ["default_chart"]

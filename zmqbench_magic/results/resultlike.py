"""What a result is to the functions that read one: the parts of a
:class:`~.resultset.ResultSet` that its summary, comparisons, history and words use.

A ``ResultSet``'s methods (``summary``, ``compare``, ``versus``, ``history``,
``advice``, ``str``) are functions of :mod:`.statistics` and :mod:`.words` that take
their result as a :class:`ResultLike`. Those modules therefore never import
:mod:`.resultset`, which imports them: the data type's module sits above what its
methods call and below what makes, stores or shows whole results. Nothing here is
ever instantiated: a ``ResultSet`` fits the protocol by having these attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import pandas as pd

from ..params.columns import Distribution, Metadata, Row
from ..params.declare import RunSettings


class ResultLike(Protocol):
    """Kept samples of one benchmark, with each run's settings and environment.

    The attributes are :class:`~.resultset.ResultSet`'s, read only: ``rows`` one per
    kept sample, ``runs`` each run's environment and settings by its name, ``df`` the
    rows as a fresh DataFrame; ``summary()`` and ``advice()`` are its methods, for what
    words a whole result (:func:`.words.markdown.result_markdown`).
    """

    @property
    def benchmark(self) -> str: ...

    @property
    def rows(self) -> tuple[Row, ...]: ...

    @property
    def settings(self) -> RunSettings: ...

    @property
    def metadata(self) -> Metadata: ...

    @property
    def warnings(self) -> tuple[str, ...]: ...

    @property
    def distributions(self) -> tuple[Distribution, ...]: ...

    @property
    def runs(self) -> Mapping[str, Metadata]: ...

    @property
    def metric_names(self) -> tuple[str, ...]: ...

    @property
    def point_columns(self) -> list[str]: ...

    @property
    def df(self) -> pd.DataFrame: ...

    def summary(self) -> pd.DataFrame: ...

    def advice(self) -> list[str]: ...

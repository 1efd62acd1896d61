"""What runs a flood's tasks: one record per task engine (ipyparallel, the process pool,
Dask, Ray), registered once in :data:`BACKENDS`, which ``--backend`` offers.

Everything that differs between engines is read from its record: what it is called
and what it calls a worker, the extra that installs it, the address form of an
existing cluster of it, whether it has ipyparallel's views and schemes. Its session
(the engines layer's, :data:`zmqbench_magic.parallel.engines.SESSIONS`) is found by
the record. No other code names an engine to branch on it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    """One task engine."""

    name: str  # what --backend takes, and a result's ``backend`` column: "dask"
    title: str  # its name in a sentence: "Dask", "the process pool"
    heading: str  # its name heading a chart or labelling a line: "Dask", "process pool"
    worker: str  # what it calls one of the processes --engines counts: "worker"
    # Words for a cluster of ``n`` of its workers in advice: "{n}", "{noun}" (its worker
    # word, plural as n asks) and "{title}".
    cluster_words: str
    # What must import for it to run, and the project's extra that installs that.
    module: str = ""
    extra: str = ""
    # An existing cluster's address (--address): the URL schemes it takes (none: a bare
    # HOST:PORT) and an example with the default port; () when it has no such address.
    address_schemes: tuple[str, ...] = ()
    address_example: str = ""
    # The logger whose chatter it is kept from printing while the project drives it.
    logger: str = ""
    # ipyparallel's views and scheduler schemes, and its push test.
    views: bool = False
    # What its map calls, naming a map chart of it alone ("": a map of time.sleep).
    map_call: str = ""

    @property
    def connects(self) -> bool:
        """Whether --address can name an existing cluster of it."""
        return bool(self.address_example)

    def workers(self, count: int) -> str:
        """``1 worker``, ``4 engines``."""
        return f"{count} {self.noun(count)}"

    def noun(self, count: int) -> str:
        """Its word for ``count`` of its workers: ``worker``, ``engines``."""
        return f"{self.worker}{'' if count == 1 else 's'}"

    def cluster(self, count: int) -> str:
        """``Dask on 4 workers``: ``count`` of its workers, in words for advice."""
        return self.cluster_words.format(n=count, noun=self.noun(count), title=self.title)

    def need(self) -> None:
        """Raise ``ValueError`` naming the extra when its package is missing."""
        if self.module and importlib.util.find_spec(self.module) is None:
            msg = (
                f"backend {self.name} needs the {self.module} package, not installed in this "
                f"Python: pip install {self.module} (or '.[{self.extra}]' from a checkout of "
                "this project)"
            )
            raise ValueError(msg)


IPYPARALLEL = Backend(
    name="ipyparallel",
    title="ipyparallel",
    heading="ipyparallel",
    worker="engine",
    cluster_words="{n} {noun}",
    views=True,
    map_call="map_async",
)
PROCESS_POOL = Backend(
    name="processpool",
    title="the process pool",
    heading="process pool",
    worker="worker",
    cluster_words="{n} process-pool {noun}",
)
DASK = Backend(
    name="dask",
    title="Dask",
    heading="Dask",
    worker="worker",
    cluster_words="{title} on {n} {noun}",
    module="distributed",
    extra="dask",
    address_schemes=("tcp", "tls", "ws", "wss"),
    address_example="tcp://127.0.0.1:8786",
    logger="distributed",
)
RAY = Backend(
    name="ray",
    title="Ray",
    heading="Ray",
    worker="worker",
    cluster_words="{title} on {n} {noun}",
    module="ray",
    extra="ray",
    address_example="127.0.0.1:6379",
    logger="ray",
)

# Every task engine, by name, the default (ipyparallel) first.
BACKENDS: dict[str, Backend] = {b.name: b for b in (IPYPARALLEL, PROCESS_POOL, DASK, RAY)}


def backend_of(named: object) -> Backend:
    """A result row's backend, by its ``backend`` column: ipyparallel for a row from
    before --backend existed (no name, or NaN beside newer rows).

    >>> backend_of("dask").heading, backend_of(float("nan")).heading
    ('Dask', 'ipyparallel')
    """
    return BACKENDS[named] if isinstance(named, str) else IPYPARALLEL

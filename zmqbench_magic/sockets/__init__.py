"""The ZeroMQ measurement core: ``%zmqthr`` and ``%zmqlat`` without the front end.

What lives here: the far end (:mod:`.peer`, a process or a thread), the driver's
sockets and control channel to it (:mod:`.link`), the hot loops of one sample
(:mod:`.loops`), users' own messages (:mod:`.payload`) and the runs over a sweep
(:mod:`.measure`: :func:`run_throughput`, :func:`run_latency`). A new ZeroMQ
measurement goes here.

It may import pyzmq, numpy, and this project's :mod:`~zmqbench_magic.params`,
:mod:`~zmqbench_magic.method` and :mod:`~zmqbench_magic.results`; never IPython,
ipywidgets or altair. This ``__init__`` imports nothing: the far end runs as
``python -m zmqbench_magic.sockets.peer`` and must start on pyzmq alone.
"""

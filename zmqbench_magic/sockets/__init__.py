"""The ZeroMQ measurement core: ``%zmqthr`` and ``%zmqlat`` without the front end.

By role, in four parts:

- :mod:`.kernel`: the side in the user's process that drives a run: the sweep's
  rounds on fresh far ends (:mod:`.kernel.measure`, :func:`run_throughput`,
  :func:`run_latency`), one pair's sockets and control channel (:mod:`.kernel.link`),
  a pattern's hub and its members (:mod:`.kernel.crowd`), driver processes, far ends
  on other hosts, and the one function that starts every process
  (:mod:`.kernel.processes`);
- :mod:`.far_ends`: what runs in the other processes (or threads): a pair's far end
  (:mod:`.far_ends.peer`), a pattern's member, a driver process, a standing far end's
  door;
- :mod:`.loops`: the hot loops of one sample, both sides' (Python, native, asyncio,
  paced, patterns, members, pressure) and what they share (timing, numbering, queues);
- :mod:`.protocol`: every control message between the kernel and its far ends.

Beside them, what both sides share: users' own messages (:mod:`.payload`), CURVE keys
(:mod:`.secret`) and the far end's memory settings (:mod:`.malloc`). A new ZeroMQ
measurement goes here.

It may import pyzmq, numpy, and this project's :mod:`~zmqbench_magic.params`,
:mod:`~zmqbench_magic.method` and :mod:`~zmqbench_magic.results`; never IPython,
ipywidgets or altair. No ``__init__`` here imports anything: the far end runs as
``python -m zmqbench_magic.sockets.far_ends.peer`` and must start on pyzmq alone.
"""

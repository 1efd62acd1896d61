"""The ipyparallel measurement core: ``%taskflood`` without the front end.

Three subpackages, and the modules they share:

- :mod:`.clusters`: the ipyparallel clusters a flood runs on. The project's own
  (:mod:`.clusters.own`: started, reused, resized, stopped), a running one the user
  names (:mod:`.clusters.existing`), engines on other hosts, the SSH tunnel, the
  watcher that notices a lost engine or controller, and the reaper that stops a
  cluster when its kernel is killed. It imports none of the other two.
- :mod:`.engines`: the task engines that hand back futures (the process pool, Dask,
  Ray), each a session the flood drives as it drives an ipyparallel cluster. It may
  import :mod:`.clusters` (the reaper, the watch's pace), never :mod:`.flood`.
- :mod:`.flood`: the measurement itself (flood, array echo, map, a user's cell), its
  samples and the settling between them, over either. It may import both.
- Shared by all three: the tasks themselves (:mod:`.tasks`, :mod:`.celltask`) and the
  stamps that say where a task's time goes (:mod:`.anatomy`).

The whole may import ipyparallel (which brings IPython's core with it), numpy, and
this project's :mod:`~zmqbench_magic.params`, :mod:`~zmqbench_magic.method` and
:mod:`~zmqbench_magic.results`; never ipywidgets or altair. This ``__init__`` and
those of :mod:`.clusters` import nothing: the reaper runs as
``python -m zmqbench_magic.parallel.clusters.reaper``.
"""

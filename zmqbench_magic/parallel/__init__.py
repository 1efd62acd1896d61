"""The ipyparallel measurement core: ``%taskflood`` without the front end.

What lives here: the clusters the project starts, reuses, resizes and stops, or
connects to (:mod:`.cluster`), the watcher that stops one if the kernel is killed
(:mod:`.reaper`), the flood, echo and map tests (:mod:`.flood`) and a user's cell as
the task (:mod:`.celltask`). A new ipyparallel measurement goes here.

It may import ipyparallel (which brings IPython's core with it), numpy, and this
project's :mod:`~zmqbench_magic.params`, :mod:`~zmqbench_magic.method` and
:mod:`~zmqbench_magic.results`; never ipywidgets or altair. This ``__init__`` imports
nothing: the reaper runs as ``python -m zmqbench_magic.parallel.reaper``.
"""

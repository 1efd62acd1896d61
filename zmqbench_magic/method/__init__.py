"""How a measurement is run, whatever it measures: calibration of a sample's count,
the stop flag and progress callback a caller steers a run with, and how helper
processes (far ends, reapers) are started.

Both benchmark cores (:mod:`zmqbench_magic.sockets`, :mod:`zmqbench_magic.parallel`)
build on it. It may import :mod:`zmqbench_magic.params` and the standard library,
nothing else of this project and no front-end library (IPython, ipywidgets, altair).
"""

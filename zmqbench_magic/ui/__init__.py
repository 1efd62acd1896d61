"""Building blocks of the adapters, derived from the parameter declarations: the
command-line options of the magics and the CLI (:mod:`.options`), the ``%config
ZmqBench`` traits (:mod:`.config`), the panels' controls (:mod:`.controls`) and the
panel they share (:mod:`.panel`).

The adapters themselves are the package's top-level modules:
:mod:`zmqbench_magic.magics`, :mod:`zmqbench_magic.widgets`, :mod:`zmqbench_magic.cli`.
This layer may import every other layer; nothing below it imports it.
"""

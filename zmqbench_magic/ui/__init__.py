"""What the magics and the CLI are built from, derived from the parameter declarations:
the command-line options (:mod:`.options`), the ``%config ZmqBench`` traits
(:mod:`.config`), the progress line (:mod:`.progress`), a finished run presented
(:mod:`.present`) and the CLI's subcommands beyond the benchmarks
(:mod:`.result_commands`, :mod:`.environment_commands`). No ipywidgets: the panels are
:mod:`zmqbench_magic.panels`.

The adapters themselves are the package's top-level modules:
:mod:`zmqbench_magic.magics`, :mod:`zmqbench_magic.widgets`, :mod:`zmqbench_magic.cli`.
This layer may import every core layer; nothing below it imports it.
"""

"""The ipywidgets panels' building blocks, derived from the parameter declarations: a
control per parameter (:mod:`.controls`) and the panel every kind shares
(:mod:`.panel`). The panels themselves, one per kind, are :mod:`zmqbench_magic.widgets`.
"""

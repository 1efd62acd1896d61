"""What the project keeps on this host between runs: :mod:`.cache` (the folder it is
kept in) and :mod:`.noise_floor` (this host's noise floor per point, the tolerance of
a comparison of separate runs). A result's own file format is
:mod:`..resultset`'s."""

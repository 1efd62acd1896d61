"""What the samples say: intervals, tests, verdicts and figures derived from them.

Samples of a point: :mod:`.stats` (the median's interval, the paired and unpaired
ratio tests, Holm), :mod:`.histogram` (every round trip, log-bucketed) and
:mod:`.pooled` (a latency point's percentiles over every round trip), :mod:`.spread`
(pyperf's sanity check), :mod:`.knee` (where a load curve bends).

A result as a whole: :mod:`.summary` (one row per point), :mod:`.compare` (two runs,
or two arms of one, point by point) with :mod:`.verdict` (the four calls) and
:mod:`.unlike` (what else the two runs differ in), :mod:`.gate` (the verdicts a CI
job refuses), :mod:`.history` (a point's figure run after run, and where it stepped),
:mod:`.analysis` (crossover size, map efficiency, Python tax).

A function that takes a result reads it as a :class:`~..resultlike.ResultLike`, never
imports :mod:`..resultset`: :class:`~..resultset.ResultSet`'s own methods call these
functions. Below them only :mod:`..storage` (the noise floor a comparison's tolerance
comes from) and :mod:`zmqbench_magic.params`.
"""

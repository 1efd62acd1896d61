"""Results in words: what a summary, a comparison, a history or a flood's advice
prints, and the same as Markdown.

:mod:`.text` (a summary's %timeit-style lines, a comparison's, a run's own verdicts,
and :func:`~.text.fit`, which keeps every printed line within 100 columns),
:mod:`.history_text` (a history's lines), :mod:`.advice` (how small a task may be, how
much memory a flood needs), :mod:`.markdown` (a run and a comparison as Markdown
tables). They word what :mod:`..statistics` computes; like those functions, they read a
result as a :class:`~..resultlike.ResultLike` and never import :mod:`..resultset`.
"""

"""What ran the numbers, recorded with each result: :mod:`.environment` (versions,
host, CPU, date, a run's name, and the stamp a notebook prints at its top) and
:mod:`.system` (the host's conditions that move a figure: governor, turbo, quotas, SMT,
load), with what to do about each."""

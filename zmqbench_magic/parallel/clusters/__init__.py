"""The ipyparallel clusters a flood runs on: the project's own (:mod:`.own`), one the
user names (:mod:`.existing`), a cluster in use (:mod:`.handle`), engines on other
hosts (:mod:`.hosts`), the client's SSH tunnel (:mod:`.tunnel`), the watch for lost
engines and controllers (:mod:`.watch`) and the reaper (:mod:`.reaper`).

It imports nothing of :mod:`..engines` or :mod:`..flood`; this ``__init__`` imports
nothing at all, so the reaper starts on the standard library and pyzmq.
"""

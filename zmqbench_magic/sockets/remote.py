"""Where a run's far end is: on this machine, a standing one (``tcp://``) or one
started over SSH for the run (``ssh://``), and the secret that reaches it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .secret import Keys, read_secret
from .ssh import far_end_over_ssh


@contextlib.contextmanager
def reach(
    remote: str, secret_file: str, python: str, timeout: float
) -> Iterator[tuple[str, Keys | None]]:
    """The far end's ``tcp://`` URL ("" for one on this machine) and its secret, for
    as long as the block lasts; an SSH-started one is stopped when it ends."""
    if remote.startswith("ssh://"):
        with far_end_over_ssh(remote, python, timeout) as reached:
            yield reached
        return
    yield remote, read_secret(secret_file) if secret_file else None

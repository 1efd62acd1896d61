"""What goes wrong with a far end, as one exception type for every kind of far end."""

from __future__ import annotations


class PeerError(RuntimeError):
    """The far end died, hung, reported an error or refused this client."""

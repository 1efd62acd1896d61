"""A running cluster the user names (profile, cluster id or url file): only ever
connected to, never resized or stopped."""

from __future__ import annotations

from pathlib import Path

import ipyparallel as ipp

from ...params import FloodParams
from ...params.units import plural
from .handle import ClusterHandle
from .hosts import Placement
from .tunnel import tunnelled_client


def connect(
    profile: str, cluster_id: str, url_file: str, timeout: float, tunnel: str = ""
) -> ClusterHandle:
    """Connect to a running cluster, through an SSH tunnel via ``tunnel`` when given; it
    is never resized or stopped by the project."""
    connection_file = Path(url_file) if url_file else _connection_file(profile, cluster_id)
    what = f"url file {url_file!r}" if url_file else f"profile {profile or 'default'!r}"
    if cluster_id and not url_file:
        what += f", cluster id {cluster_id!r}"
    if not connection_file.is_file():
        msg = f"no running cluster found for {what}: {connection_file} does not exist"
        raise ValueError(msg)
    try:
        if tunnel:
            client, through = tunnelled_client(connection_file, tunnel, timeout)
            return ClusterHandle(
                client, "unknown", placement=Placement(tunnel=tunnel), tunnel=through
            )
        return ClusterHandle(ipp.Client(str(connection_file), timeout=timeout), "unknown")
    except (OSError, ValueError, ipp.error.TimeoutError, TimeoutError) as exc:
        msg = f"no running cluster found for {what}: {exc}"
        raise ValueError(msg) from None


def connect_for(params: FloodParams) -> ClusterHandle:
    """The running cluster ``params`` name, which must have the engines they ask for."""
    handle = connect(
        params.profile, params.cluster_id, params.url_file, params.timeout, params.ssh_tunnel
    )
    available = len(handle.engine_ids())
    if max(params.engines) > available:
        handle.stop()
        msg = (
            f"engines {max(params.engines)}: the running cluster has "
            f"{plural(available, 'engine')}, and the project never resizes a cluster it "
            "did not start"
        )
        raise ValueError(msg)
    return handle


def _connection_file(profile: str, cluster_id: str) -> Path:
    """Where ipyparallel writes the client connection file of a profile's cluster."""
    # ipyparallel imports IPython itself, so this adds nothing to what is loaded.
    from IPython.paths import get_ipython_dir

    name = f"ipcontroller-{cluster_id}-client.json" if cluster_id else "ipcontroller-client.json"
    return Path(get_ipython_dir()) / f"profile_{profile or 'default'}" / "security" / name

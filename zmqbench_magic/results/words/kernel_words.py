"""A kernel messages point in words (``%kernelmsg``): what it names, and its figures,
the round trip first and then where it went, stage by stage."""

from __future__ import annotations

import math

import pandas as pd

from ...params.columns import Row
from ...params.kernel_messages import BUFFERS, MSG, PACKER, SIGNING, STAGE_METRICS, VIA
from ...params.units import format_size
from .text import _samples, _three


def kernel_where(row: Row) -> list[str]:
    """``comm``, ``64k B``, ``binary buffer``, ``python3``, ``through a server (v1)``,
    ``unsigned``, ``packed by msgpack``: the message, its size and payload where it has
    them ("" where not: the columns line up), the kernel, and the path, the signing and
    the packer where the run names them."""
    size = row.get("size", math.nan)
    buffers = row.get("buffers", math.nan)
    via = row.get("via", math.nan)
    path = "" if pd.isna(via) else VIA.label(via)
    protocol = row.get("ws_protocol", math.nan)
    if path and not pd.isna(protocol):
        path += f" ({protocol})"
    signing = row.get("signing", math.nan)
    packer = row.get("packer", math.nan)
    return [
        MSG.label(row["msg"]),
        "" if pd.isna(size) else f"{format_size(int(size))} B",
        "" if pd.isna(buffers) else BUFFERS.label(bool(buffers)),
        str(row["kernel"]),
        path,
        "" if pd.isna(signing) else SIGNING.label(bool(signing)),
        "" if pd.isna(packer) else PACKER.label(str(packer)),
    ]


def kernel_figures(row: Row) -> str:
    """``2.11 ms (n=6, 95% CI 2.05 to 2.2 ms): to the kernel 0.39, in the kernel 1.1
    (execute handler 0.9), reply 0.32, idle status 0.28 ms``; through a server, the
    server's hop back; a stream's output: its bandwidth, and how many chunks each
    message carried."""
    ms = 1e-3
    head = f"{_three(row['roundtrip_us'] * ms)} ms ({_samples(row, ms)})"
    stages = [
        f"{m.title} {_three(row[m.name] * ms)}"
        for m in STAGE_METRICS
        if not pd.isna(row.get(m.name, math.nan))
    ]
    handler = row.get("handler_us", math.nan)
    if stages and not pd.isna(handler):
        stages[1] += f" (execute handler {_three(handler * ms)})"
    words = f"{head}: {', '.join(stages)} ms" if stages else head
    hop = row.get("server_hop_us", math.nan)
    if stages and not pd.isna(hop):
        words += f"; of the reply and idle status, the server's hop back {_three(hop * ms)} ms"
    if row["msg"] == "stream":
        words += (
            f"; output {_three(row['output_mb_per_s'])} MB/s, "
            f"{_three(row['chunks_per_msg'])} chunks a message{_dropped(row)}"
        )
    return words


def _dropped(row: Row) -> str:
    """``, 62% of it dropped by the server's data rate limit``, where any was."""
    lost = row.get("output_lost_fraction", math.nan)
    if pd.isna(lost) or lost <= 0:
        return ""
    fired = [
        name
        for name, column in (("message rate", "msg_limit_hits"), ("data rate", "data_limit_hits"))
        if row.get(column, 0) > 0
    ]
    limits = " and ".join(fired) + (" limits" if len(fired) > 1 else " limit") if fired else ""
    by = f" by the server's {limits}" if limits else " (no limit said so)"
    return f", {lost:.0%} of it dropped{by}"


__all__ = ["kernel_figures", "kernel_where"]

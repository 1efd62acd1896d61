"""The payload: %%zmqthr / %%zmqlat, the cell's last expression is the message. Real sockets."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TINY_OPTIONS
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from zmqbench_magic import run_latency, run_throughput

QUICK = f"-q -o --no-chart {TINY_OPTIONS}"
PAYLOADS = {
    "bytes": ("b'x' * 1000", b"x" * 1000, 1000, 1),
    "numpy": ("np.arange(1024, dtype=np.float64)", np.arange(1024, dtype=np.float64), 8192, 1),
    "memoryview": ("memoryview(bytearray(300))", memoryview(bytearray(300)), 300, 1),
    "multipart": (
        "[b'header', np.zeros(4096, dtype=np.uint8)]",
        [b"header", np.zeros(4096, dtype=np.uint8)],
        4102,
        2,
    ),
}


@pytest.fixture
def shell(ip):
    ip.user_ns["np"] = np
    return ip


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc"])
@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_payloads_through_function_and_cell_magic(shell, kind, transport, no_leftovers):
    source, value, size, frames = PAYLOADS[kind]
    by_function = run_throughput(
        payload=value, transport=transport, copy=[True, False], count=200, repeat=2, warmup=0
    ).df
    by_magic = shell.run_cell_magic(
        "zmqthr", f"{QUICK} --transport {transport} --copy true false", source
    ).df
    for df in (by_function, by_magic):
        assert set(df["size"]) == {size} and set(df["frames"]) == {frames}
        assert len(df) == 2 * 2
        if transport != "ipc":
            assert (df["received"] == df["count"]).all()
        assert list(df["mbit_per_s"]) == pytest.approx(list(df["msgs_per_s"] * size * 8 / 1e6))


@pytest.mark.parametrize("transport", ["tcp", "inproc"])
def test_latency_cell_with_a_multipart_pickle(shell, transport, no_leftovers):
    result = shell.run_cell_magic(
        "zmqlat",
        f"{QUICK} --transport {transport}",
        "import pickle\nheader = b'v1'\n"
        "[header, pickle.dumps({'id': 7, 'values': list(range(100))})]",
    )
    df = result.df
    assert set(df["frames"]) == {2} and (df["sample_mean_us"] > 0).all()
    assert len(df) == 2


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("'some text'", ["is a str ('some text')", "'text'.encode()"]),
        ("{'a': 1}", ["is a dict", "pickle.dumps(obj)"]),
        ("[]", ["empty list"]),
        ("[b'ok', 'not ok']", ["message part is a str"]),
        ("np.zeros((4, 4))[:, 1]", ["not contiguous", "np.ascontiguousarray"]),
        ("x = b'abc'", ["last line must be an expression"]),
    ],
)
def test_bad_payloads_are_usage_errors_that_say_how_to_fix_them(shell, source, words, no_leftovers):
    with pytest.raises(UsageError) as caught:
        shell.run_cell_magic("zmqthr", QUICK, source)
    for word in words:
        assert word in str(caught.value)


def test_bad_payload_through_the_function_is_a_value_error(no_leftovers):
    with pytest.raises(ValueError, match="is a str"):
        run_latency(payload="text", count=10, repeat=1)
    with pytest.raises(ValueError, match="size does not apply with a payload"):
        run_throughput(payload=b"x", size=100, count=10, repeat=1)


def test_size_does_not_combine_with_a_cell(shell, no_leftovers):
    with pytest.raises(UsageError, match="--size does not apply to the cell form"):
        shell.run_cell_magic("zmqthr", f"{QUICK} --size 1k", "b'x'")


@pytest.mark.parametrize(
    ("magic", "options", "words"),
    [
        ("zmqthr", "--copy maybe", "copy"),
        ("zmqthr", "--transport udp", "transport must be one of"),
        # A combination the settings class checks, which argparse alone could not.
        ("zmqlat", "--idle 2 --timeout 1", "give a longer --timeout"),
    ],
)
def test_a_bad_option_runs_none_of_the_cells_code(shell, magic, options, words, no_leftovers):
    """The settings are checked before the cell runs: a cell with side effects is not
    run for a line that could never measure it."""
    shell.user_ns["ran"] = []
    with pytest.raises(UsageError, match=words):
        shell.run_cell_magic(magic, f"{QUICK} {options}", "ran.append(1)\nb'x'")
    assert shell.user_ns["ran"] == []


def test_a_cell_that_raises_shows_the_users_traceback_once(shell, no_leftovers):
    with capture_output() as captured:
        returned = shell.run_cell_magic("zmqlat", QUICK, "def make():\n    return 1 / 0\nmake()")
    assert returned is None
    text = captured.stdout + captured.stderr
    assert text.count("ZeroDivisionError") == 2  # the header line and the final line, once
    assert "return 1 / 0" in text
    assert "_cell_value" not in text  # the magic's own frame is not the user's business

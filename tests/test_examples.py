"""The example notebooks as saved: each opens with a stamp naming a commit, no output
holds a path of the machine that ran it, a stray warning or a summary in an old format,
printed lines fit 100 columns, and each closes with conclusions of its own run. The
checked cells are compared with a fresh run by the test command (nbval, with
``examples/sanitize.cfg``); a test here shows that one changed word fails it. And the
package built as a wheel works from a plain install, its C loop included."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))
SANITIZE = ROOT / "examples" / "sanitize.cfg"
STAMP = re.compile(
    r"^zmqbench_magic \S+, commit ([0-9a-f]{7,40}) · run \d{4}-\d\d-\d\d \d\d:\d\d UTC$"
)
# What only the machine that ran a notebook has: its folders, its environment's.
MACHINE_PATHS = ("/root/", "/home/", "/tmp/", "/work/", "/Users/", "site-packages", ".venv/")
OLD_FORMATS = re.compile(r"median of \d|n/a sent|the machine may be busy")


def _cells(notebook: Path) -> list[dict]:
    return json.loads(notebook.read_text())["cells"]


def _texts(cell: dict) -> list[str]:
    """Every text a code cell's outputs hold: streams, plain text and HTML."""
    found = []
    for output in cell.get("outputs", []):
        if "text" in output:
            found.append("".join(output["text"]))
        for kind in ("text/plain", "text/html"):
            data = output.get("data", {}).get(kind)
            if data:
                found.append("".join(data))
    return found


def _printed(cell: dict) -> list[str]:
    return ["".join(o["text"]) for o in cell.get("outputs", []) if o["output_type"] == "stream"]


def test_the_stamp_names_this_checkouts_commit_and_whether_the_package_differs():
    from zmqbench_magic import stamp

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD")
    changed = git("status", "--porcelain", "--", "zmqbench_magic")
    lines = str(stamp("dask")).splitlines()
    assert all(len(line) <= 100 for line in lines), lines
    assert f", commit {head}{' + changes' if changed else ''} · run " in lines[0], lines[0]
    assert lines[-1].startswith(("Python ", "    ")) and " · dask " in "\n".join(lines), lines


def test_there_are_fourteen_notebooks_and_the_readme_counts_them():
    assert len(NOTEBOOKS) == 14
    assert "the fourteen notebooks" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_opens_with_a_stamp_naming_a_commit(notebook):
    first = next(c for c in _cells(notebook) if c["cell_type"] == "code")
    assert "zmqbench_magic.stamp(" in "".join(first["source"])
    lines = "\n".join(_printed(first)).splitlines()
    stamped = [m for line in lines if (m := STAMP.match(line))]
    assert stamped, f"{notebook.name}: no stamp with a clean commit in {lines}"
    commit = stamped[0].group(1)
    if not _holds(ROOT, commit) and _shallow(ROOT):
        # A shallow clone that lacks the commit cannot say whether it is an ancestor;
        # fetching more would reach past this machine, which tests never do. Said, not
        # passed: the check is reported skipped, with how to make it run.
        pytest.skip(
            f"{notebook.name}: commit {commit} is not in this shallow clone; "
            "git fetch --unshallow lets this test check that it is an ancestor of HEAD"
        )
    # A full clone holds every ancestor of this commit; a shallow one that holds the
    # stamped commit holds the history between the two.
    known = _git(ROOT, "merge-base", "--is-ancestor", commit, "HEAD")
    assert known.returncode == 0, f"{notebook.name}: commit {commit} is not in this history"


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _holds(root: Path, commit: str) -> bool:
    """Whether the clone at ``root`` has ``commit`` (its abbreviation) among its commits."""
    return _git(root, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0


def _shallow(root: Path) -> bool:
    return _git(root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_saved_outputs_hold_no_machine_path_stray_warning_or_old_format(notebook):
    for number, cell in enumerate(_cells(notebook)):
        for text in _texts(cell):
            where = f"{notebook.name} cell {number}"
            assert not [p for p in MACHINE_PATHS if p in text], f"{where}: {text[:300]}"
            assert "Warning:" not in text, f"{where}: {text[:300]}"
            assert not OLD_FORMATS.search(text), f"{where}: {text[:300]}"
        for text in _printed(cell):
            long = [line for line in text.splitlines() if len(line) > 100]
            assert not long, f"{notebook.name} cell {number}: over 100 columns: {long[0]}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_closes_with_checked_conclusions_of_its_own_run(notebook):
    cells = _cells(notebook)
    heading = [i for i, c in enumerate(cells) if "## What this run shows" in "".join(c["source"])]
    assert heading, f"{notebook.name}: no 'What this run shows'"
    after = [c for c in cells[heading[0] :] if c["cell_type"] == "code"]
    checked = [c for c in after if "# NBVAL_CHECK_OUTPUT" in "".join(c["source"])]
    assert checked and any(_printed(c) for c in checked), f"{notebook.name}: nothing printed"


def _notebook(path: Path, *sources: str) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(notebook, path)


def _nbval(notebook: Path) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--nbval-lax",
        "--nbval-current-env",
        f"--nbval-sanitize-with={SANITIZE}",
        str(notebook),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=notebook.parent)


@pytest.mark.slow  # runs a notebook in a kernel, three times
def test_a_checked_summary_fails_the_test_command_when_one_word_changes(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    path = tmp_path / "checked.ipynb"
    _notebook(
        path,
        "%load_ext zmqbench_magic",
        "r = %zmqthr -q -o --no-chart --size 100 64k --copy true false -r 3 --warmup 0 "
        "--min-time 0.01",
        "# NBVAL_CHECK_OUTPUT\nprint(r)",
    )
    saved = nbformat.read(path, as_version=4)
    NotebookClient(saved, timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.write(saved, path)
    summary = "".join(saved.cells[2].outputs[0]["text"])
    assert "msgs/s delivered" in summary, summary
    # A fresh run differs in every number, and in which warnings it prints: it passes.
    fresh = _nbval(path)
    assert fresh.returncode == 0, fresh.stdout[-3000:]
    # One word of the saved summary changed, as a format change would: it fails.
    saved.cells[2].outputs[0]["text"] = summary.replace("delivered", "received", 1)
    nbformat.write(saved, path)
    changed = _nbval(path)
    assert changed.returncode == 1, changed.stdout[-3000:]
    assert "received" in changed.stdout


@pytest.mark.slow  # builds a wheel and runs the native loop from a plain install of it
def test_the_wheel_carries_the_native_loop_and_the_magics(tmp_path):
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("zmqbench_magic-*.whl")
    assert "zmqbench_magic/sockets/loops/native/loops.c" in zipfile.ZipFile(wheel).namelist()
    target = tmp_path / "installed"
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    script = (
        "import zmqbench_magic, IPython\n"
        "print(zmqbench_magic.__file__)\n"
        "assert ', commit ' not in str(zmqbench_magic.stamp()), 'a wheel is no checkout'\n"
        "ip = IPython.core.interactiveshell.InteractiveShell.instance()\n"
        "ip.run_line_magic('load_ext', 'zmqbench_magic')\n"
        "r = ip.run_line_magic('zmqthr', '-q -o --no-chart --size 1k --loop python native "
        "-r 2 --warmup 0 --min-time 0.01')\n"
        "print(sorted(set(r.df['loop'])), bool((r.df['msgs_per_s'] > 0).all()))\n"
    )
    # The install comes first on the path: it, not this checkout, is what runs.
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    ran = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    where, loops = ran.stdout.strip().splitlines()[-2:]
    assert where.startswith(str(target)), where
    assert loops == "['native', 'python'] True", ran.stdout

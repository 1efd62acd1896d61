"""The host's conditions: read from files laid out as /proc and /sys are (a governor
that follows the load, turbo on, a cgroup quota, THP always: the answers are known),
then from this machine, and kept in every result."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from zmqbench_magic.results.host.system import (
    HURTS,
    NOTE,
    OK,
    UNKNOWN,
    check_lines,
    system_checks,
    system_facts,
)


def _host(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _verdicts(root: Path) -> dict[str, str]:
    return {check.name: check.verdict for check in system_checks(system_facts(root))}


CPU = "sys/devices/system/cpu"


def test_a_noisy_host_is_named_check_by_check(tmp_path):
    root = _host(
        tmp_path,
        {
            f"{CPU}/online": "0-3",
            **{f"{CPU}/cpu{i}/cpufreq/scaling_governor": "powersave" for i in range(4)},
            f"{CPU}/intel_pstate/no_turbo": "0",
            f"{CPU}/isolated": "",
            f"{CPU}/smt/active": "1",
            "proc/self/cgroup": "0::/jobs/bench\n",
            "sys/fs/cgroup/jobs/bench/cpu.max": "150000 100000",
            "sys/fs/cgroup/jobs/bench/memory.max": str(2 * 2**30),
            "sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never",
            "proc/loadavg": "3.50 2.00 1.00 5/300 1234",
            "proc/cpuinfo": "cpu MHz\t\t: 1200.0\ncpu MHz\t\t: 3400.5\n",
            "proc/meminfo": "MemTotal: 8388608 kB\nMemAvailable: 4194304 kB\n",
        },
    )
    facts = system_facts(root)
    assert facts["cpus"] == 4 and facts["governors"] == ["powersave"]
    assert facts["cpu_quota"] == 1.5 and facts["memory_limit"] == 2 * 2**30
    assert facts["turbo"] is True and facts["thp"] == "always" and facts["load"][0] == 3.5
    assert _verdicts(root) == {
        "governor": HURTS,
        "turbo": HURTS,
        "isolated CPUs": NOTE,
        "cgroup CPU quota": HURTS,
        "memory": NOTE,
        "transparent huge pages": NOTE,
        "SMT": NOTE,
        "load": HURTS,
        "frequency": NOTE,
    }
    lines = check_lines(system_checks(facts))
    assert lines[-1] == (
        "4 of 9 checks hurt a stable figure: governor, turbo, cgroup CPU quota, load"
    )
    assert any("cpupower frequency-set -g performance" in line for line in lines)
    assert all(len(line) <= 100 for line in lines)


def test_a_tuned_host_passes_and_a_v1_cgroup_is_read(tmp_path):
    root = _host(
        tmp_path,
        {
            f"{CPU}/online": "0-1",
            **{f"{CPU}/cpu{i}/cpufreq/scaling_governor": "performance" for i in range(2)},
            f"{CPU}/cpufreq/boost": "0",
            f"{CPU}/isolated": "1",
            f"{CPU}/nohz_full": "1",
            f"{CPU}/smt/active": "0",
            "proc/self/cgroup": "4:memory:/a\n1:cpu,cpuacct:/a\n",
            "sys/fs/cgroup/cpu/a/cpu.cfs_quota_us": "-1",
            "sys/fs/cgroup/cpu/a/cpu.cfs_period_us": "100000",
            "sys/fs/cgroup/memory/a/memory.limit_in_bytes": "9223372036854771712",
            "sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
            "proc/loadavg": "0.05 0.10 0.10 1/90 99",
            "proc/cpuinfo": "cpu MHz\t\t: 3000.0\ncpu MHz\t\t: 3000.0\n",
            "proc/meminfo": "MemTotal: 8388608 kB\nMemAvailable: 8000000 kB\n",
        },
    )
    assert set(_verdicts(root).values()) == {OK}
    checks = {check.name: check for check in system_checks(system_facts(root))}
    assert checks["isolated CPUs"].value == "1, tickless 1"
    assert checks["isolated CPUs"].advice == "pin with --cpu 1"


def test_a_host_that_exposes_nothing_is_unknown_not_fine(tmp_path):
    verdicts = _verdicts(tmp_path)
    assert verdicts["governor"] == verdicts["turbo"] == verdicts["load"] == UNKNOWN


def test_this_machine_is_checked_from_the_shell_and_its_facts_saved(tmp_path):
    zmqbench = Path(sys.executable).with_name("zmqbench")
    done = subprocess.run(
        [str(zmqbench), "system", "--json", str(tmp_path / "s.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("governor ")
    assert re.match(r"(\d of 9 checks hurt|none of 9 checks hurts) a stable figure", lines[-1])
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["facts"]["cpus"] >= 1 and len(saved["checks"]) == 9


def test_a_result_keeps_the_hosts_facts_as_its_run_started(tmp_path):
    from conftest import TINY

    from zmqbench_magic import load, run_throughput

    result = run_throughput(size=[100], **TINY)
    facts = result.metadata["system"]
    assert facts["cpus"] >= 1 and set(facts) == set(system_facts())
    assert load(result.save(tmp_path / "r.json")).metadata["system"] == json.loads(
        json.dumps(facts)
    )

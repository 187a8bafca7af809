"""Lint benchmarks (issue: linter core). Prints its figures; run with ``python bench/lint.py``.

1. Single file, whole process (the pre-commit case): ``desched lint FILE`` against ``yamllint FILE`` on the same
   file, alternated A B A B so that drift cancels; the target is a median ratio of at most 1.0.
2. Repository case: 2,000 generated files (policies, ConfigMaps, Deployments, PDBs) in one ``desched lint`` run
   pinned to one core; the target is at least 1,000 files per second, whole process included.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(HERE, ".venv")
sys.path.insert(0, HERE)

from corpus import POLICY, write_tree  # noqa: E402


def prepare_venv() -> None:
    """A separate virtual environment with desched (a regular, non-editable install of this checkout) and yamllint.

    Both get their bytecode compiled, as ``pip install`` does on a user's machine, so neither pays for compiling.
    """
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run(
            [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", ROOT, "yamllint"], check=True
        )
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall", "--no-deps", ROOT],
        check=True,
    )
    subprocess.run([python, "-m", "compileall", "-q", VENV], check=False, stdout=subprocess.DEVNULL)


def _tool(name: str) -> str:
    return os.path.join(VENV, "bin", name)


_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _time(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=_ENV)
    return time.perf_counter() - started


def _pinned(command: list[str]) -> list[str]:
    return ["taskset", "-c", "0", *command] if shutil.which("taskset") else command


def single_file(runs: int) -> float:
    desched, yamllint = _tool("desched"), _tool("yamllint")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "policy.yaml")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(POLICY.format(n=1, limit=5, low=20, high=50, restarts=100, lifetime=86400))
        ours, theirs, bare = [], [], []
        for _ in range(2):  # warm the page cache and bytecode
            _time([desched, "lint", path])
            _time([yamllint, path])
        for _ in range(runs):
            ours.append(_time([desched, "lint", path]))
            theirs.append(_time([yamllint, path]))
            bare.append(_time([os.path.join(VENV, "bin", "python"), "-c", "pass"]))
    ratio = statistics.median(ours) / statistics.median(theirs)
    print("single file, whole process (pre-commit case)")
    print(f"  python -c pass        median {statistics.median(bare) * 1000:7.1f} ms")
    print(f"  yamllint FILE         median {statistics.median(theirs) * 1000:7.1f} ms")
    print(f"  desched lint FILE     median {statistics.median(ours) * 1000:7.1f} ms")
    print(f"  ratio desched/yamllint {ratio:.2f}  (target <= 1.00: {'met' if ratio <= 1.0 else 'MISSED'})")
    return ratio


def repository(count: int, runs: int) -> float:
    desched = _tool("desched")
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(tmp, count)
        times = [_time(_pinned([desched, "lint", "--format", "json", tmp])) for _ in range(runs)]
    rate = count / statistics.median(times)
    print(f"repository case: {count} files, one process, one core")
    print(f"  desched lint DIR      median {statistics.median(times):7.2f} s  = {rate:,.0f} files/s")
    print(f"  target >= 1,000 files/s: {'met' if rate >= 1000 else 'MISSED'}")
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=21, help="measurements per command (default 21)")
    parser.add_argument("--files", type=int, default=2000, help="files in the repository case (default 2000)")
    args = parser.parse_args()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cpus, python {platform.python_version()}")
    prepare_venv()
    ratio = single_file(args.runs)
    rate = repository(args.files, max(3, args.runs // 4))
    return 0 if ratio <= 1.0 and rate >= 1000 else 1


if __name__ == "__main__":
    sys.exit(main())

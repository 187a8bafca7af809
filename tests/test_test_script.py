"""``scripts/test`` installs into the active virtual environment, else into the project's ``.venv``, never into the
``python`` that happens to be first on PATH: run against stub interpreters that record what they are asked to do."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUB = """#!/bin/sh
echo "$0 $*" >> "{log}"
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin" && cp "$0" "$3/bin/python"
fi
"""


def _checkout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A copy of scripts/test in ``tmp_path/repo``, stub ``python``/``python3``/``wrk`` in ``tmp_path/bin``, and the
    log the stubs write (one line per call: the stub's path, then its arguments)."""
    repo, bin_dir, log = tmp_path / "repo", tmp_path / "bin", tmp_path / "calls.log"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "test", repo / "scripts" / "test")
    bin_dir.mkdir()
    for name in ("python", "python3", "wrk"):
        (bin_dir / name).write_text(STUB.format(log=log))
        (bin_dir / name).chmod(0o755)
    return repo, bin_dir, log


def _run(repo: Path, bin_dir: Path, virtual_env: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    if virtual_env is not None:
        env["VIRTUAL_ENV"] = str(virtual_env)
    return subprocess.run(
        ["bash", str(repo / "scripts" / "test"), "-q"], cwd=repo, env=env, capture_output=True, text=True, timeout=60
    )


def _calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _steps(python: Path) -> list[str]:
    return [
        f"{python} -m pip install --quiet --disable-pip-version-check -c constraints.txt -e .[test]",
        f"{python} scripts/check",
        f"{python} scripts/control-plane install",
        f"{python} -m pytest -q",
    ]


def test_without_an_active_environment_it_makes_and_uses_the_projects_venv(tmp_path: Path) -> None:
    repo, bin_dir, log = _checkout(tmp_path)
    done = _run(repo, bin_dir)
    assert done.returncode == 0, done.stderr
    venv_python = repo / ".venv" / "bin" / "python"
    assert _calls(log) == [f"{bin_dir / 'python3'} -m venv .venv", *_steps(venv_python)]
    log.unlink()
    assert _run(repo, bin_dir).returncode == 0  # the second run reuses it
    assert _calls(log) == _steps(venv_python)


def test_an_active_environment_is_used(tmp_path: Path) -> None:
    repo, bin_dir, log = _checkout(tmp_path)
    active = tmp_path / "active"
    (active / "bin").mkdir(parents=True)
    shutil.copy(bin_dir / "python", active / "bin" / "python")
    done = _run(repo, bin_dir, active)
    assert done.returncode == 0, done.stderr
    assert _calls(log) == _steps(active / "bin" / "python")
    assert not (repo / ".venv").exists()


def test_an_active_environment_without_python_stops_it(tmp_path: Path) -> None:
    repo, bin_dir, log = _checkout(tmp_path)
    done = _run(repo, bin_dir, tmp_path / "gone")
    assert done.returncode == 2
    assert f"VIRTUAL_ENV={tmp_path / 'gone'} has no bin/python" in done.stderr
    assert _calls(log) == []


def test_git_ignores_the_projects_venv() -> None:
    assert ".venv/" in (ROOT / ".gitignore").read_text().splitlines()

"""lint never opens a FIFO: one in a directory is skipped with a note, one named is refused (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def _lint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "desched", "lint", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=30, check=False)


def test_a_fifo_in_a_directory_is_skipped_with_a_note(tmp_path: Path):
    (tmp_path / "policy.yaml").write_text("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n")
    os.mkfifo(tmp_path / "stray.yaml")
    done = _lint(".", cwd=tmp_path)  # would hang forever if the FIFO were opened
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipped ./stray.yaml: not a regular file (a FIFO)" in done.stderr
    assert "in 1 file" in done.stdout


def test_a_named_fifo_is_refused(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe.yaml")
    done = _lint("pipe.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "pipe.yaml: not a regular file (a FIFO)" in done.stderr and "Traceback" not in done.stderr

"""The tests that send signals do not depend on the signal dispositions the suite inherits: they pass, and still
interrupt what they start, when pytest runs with SIGINT and SIGHUP ignored, as it does under ``nohup``, in a shell's
background job (``./scripts/test &``) and on some CI runners."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.kcp.install import Installation

ROOT = Path(__file__).resolve().parents[1]
# The command line of the issue: a parent that ignores both signals, whose children inherit that.
IGNORING = (
    "import signal, subprocess, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "signal.signal(signal.SIGHUP, signal.SIG_IGN); sys.exit(subprocess.call(sys.argv[1:]))"
)


def _pytest_with_interrupts_ignored(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", IGNORING, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_the_migrate_signal_tests_pass_with_interrupts_ignored() -> None:
    done = _pytest_with_interrupts_ignored(
        "tests/kernel/migrate/test_in_place_safety.py", "-k", "a_signal_leaves", timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout, done.stdout


@pytest.mark.slow
@pytest.mark.cluster
def test_the_lifecycle_interrupt_test_passes_with_interrupts_ignored(installation: Installation) -> None:
    done = _pytest_with_interrupts_ignored(
        "tests/cluster/test_lifecycle.py", "-k", "interrupted_or_killed and SIGINT", timeout=900
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout, done.stdout

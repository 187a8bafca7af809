"""``desched migrate``'s input and ``--in-place`` guarantees: special files are never opened, a killed run leaves
every file wholly old or wholly new and no temporary file, read-only files need ``--force``, ownership and mode are
kept, and nothing larger than ``lint`` reads is written."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from desched.migrate import command
from tests.kernel.migrate.test_cli import V1ALPHA1

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX only")
DESCHED = [sys.executable, "-c", "import sys; from desched.cli import main; sys.exit(main())"]


def _migrate(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DESCHED, "migrate", *args], capture_output=True, text=True, timeout=timeout)


def _temporaries(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.desched-tmp"))


def test_a_fifo_in_a_directory_is_skipped_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text(V1ALPHA1)
    os.mkfifo(tmp_path / "pipe.yaml")
    done = _migrate("--check", str(tmp_path), timeout=20)
    assert done.returncode == 1, done.stderr  # the policy would change; the FIFO is no error
    assert f"{tmp_path / 'pipe.yaml'}: note: skipped: not a regular file (a FIFO)" in done.stderr


def test_a_named_fifo_is_refused_without_opening_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    done = _migrate("-i", str(tmp_path / "pipe.yaml"), timeout=20)
    assert done.returncode == 2
    assert done.stderr == f"desched: {tmp_path / 'pipe.yaml'}: cannot read: not a regular file (a FIFO)\n"


def test_read_only_files_need_force_and_keep_their_mode(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(V1ALPHA1)
    policy.chmod(0o444)
    if os.access(policy, os.W_OK) and os.geteuid() != 0:
        pytest.skip("this file system ignores permissions")
    refused = _migrate("-i", str(policy))
    assert refused.returncode == 2
    assert "read-only file, not written (--force writes it anyway)" in refused.stderr
    assert policy.read_text() == V1ALPHA1
    forced = _migrate("-i", "--force", str(policy))
    assert forced.returncode == 0, forced.stderr
    assert "v1alpha2" in policy.read_text()
    assert stat.S_IMODE(policy.stat().st_mode) == 0o444
    assert _temporaries(tmp_path) == []


def test_owner_and_group_are_kept(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(V1ALPHA1)
    if os.geteuid() == 0:
        os.chown(policy, 1234, 5678)
    before = policy.stat()
    assert command.run([str(policy)], mode="in-place", quiet=True) == 0
    after = policy.stat()
    assert (after.st_uid, after.st_gid, after.st_mode) == (before.st_uid, before.st_gid, before.st_mode)
    assert "v1alpha2" in policy.read_text()


def test_output_larger_than_lint_reads_is_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(V1ALPHA1)
    monkeypatch.setattr(command, "MAX_FILE_BYTES", len(V1ALPHA1))  # the migrated text is longer than its input
    assert command.run([str(policy)], mode="in-place") == 2
    assert "migrated file is larger than the 0 MiB that lint reads; not written" in capsys.readouterr().err
    assert policy.read_text() == V1ALPHA1
    assert _temporaries(tmp_path) == []


def test_temporary_files_of_a_killed_run_are_swept(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(V1ALPHA1)
    stale = tmp_path / ".policy.yaml.999999999.0.desched-tmp"  # above any pid_max: no such process
    live = tmp_path / f".other.yaml.{os.getpid()}.0.desched-tmp"  # a running writer's: kept
    stale.write_text("half")
    live.write_text("half")
    assert command.run([str(policy)], mode="in-place", quiet=True) == 0
    assert _temporaries(tmp_path) == [live]


def _default_disposition(signum: int) -> Callable[[], None]:
    """For ``preexec_fn``: the child takes ``signum`` as a terminal session does, also when this test process inherited
    it ignored (``nohup`` ignores SIGHUP, a shell's background job SIGINT) and would pass that on (Python's
    ``restore_signals`` resets only SIGPIPE, SIGXFZ and SIGXFSZ)."""

    def default() -> None:
        signal.signal(signum, signal.SIG_DFL)  # SIGINT at SIG_DFL: the child's Python installs KeyboardInterrupt

    return default


def _ignores(pid: int, signum: int) -> bool:
    """Whether process ``pid`` ignores ``signum`` (Linux: the SigIgn mask in /proc; elsewhere assumed not)."""
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        return False
    (mask,) = [line.split()[1] for line in status.read_text().splitlines() if line.startswith("SigIgn:")]
    return bool(int(mask, 16) >> (signum - 1) & 1)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_leaves_no_temporary_file_and_no_half_written_file(tmp_path: Path, signum: int) -> None:
    files = [tmp_path / f"policy-{index:04}.yaml" for index in range(600)]
    for path in files:
        path.write_text(V1ALPHA1)
    new = _migrate(str(files[0])).stdout
    assert "v1alpha2" in new
    generator = random.Random(signum)
    for _ in range(3):
        process = subprocess.Popen(
            [*DESCHED, "migrate", "-i", "-q", str(tmp_path)],
            stderr=subprocess.PIPE,
            preexec_fn=_default_disposition(signum),
        )
        assert not _ignores(process.pid, signum)  # the signal below reaches the run
        time.sleep(generator.uniform(0.3, 1.5))
        process.send_signal(signum)
        process.communicate(timeout=60)
        assert _temporaries(tmp_path) == []
        assert {path.read_text() for path in files} <= {V1ALPHA1, new}
    assert command.run([str(tmp_path)], mode="in-place", quiet=True) == 0
    assert {path.read_text() for path in files} == {new}

"""What the suite installs for itself from Debian (the control plane, the browser): one way to run the steps.

Contract: :func:`installed_once` runs an installer under an exclusive lock on ``<root>/.lock`` (parallel test
processes install once) and records the :class:`InstallError` that stops it in ``<root>/last-failure.txt``, which
:func:`last_failure` reads back for the tests' skip reason; a success removes it. :func:`run` runs one step, its
output appended to the log, and raises :class:`InstallError` naming the step, its exit code, the log and the last
lines of its output. :func:`privilege` is the prefix that runs apt as root (none as root, ``sudo -n`` where
password-less sudo works). :func:`apt_install` installs Debian packages, refreshing the package lists first when asked
or when one of the packages has no candidate.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO, TypeVar

FAILURE_FILE = "last-failure.txt"
T = TypeVar("T")


class InstallError(Exception):
    """A step of an installation failed; the message names the step and what to do."""


def installed_once(
    root: Path, installer: Callable[[], T], recorded: tuple[type[Exception], ...] = (InstallError,)
) -> T:
    """``installer()`` under the lock of ``root``, its failure recorded (see the module contract; ``recorded``: the
    errors kept as the last failure)."""
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / ".lock"):
        try:
            result = installer()
        except recorded as error:
            (root / FAILURE_FILE).write_text(f"{error}\n", encoding="utf-8")
            raise
        (root / FAILURE_FILE).unlink(missing_ok=True)
        return result


def last_failure(root: Path) -> str | None:
    """The message of the last failed installation under ``root``, if the last attempt failed."""
    try:
        return (root / FAILURE_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def privilege(what: str) -> list[str]:
    """The command prefix that runs apt as root; :class:`InstallError` naming ``what`` when there is none."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        return ["sudo", "-n"]
    raise InstallError(f"installing {what} needs root (apt-get): run as root or with password-less sudo")


def apt_install(packages: Sequence[str], sudo: list[str], sink: TextIO, log: Path, update: bool = False) -> None:
    """``apt-get install`` of ``packages`` (no recommends, no questions), after ``apt-get update`` when ``update``
    or when some package has no candidate in the package lists."""
    if update or not _known(packages, sink):
        run([*sudo, "apt-get", "update"], "apt-get update", sink, log)
    install = ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends"]
    run([*sudo, *install, *packages], "apt-get install", sink, log)


def _known(packages: Sequence[str], sink: TextIO) -> bool:
    """Whether apt's package lists have a candidate for every package."""
    result = subprocess.run(
        ["apt-cache", "policy", *packages], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    sink.write(result.stdout + result.stderr)
    candidates = [line for line in result.stdout.splitlines() if line.strip().startswith("Candidate:")]
    return len(candidates) == len(packages) and not any("(none)" in line for line in candidates)


def run(
    command: list[str],
    step: str,
    sink: TextIO,
    log: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    error: type[Exception] = InstallError,
) -> str:
    """The standard output of ``command``, a step of an installation (see the module contract); a failure raises
    ``error``."""
    sink.write(f"$ {' '.join(command)}\n")
    sink.flush()
    try:
        result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError as failure:
        raise error(f"{step} failed: {failure}") from None
    sink.write(result.stdout + result.stderr)
    sink.flush()
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-5:])
        raise error(f"{step} failed with exit code {result.returncode} (full log: {log}):\n{tail}")
    return result.stdout

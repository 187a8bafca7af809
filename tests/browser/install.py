"""Install Debian's ``chromium`` and ``chromium-driver`` (``scripts/browser install``) and say where they are.

Contract: :func:`install` returns the :class:`Browser` at once when both binaries are on the machine; otherwise it runs
``apt-get install`` (as root, or through password-less ``sudo``; ``apt-get update`` first only when the packages are
unknown), logging to ``~/.cache/desched/browser/install.log``. Whatever keeps them from being installed is an
:class:`InstallError` whose message is the reason, also kept in ``last-failure.txt`` beside the log. The tests skip
with that reason.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple, TextIO

APT_PACKAGES = ("chromium", "chromium-driver")
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FAILURE_FILE = "last-failure.txt"


class InstallError(RuntimeError):
    """The browser could not be installed; the message says why."""


class Browser(NamedTuple):
    chromium: Path
    chromedriver: Path


def cache_root() -> Path:
    """Where the install log and the last failure are kept (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "desched" / "browser"


def find() -> Browser | None:
    """Both binaries when they are installed and executable; ``None`` otherwise."""
    if all(os.access(path, os.X_OK) for path in (CHROMIUM, CHROMEDRIVER)):
        return Browser(CHROMIUM, CHROMEDRIVER)
    return None


def install(out: TextIO = sys.stderr) -> Browser:
    """Make sure the binaries exist (see the module contract) and say where they are."""
    found = find()
    if found is not None:
        return found
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / ".lock"):
        try:
            browser = _install(root / "install.log", out)
        except InstallError as error:
            (root / FAILURE_FILE).write_text(f"{error}\n", encoding="utf-8")
            raise
    (root / FAILURE_FILE).unlink(missing_ok=True)
    return browser


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _install(log: Path, out: TextIO) -> Browser:
    found = find()  # another process may have installed it while this one waited for the lock
    if found is not None:
        return found
    sudo = _privilege()
    apt = [*sudo, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends"]
    print(f"installing {' '.join(APT_PACKAGES)} (log: {log})", file=out)
    with open(log, "a", encoding="utf-8") as sink:
        if not _known(sink):
            _run([*sudo, "apt-get", "update"], "apt-get update", sink, log)
        _run([*apt, *APT_PACKAGES], "apt-get install", sink, log)
    found = find()
    if found is None:
        raise InstallError(f"apt-get installed {' '.join(APT_PACKAGES)} but {CHROMIUM} or {CHROMEDRIVER} is missing")
    return found


def _privilege() -> list[str]:
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        return ["sudo", "-n"]
    raise InstallError("installing chromium needs root (apt-get): run as root or with password-less sudo")


def _known(sink: TextIO) -> bool:
    """Whether apt's package lists already have a candidate for every package (else ``apt-get update`` first)."""
    result = subprocess.run(
        ["apt-cache", "policy", *APT_PACKAGES], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    sink.write(result.stdout + result.stderr)
    candidates = [line for line in result.stdout.splitlines() if line.strip().startswith("Candidate:")]
    return len(candidates) == len(APT_PACKAGES) and not any("(none)" in line for line in candidates)


def _run(command: list[str], step: str, sink: TextIO, log: Path) -> None:
    sink.write(f"$ {' '.join(command)}\n")
    sink.flush()
    try:
        result = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    except OSError as error:
        raise InstallError(f"{step}: {command[0]}: {error.strerror}") from None
    if result.returncode != 0:
        raise InstallError(f"{step} failed with exit code {result.returncode} (see {log})")

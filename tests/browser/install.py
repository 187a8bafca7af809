"""Install Debian's ``chromium`` and ``chromium-driver`` (``scripts/browser install``) and say where they are.

Contract: :func:`install` returns the :class:`Browser` at once when both binaries are on the machine; otherwise it runs
``apt-get install`` (as root, or through password-less ``sudo``; ``apt-get update`` first only when the packages are
unknown), logging to ``~/.cache/desched/browser/install.log``. Whatever keeps them from being installed is an
:class:`InstallError` whose message is the reason, also kept in ``last-failure.txt`` beside the log. The tests skip
with that reason.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple, TextIO

from tests.prerequisites import FAILURE_FILE, InstallError, apt_install, installed_once, privilege

__all__ = ["FAILURE_FILE", "Browser", "InstallError", "cache_root", "find", "install"]

APT_PACKAGES = ("chromium", "chromium-driver")
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


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
    return installed_once(root, lambda: find() or _install(root / "install.log", out))


def _install(log: Path, out: TextIO) -> Browser:
    sudo = privilege("chromium")
    print(f"installing {' '.join(APT_PACKAGES)} (log: {log})", file=out)
    with open(log, "a", encoding="utf-8") as sink:
        apt_install(APT_PACKAGES, sudo, sink, log)
    found = find()
    if found is None:
        raise InstallError(f"apt-get installed {' '.join(APT_PACKAGES)} but {CHROMIUM} or {CHROMEDRIVER} is missing")
    return found

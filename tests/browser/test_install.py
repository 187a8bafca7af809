"""``scripts/browser install``: found binaries are used as they are; what keeps them from being installed is the
reason the browser tests skip with, kept beside the log."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import prerequisites
from tests.browser import install

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No browser on this (pretend) machine, and the cache under ``tmp_path``."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(install, "CHROMIUM", tmp_path / "no-chromium")
    return tmp_path / "cache" / "desched" / "browser"


def test_without_root_or_sudo_the_reason_is_raised_and_kept(missing: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(prerequisites.shutil, "which", lambda name: None)
    with pytest.raises(install.InstallError) as raised:
        install.install(io.StringIO())
    assert "root" in str(raised.value)
    assert (missing / install.FAILURE_FILE).read_text(encoding="utf-8") == f"{raised.value}\n"


def test_a_failing_apt_get_names_the_step_and_the_log(missing: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install, "privilege", lambda what: ["false"])
    monkeypatch.setattr(prerequisites, "_known", lambda packages, sink: True)
    with pytest.raises(install.InstallError) as raised:
        install.install(io.StringIO())
    log = missing / "install.log"
    assert str(raised.value).startswith(f"apt-get install failed with exit code 1 (full log: {log})")
    assert "$ false env DEBIAN_FRONTEND=noninteractive apt-get install" in log.read_text(encoding="utf-8")


def test_installed_binaries_are_found_without_apt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("chromium", "chromedriver"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
        monkeypatch.setattr(install, name.upper(), tmp_path / name)
    monkeypatch.setattr(install, "_install", None)  # calling it would fail the test
    assert install.install(io.StringIO()) == (tmp_path / "chromium", tmp_path / "chromedriver")


def test_the_script_refuses_other_arguments() -> None:
    done = subprocess.run([sys.executable, "scripts/browser", "remove"], cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (2, "") and "scripts/browser install" in done.stderr

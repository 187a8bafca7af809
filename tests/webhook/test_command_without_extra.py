"""``desched webhook`` where the ``[webhook]`` extra is not installed: ``--help`` shows the flags (the parser needs none
of the extra's packages), running it says once what to install (issue 27, item 11)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.webhook.server import ROOT

# The CLI in a process where these packages cannot be imported, nor found by desched.extras.
WITHOUT = """
import sys

blocked = set(sys.argv[1].split(","))


class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"{name} is not installed here", name=name)
        return None


for loaded in [name for name in sys.modules if name.split(".")[0] in blocked]:
    del sys.modules[loaded]
sys.meta_path.insert(0, Absent())
import desched.extras

found = desched.extras.find_spec
desched.extras.find_spec = lambda name, *rest: None if name in blocked else found(name, *rest)
from desched.cli import main

sys.exit(main(sys.argv[2:]))
"""
SERVER = "fastapi,uvicorn"


def without(blocked: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT, blocked, *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


@pytest.mark.parametrize("blocked", [SERVER, "fastapi,uvicorn,kubernetes,cryptography"])
def test_help_shows_the_flags_without_the_extra(blocked: str) -> None:
    done = without(blocked, "webhook", "--help")
    assert (done.returncode, done.stderr) == (0, "")
    for flag in ("--tls-cert", "--tls-key", "--policy-configmap", "--max-connections", "--tls-min-version"):
        assert flag in done.stdout


@pytest.mark.parametrize("args", [(), ("--tls-cert", "tls.crt", "--tls-key", "tls.key")], ids=["bare", "flags"])
def test_running_without_the_extra_names_it_once(args: tuple[str, ...]) -> None:
    done = without(SERVER, "webhook", *args)
    assert (done.returncode, done.stdout) == (2, "")
    [line] = done.stderr.splitlines()
    assert line == "desched: the webhook command needs fastapi, uvicorn: pip install 'desched[webhook]'"

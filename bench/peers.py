"""Virtual environments for the benchmarks: desched, and the peer tools it is measured against, kept apart.

Three environments under ``bench/``:

- ``bench/.venv``: desched, a regular (non-editable) install of this checkout, refreshed on every call;
- ``bench/.peers``: yamllint and kubernetes-validate from PyPI, created once (skipped when both are installed);
- ``bench/.checkov``: checkov from PyPI, created once; apart because it pins many dependencies exactly (sharing an
  environment would change the other tools' versions).

Each environment gets a ``.gitignore`` of ``*`` (as ``python -m venv`` writes from Python 3.13), so that none of it
can be added to git. Installs and tool runs use :data:`ENV`. ``python bench/peers.py`` prepares all three and prints
the versions.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(HERE, ".venv")
PEERS = os.path.join(HERE, ".peers")
CHECKOV = os.path.join(HERE, ".checkov")

# Requirements as pip takes them. Unpinned: the newest releases install and run offline on Python 3.11 (checked with
# yamllint 1.38.0, kubernetes-validate 1.37.0, checkov 3.3.30). A pin added here needs its reason beside it.
PEER_PACKAGES = ["yamllint", "kubernetes-validate"]
CHECKOV_PACKAGES = ["checkov"]

ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
"""The caller's environment without ``PYTHONDONTWRITEBYTECODE``: tools write and reuse bytecode, as for users."""

_PIP = ["-m", "pip", "install", "-q", "--disable-pip-version-check"]


def bin_dir(venv: str) -> str:
    """The directory of ``venv``'s executables."""
    return os.path.join(venv, "bin")


def _python(venv: str) -> str:
    return os.path.join(bin_dir(venv), "python")


def _ignore(venv: str) -> None:
    with open(os.path.join(venv, ".gitignore"), "w", encoding="utf-8") as handle:
        handle.write("# created by bench/peers.py\n*\n")


def _create(venv: str, requirements: list[str]) -> None:
    """``venv`` (created if missing) with ``requirements`` installed and all its bytecode compiled."""
    if not os.path.exists(_python(venv)):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    _ignore(venv)
    subprocess.run([_python(venv), *_PIP, *requirements], check=True, env=ENV)
    subprocess.run([_python(venv), "-m", "compileall", "-q", venv], check=False, stdout=subprocess.DEVNULL, env=ENV)


def prepare_venv() -> None:
    """``bench/.venv`` with desched as users get it: a regular, non-editable install of this checkout.

    Created with every extra's dependencies (``desched[all]``: the webhook and executor benchmarks need them) at the
    versions the tests pin (``constraints.txt``) when missing; desched itself is reinstalled (without its dependencies)
    on every call, so that it is the checkout's current code. Its bytecode is then compiled, as ``pip install`` does on
    a user's machine, so that no measured run pays for compiling. Not editable: an editable install's import hook and
    path entries are not what users run.
    """
    if not os.path.exists(os.path.join(bin_dir(VENV), "desched")):
        _create(VENV, ["-c", os.path.join(ROOT, "constraints.txt"), f"{ROOT}[all]"])
    _ignore(VENV)
    subprocess.run([_python(VENV), *_PIP, "--force-reinstall", "--no-deps", ROOT], check=True, env=ENV)
    subprocess.run([_python(VENV), "-m", "compileall", "-q", VENV], check=False, stdout=subprocess.DEVNULL, env=ENV)


def desched_venv() -> str:
    """``bench/.venv``'s bin directory, after :func:`prepare_venv`."""
    prepare_venv()
    return bin_dir(VENV)


def desched_python() -> str:
    """``bench/.venv``'s ``python`` (not resolved: the symlink is what selects the environment), after
    :func:`prepare_venv`."""
    prepare_venv()
    return _python(VENV)


def peers_venv() -> str:
    """``bench/.peers``'s bin directory, with ``yamllint`` and ``kubernetes-validate``; installed only when missing."""
    if not all(os.path.exists(os.path.join(bin_dir(PEERS), tool)) for tool in ("yamllint", "kubernetes-validate")):
        _create(PEERS, PEER_PACKAGES)
    _ignore(PEERS)
    return bin_dir(PEERS)


def checkov_venv() -> str:
    """``bench/.checkov``'s bin directory, with ``checkov``; installed only when missing."""
    if not os.path.exists(os.path.join(bin_dir(CHECKOV), "checkov")):
        _create(CHECKOV, CHECKOV_PACKAGES)
    _ignore(CHECKOV)
    return bin_dir(CHECKOV)


_VERSIONS = "import importlib.metadata as m, json, sys; print(json.dumps({p: m.version(p) for p in sys.argv[1:]}))"


def versions() -> dict[str, str]:
    """The installed version of each tool, by name (``desched``, ``yamllint``, ``kubernetes-validate``, ``checkov``).

    Read from each environment's package metadata; an environment that does not exist yet is left out.
    """
    found: dict[str, str] = {}
    for venv, requirements in ((VENV, ["desched"]), (PEERS, PEER_PACKAGES), (CHECKOV, CHECKOV_PACKAGES)):
        if not os.path.exists(_python(venv)):
            continue
        names = [re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0] for requirement in requirements]
        command = [_python(venv), "-c", _VERSIONS, *names]
        out = subprocess.run(command, check=True, capture_output=True, text=True, env=ENV)
        found.update(json.loads(out.stdout))
    return found


if __name__ == "__main__":
    desched_venv()
    peers_venv()
    checkov_venv()
    print(json.dumps(versions(), indent=2))

"""What ``pip install`` gives: one import package, ``desched``; a lean core; extras that name themselves."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from desched.extras import EXTRAS

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PROJECT["tool"]["setuptools"]
HEAVY = ("kubernetes", "fastapi", "uvicorn", "cryptography")
# Distribution name -> import name, where they differ.
IMPORT_NAMES = {"pyyaml": "yaml"}


def _folder_packages() -> set[str]:
    """Every folder with an ``__init__.py`` under the mapped folders, as its import name."""
    found: set[str] = set()
    for package, folder in SETUPTOOLS["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            found.add(".".join([package, *init.parent.relative_to(ROOT / folder).parts]))
    return found


def test_every_package_folder_is_installed():
    assert set(SETUPTOOLS["packages"]) == _folder_packages()
    assert all(name == "desched" or name.startswith("desched.") for name in SETUPTOOLS["packages"])


def _requirement_names(requirements: list[str]) -> list[str]:
    names = [re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower() for requirement in requirements]
    return [IMPORT_NAMES.get(name, name) for name in names]


def test_the_core_needs_only_pyyaml_and_the_extras_agree_with_the_code():
    assert _requirement_names(PROJECT["project"]["dependencies"]) == ["yaml"]
    optional = PROJECT["project"]["optional-dependencies"]
    for extra, imports in EXTRAS.items():
        assert sorted(_requirement_names(optional[extra])) == sorted(imports), extra
    assert optional["all"] == ["desched[executor,webhook]"]


def _site_packages(env: Path) -> Path:
    [found] = list(env.glob("lib/python3*/site-packages"))
    return found


def _size(path: Path) -> int:
    return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file() and not entry.is_symlink())


@pytest.mark.slow
def test_a_core_install_is_lean_and_names_the_extras(tmp_path):
    """``pip install .`` in a new venv: only ``desched`` of ours at the top level, none of the heavy stacks, under
    40 MiB in all; ``desched lint`` works; a command whose extra is missing shows its --help, and says how to get the
    extra in one line when run."""
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / "bin" / "python"
    constraints = ["-c", str(ROOT / "constraints.txt")]
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *constraints, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    site = _site_packages(env)
    [record] = list(site.glob("desched-*.dist-info/RECORD"))
    tops = {line.split("/", 1)[0] for line in record.read_text().splitlines() if line}
    assert {top for top in tops if not top.endswith(".dist-info") and top != ".."} == {"desched"}, tops
    assert not [name for name in HEAVY if (site / name).exists()]
    assert _size(env) < 40 * 2**20, f"{_size(env) / 2**20:.1f} MiB"

    desched = env / "bin" / "desched"
    lint = subprocess.run(
        [str(desched), "lint", "--no-config", "examples/good"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    clean = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    for command, extra in (("webhook", "webhook"), ("certs", "webhook"), ("run", "executor")):
        helped = subprocess.run(
            [str(desched), command, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=clean
        )
        assert (helped.returncode, helped.stderr) == (0, ""), helped.stderr  # the parser needs no extra
        assert helped.stdout.startswith(f"usage: desched {command} ")
        refused = subprocess.run(
            [str(desched), command], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=clean
        )
        assert refused.returncode == 2, refused.stdout
        assert refused.stdout == ""
        [line] = refused.stderr.splitlines()
        assert line.startswith(f"desched: the {command} command needs ") and f"pip install 'desched[{extra}]'" in line
    simulate = subprocess.run([str(desched), "simulate", "--help"], capture_output=True, text=True, timeout=120)
    assert simulate.returncode == 0, simulate.stderr
    assert sys.version_info >= (3, 10)

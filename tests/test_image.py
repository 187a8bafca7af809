"""The image's supply chain: its base is pinned by digest, and its Python distributions come from a hash-locked file.

The Dockerfile's stages start from one image pinned by ``@sha256:`` digest; ``requirements/image.txt`` pins every
distribution with ``==`` and the sha256 of its files, at the versions of ``constraints.txt``, and holds everything the
image installs; the Dockerfile installs it with ``--require-hashes`` and installs nothing else but desched itself,
without dependencies or build isolation. The slow test repeats the Dockerfile's installs in a new venv, from the
files the Dockerfile copies, so a lock that misses a dependency or a COPY that misses a package folder fails here.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.image import dockerfile

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
LOCK = "requirements/image.txt"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DIGEST = re.compile(r"[^@\s]+@sha256:[0-9a-f]{64}")
PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
HASH = re.compile(r"--hash=sha256:[0-9a-f]{64}")


def _instructions(instruction: str) -> list[list[str]]:
    """The arguments of every Dockerfile instruction named ``instruction``, split as a shell would."""
    return dockerfile.instructions(DOCKERFILE.read_text(encoding="utf-8"), instruction)


def _pip_installs() -> list[list[str]]:
    """Every ``pip install`` command the Dockerfile runs, as its words."""
    commands: list[list[str]] = []
    for words in _instructions("RUN"):
        for command in " ".join(words).split("&&"):
            parts = command.split()
            if len(parts) >= 2 and parts[0].endswith("pip") and parts[1] == "install":
                commands.append(parts)
    return commands


def _lock() -> dict[str, tuple[str, list[str]]]:
    """The lock's requirements: canonical name -> (version, hashes). Every line must be ``NAME==VERSION --hash=...``."""
    pins: dict[str, tuple[str, list[str]]] = {}
    for line in dockerfile.logical_lines((ROOT / LOCK).read_text(encoding="utf-8")):
        requirement, *options = line.split()
        match = PIN.fullmatch(requirement)
        assert match is not None, f"{LOCK}: not pinned with ==: {line}"
        assert options, f"{LOCK}: {requirement} has no --hash"
        assert all(HASH.fullmatch(option) for option in options), f"{LOCK}: {requirement}: only sha256 hashes: {line}"
        name = canonicalize_name(match.group(1))
        assert name not in pins, f"{LOCK}: {name} twice"
        pins[name] = (match.group(2), options)
    return pins


def _constraints() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in dockerfile.logical_lines((ROOT / "constraints.txt").read_text(encoding="utf-8")):
        match = PIN.fullmatch(line)
        assert match is not None, line
        pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def test_every_base_image_is_pinned_by_digest_and_both_stages_share_it() -> None:
    stages: set[str] = set()
    images: set[str] = set()
    for words in _instructions("FROM"):
        arguments = [word for word in words if not word.startswith("--")]
        image = arguments[0]
        if len(arguments) == 3 and arguments[1].upper() == "AS":
            stages.add(arguments[2].lower())
        if image.lower() in stages:
            continue
        assert DIGEST.fullmatch(image), f"FROM {image}: not pinned by @sha256 digest of 64 hex digits"
        images.add(image)
    assert len(images) == 1, images


def test_the_lock_pins_every_package_with_hashes() -> None:
    pins = _lock()
    assert pins
    for name, (version, hashes) in pins.items():
        Version(version)  # a release, not a range or a URL
        assert len(set(hashes)) == len(hashes), name


def test_the_lock_agrees_with_the_constraints() -> None:
    constraints = _constraints()
    disagree = {
        name: (version, constraints[name])
        for name, (version, _) in _lock().items()
        if name in constraints and Version(version) != Version(constraints[name])
    }
    assert not disagree, f"{LOCK} against constraints.txt (run scripts/lock-image): {disagree}"


def test_the_lock_holds_desched_all_and_its_build_backend() -> None:
    """desched's direct requirements with the ``all`` extra (which names desched's other extras) and the
    build-system's are in the lock: the Dockerfile installs desched with --no-deps and --no-build-isolation."""
    optional = PROJECT["project"]["optional-dependencies"]
    extras = [extra for entry in optional["all"] for extra in sorted(Requirement(entry).extras)]
    wanted = [*PROJECT["project"]["dependencies"], *PROJECT["build-system"]["requires"]]
    wanted += [requirement for extra in extras for requirement in optional[extra]]
    lock = _lock()
    for text in wanted:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{LOCK} misses {text} (run scripts/lock-image)"
        assert requirement.specifier.contains(lock[name][0], prereleases=True), (text, lock[name][0])


def test_the_dockerfile_installs_the_lock_with_require_hashes_and_nothing_else_unhashed() -> None:
    installs = _pip_installs()
    locked = [words for words in installs if LOCK in words]
    assert locked, f"the Dockerfile does not pip install -r {LOCK}"
    for words in locked:
        assert words[words.index(LOCK) - 1] in ("-r", "--requirement"), words
        assert "--require-hashes" in words and "--no-deps" in words, words
    for words in installs:
        if words not in locked:  # desched itself: no dependency resolved and no build requirement fetched unhashed
            assert "--no-deps" in words and "--no-build-isolation" in words, words
    assert any(LOCK in words for words in _instructions("COPY")), f"the Dockerfile does not COPY {LOCK}"


def test_the_build_context_keeps_the_lock() -> None:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    parts = Path(LOCK).parts
    for prefix in ("/".join(parts[:end]) for end in range(1, len(parts) + 1)):
        for pattern in patterns:
            assert not fnmatch.fnmatch(prefix, pattern.lstrip("/").removeprefix("**/")), (prefix, pattern)


@pytest.mark.slow
def test_the_dockerfile_steps_work_in_a_new_venv(tmp_path: Path) -> None:
    """The build stage's steps without Docker: the files its COPY lines name, a venv, the lock with
    --require-hashes, desched with --no-deps --no-build-isolation; then pip check and the commands run."""
    context = tmp_path / "context"
    for words in _instructions("COPY"):
        if any(word.startswith("--from") for word in words):
            continue
        *sources, _ = words
        for source in sources:
            target = context / source
            target.parent.mkdir(parents=True, exist_ok=True)
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(ROOT / source, target)
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    pip = [str(env / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    clean = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    for command in (
        [*pip, "install", "--quiet", "--require-hashes", "--no-deps", "-r", LOCK],
        [*pip, "install", "--quiet", "--no-deps", "--no-build-isolation", "."],
        [*pip, "check"],
    ):
        done = subprocess.run(command, cwd=context, capture_output=True, text=True, timeout=600, env=clean)
        assert done.returncode == 0, done.stdout + done.stderr
    desched = str(env / "bin" / "desched")
    for command in (
        [desched, "webhook", "--help"],
        [desched, "simulate", "--help"],
        [desched, "lint", "--no-config", "--exit-zero", str(ROOT / "examples")],
    ):
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=clean)
        assert done.returncode == 0, done.stdout + done.stderr

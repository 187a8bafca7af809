"""Build the desched image from the Dockerfile without any registry, and cache it.

Contract: :func:`install` installs the build tools with apt-get (idempotent: it returns at once when they are on
``PATH``). :func:`build` makes the image and returns where it is: two Debian 12 root filesystems made by
``mmdebstrap`` (the build stage's with python3-venv, the runtime's with python3 only) become local base images, the
Dockerfile is built by ``buildah`` (vfs storage, chroot isolation) with only its ``FROM`` images swapped for them, and
its ``pip install`` steps read the wheels the host's pip downloaded from ``requirements/image.txt`` with
``--require-hashes`` (a ``/etc/pip.conf`` mounted for the build says ``no-index`` and ``find-links``). The image is
written as an OCI layout and unpacked by ``umoci`` into a runtime bundle (``rootfs`` and ``config.json``), under
``<cache>/builds/<key>``, where the key hashes every input (the Dockerfile, the lock, the files its COPY lines take,
the bases' recipe, the version and the commit): a second call with the same inputs returns at once. Only the
newest two images are kept; the build's container storage is a scratch directory removed afterwards. A missing
prerequisite (tools, Debian mirror, wheels) raises :class:`InstallError`; a failing image build raises
:class:`BuildError`. Both name the step and the log; the message is recorded in ``<cache>/last-failure.txt``.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import tomllib

from tests import prerequisites
from tests.image import dockerfile
from tests.prerequisites import InstallError, apt_install, installed_once, privilege, run

ROOT = Path(__file__).resolve().parents[2]
LOCK = Path("requirements") / "image.txt"
APT_PACKAGES = ("mmdebstrap", "buildah", "umoci")
TOOLS = ("mmdebstrap", "buildah", "umoci")
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
# The two bases, in the order of the Dockerfile's FROM lines: the build stage needs `python3 -m venv` with pip
# (python3-venv); the runtime needs only the interpreter the venv links to (the same /usr/bin/python3).
BASES = (("build", ("python3", "python3-venv")), ("runtime", ("python3",)))
MMDEBSTRAP_OPTIONS = (
    "--variant=minbase",
    "--mode=root",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    "--dpkgopt=path-exclude=/usr/share/info/*",
)
PIP_CONF = "[global]\nno-index = true\nfind-links = /wheels\n"
RECIPE = "1"  # bump when the steps below change what an image holds
COMPLETE_MARKER = "complete"
TAG = "desched"
KEEP = 2  # images kept in the cache (two checkouts, or a branch and main, alternate without rebuilding)


class BuildError(Exception):
    """The image build itself failed (the Dockerfile, the lock or the source); the message names the step and log."""


class Image(NamedTuple):
    """A built image: its OCI layout, its unpacked bundle and what its config says."""

    key: str
    directory: Path
    digest: str
    config: dict[str, Any]

    @property
    def layout(self) -> Path:
        return self.directory / "oci"

    @property
    def bundle(self) -> Path:
        return self.directory / "bundle"

    @property
    def rootfs(self) -> Path:
        return self.bundle / "rootfs"

    @property
    def labels(self) -> dict[str, str]:
        labels: dict[str, str] = self.config.get("Labels") or {}
        return labels

    def summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = json.loads((self.directory / "image.json").read_text(encoding="utf-8"))
        return summary


def cache_root() -> Path:
    """``$DESCHED_IMAGE_CACHE`` or ``~/.cache/desched/image``: outside the repository, shared by every clone."""
    configured = os.environ.get("DESCHED_IMAGE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "desched" / "image"


def last_failure() -> str | None:
    """The message of the last failed install or build, if the last attempt failed."""
    return prerequisites.last_failure(cache_root())


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def install(out: TextIO = sys.stderr) -> None:
    """Install the build tools with apt-get unless they are all on ``PATH`` already."""
    if not missing_tools():
        return
    root = cache_root()
    installed_once(root, lambda: missing_tools() and _install(root / "install.log", out))


def _install(log: Path, out: TextIO) -> None:
    sudo = privilege("the image's build tools")
    _say(out, "installing " + " ".join(APT_PACKAGES) + f" (log: {log})")
    with open(log, "a", encoding="utf-8") as sink:
        apt_install(APT_PACKAGES, sudo, sink, log)
    if missing_tools():
        raise InstallError("not on PATH after apt-get install: " + ", ".join(missing_tools()))


def version() -> str:
    """The version pyproject.toml gives desched (the image's org.opencontainers.image.version)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["version"])


def revision() -> str:
    """The checkout's commit (the image's org.opencontainers.image.revision), or ``unknown`` outside git."""
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def bases_key() -> str:
    return _digest(json.dumps([SUITE, MIRROR, BASES, MMDEBSTRAP_OPTIONS]).encode())


def image_key() -> str:
    """A hash of everything the image is made from (see the module contract)."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    hasher = hashlib.sha256()
    for part in (RECIPE, bases_key(), version(), revision(), text, (ROOT / ".dockerignore").read_text("utf-8")):
        hasher.update(part.encode() + b"\0")
    for path in _context_files([str(LOCK), *dockerfile.copied_sources(text)]):
        hasher.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return hasher.hexdigest()[:16]


def find() -> Image | None:
    """The cached image for the current inputs, or ``None``. Never builds."""
    directory = cache_root() / "builds" / image_key()
    if not (directory / COMPLETE_MARKER).is_file():
        return None
    summary = json.loads((directory / "image.json").read_text(encoding="utf-8"))
    return Image(directory.name, directory, summary["digest"], summary["config"])


def build(out: TextIO = sys.stderr) -> Image:
    """The image for the current inputs: the cached one, else built now (see the module contract)."""
    root = cache_root()
    return installed_once(root, lambda: find() or _checked_build(root, out), (InstallError, BuildError))


def _checked_build(root: Path, out: TextIO) -> Image:
    missing = missing_tools()
    if missing:
        raise InstallError(f"{', '.join(missing)} not installed: run scripts/image install")
    return _build(root, image_key(), out)


def _build(root: Path, key: str, out: TextIO) -> Image:
    started = time.monotonic()
    log = root / "build.log"
    final = root / "builds" / key
    work = root / "builds" / f"{key}.work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(final, ignore_errors=True)
    work.mkdir(parents=True)
    steps: dict[str, float] = {}
    with open(log, "w", encoding="utf-8") as sink:
        mark = time.monotonic()
        tarballs = _bases(root, sink, log, out)
        steps["bases"] = time.monotonic() - mark
        mark = time.monotonic()
        wheels = _wheels(root, sink, log, out)
        steps["wheels"] = time.monotonic() - mark
        storage = work / "storage"
        buildah = ["buildah", "--root", str(storage), "--runroot", str(work / "run"), "--storage-driver", "vfs"]
        try:
            mark = time.monotonic()
            references = [_import_base(buildah, name, tarball, sink, log) for name, tarball in tarballs]
            steps["import"] = time.monotonic() - mark
            mark = time.monotonic()
            _say(out, f"building the Dockerfile with buildah (log: {log})")
            _build_dockerfile(buildah, work, references, wheels, sink, log)
            steps["buildah"] = time.monotonic() - mark
            mark = time.monotonic()
            run(
                [*buildah, "push", f"localhost/{TAG}:{key}", f"oci:{work / 'oci'}:{TAG}"],
                "buildah push",
                sink,
                log,
                error=BuildError,
            )
            run(
                ["umoci", "unpack", "--image", f"{work / 'oci'}:{TAG}", str(work / "bundle")],
                "umoci",
                sink,
                log,
                error=BuildError,
            )
            steps["export"] = time.monotonic() - mark
        finally:
            shutil.rmtree(storage, ignore_errors=True)
            shutil.rmtree(work / "run", ignore_errors=True)
    digest, config, compressed = _read_layout(work / "oci")
    summary = {
        "digest": digest,
        "config": config,
        "layers_bytes": compressed,
        "rootfs_bytes": _tree_size(work / "bundle" / "rootfs"),
        "build_seconds": round(time.monotonic() - started, 1),
        "step_seconds": {name: round(seconds, 1) for name, seconds in steps.items()},
    }
    (work / "image.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (work / "Dockerfile").unlink()
    work.rename(final)
    (final / COMPLETE_MARKER).write_text(digest + "\n", encoding="utf-8")
    _prune(root / "builds")
    _say(out, f"built {digest} in {summary['build_seconds']} s: {final}")
    return Image(key, final, digest, config)


def _prune(builds: Path) -> None:
    """Remove all but the newest :data:`KEEP` images (each is a few hundred megabytes), and unfinished builds."""
    done = sorted(
        (entry for entry in builds.iterdir() if (entry / COMPLETE_MARKER).is_file()),
        key=lambda entry: (entry / COMPLETE_MARKER).stat().st_mtime,
        reverse=True,
    )
    for entry in builds.iterdir():
        if entry not in done[:KEEP]:
            shutil.rmtree(entry, ignore_errors=True)


def _bases(root: Path, sink: TextIO, log: Path, out: TextIO) -> list[tuple[str, Path]]:
    """The bases' root filesystems as tarballs, made by mmdebstrap unless cached."""
    directory = root / "bases" / bases_key()
    directory.mkdir(parents=True, exist_ok=True)
    tarballs: list[tuple[str, Path]] = []
    for name, packages in BASES:
        tarball = directory / f"{name}.tar"
        if not tarball.is_file():
            _say(out, f"making the {name} base: Debian {SUITE} with {', '.join(packages)} (mmdebstrap)")
            partial = tarball.with_suffix(".partial.tar")
            command = ["mmdebstrap", *MMDEBSTRAP_OPTIONS, "--include=" + ",".join(packages), SUITE, str(partial)]
            run([*command, MIRROR], f"mmdebstrap ({name} base)", sink, log)  # a missing prerequisite: the tests skip
            partial.rename(tarball)
        tarballs.append((name, tarball))
    return tarballs


def _wheels(root: Path, sink: TextIO, log: Path, out: TextIO) -> Path:
    """The lock's wheels, downloaded by this Python's pip with --require-hashes unless cached."""
    lock = (ROOT / LOCK).read_bytes()
    directory = root / "wheels" / _digest(lock)
    if (directory / COMPLETE_MARKER).is_file():
        return directory
    if sys.version_info[:2] != (3, 11) or platform.machine() not in ("x86_64", "aarch64"):
        raise InstallError("the wheels are downloaded for the image's Python 3.11 on Linux: run me with Python 3.11")
    _say(out, f"downloading the wheels of {LOCK} (pip, --require-hashes)")
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps"]
    command += ["--require-hashes", "--only-binary", ":all:", "--dest", str(directory), "-r", str(ROOT / LOCK)]
    run(command, "pip download", sink, log)  # a missing prerequisite: the tests skip
    (directory / COMPLETE_MARKER).write_text("", encoding="utf-8")
    return directory


def _import_base(buildah: list[str], name: str, tarball: Path, sink: TextIO, log: Path) -> str:
    reference = f"localhost/desched-base-{name}:{bases_key()}"
    container = run([*buildah, "from", "scratch"], "buildah from scratch", sink, log, error=BuildError).strip()
    run([*buildah, "add", container, str(tarball), "/"], f"buildah add ({name} base)", sink, log, error=BuildError)
    run(
        [*buildah, "commit", "--rm", container, reference], f"buildah commit ({name} base)", sink, log, error=BuildError
    )
    return reference


def _build_dockerfile(
    buildah: list[str], work: Path, references: list[str], wheels: Path, sink: TextIO, log: Path
) -> None:
    """``buildah bud`` of the Dockerfile with its FROM images swapped for ``references``, offline."""
    try:
        text = dockerfile.with_bases((ROOT / "Dockerfile").read_text(encoding="utf-8"), references)
    except ValueError as error:
        raise BuildError(f"Dockerfile: {error}") from None
    (work / "Dockerfile").write_text(text, encoding="utf-8")
    (work / "pip.conf").write_text(PIP_CONF, encoding="utf-8")
    command = [*buildah, "bud", "--isolation", "chroot", "--pull=never", "--file", str(work / "Dockerfile")]
    command += ["--build-arg", f"VERSION={version()}", "--build-arg", f"REVISION={revision()}"]
    command += ["--volume", f"{wheels}:/wheels:ro", "--volume", f"{work / 'pip.conf'}:/etc/pip.conf:ro"]
    run(
        [*command, "--tag", f"localhost/{TAG}:{work.name.removesuffix('.work')}", str(ROOT)],
        "buildah bud",
        sink,
        log,
        error=BuildError,
    )
    (work / "pip.conf").unlink()


def _read_layout(layout: Path) -> tuple[str, dict[str, Any], int]:
    """The manifest digest, the image config and the layers' total size of the one image in an OCI layout."""
    index = json.loads((layout / "index.json").read_text(encoding="utf-8"))
    digest = index["manifests"][0]["digest"]
    manifest = json.loads(_blob(layout, digest))
    config = json.loads(_blob(layout, manifest["config"]["digest"]))
    return digest, config["config"], sum(layer["size"] for layer in manifest["layers"])


def _blob(layout: Path, digest: str) -> bytes:
    algorithm, _, value = digest.partition(":")
    return (layout / "blobs" / algorithm / value).read_bytes()


def _tree_size(top: Path) -> int:
    return sum(path.lstat().st_size for path in top.rglob("*") if path.is_file() and not path.is_symlink())


def _context_files(sources: list[str]) -> Iterator[Path]:
    for source in sorted(set(sources)):
        path = ROOT / source
        if path.is_dir():
            yield from sorted(
                entry
                for entry in path.rglob("*")
                if entry.is_file() and "__pycache__" not in entry.parts and not entry.name.endswith(".egg-info")
            )
        elif path.is_file():
            yield path


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _say(out: TextIO, message: str) -> None:
    print(f"image: {message}", file=out, flush=True)

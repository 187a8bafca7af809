"""Install the control plane's binaries: Debian's etcd, plus kube-apiserver and kube-controller-manager built once.

Contract: :func:`install` is idempotent. When a completed build is in the cache and etcd is on ``PATH`` it returns at
once without touching apt. Otherwise it enables a ``deb-src`` entry, installs the build packages, fetches
``src:kubernetes`` with ``apt-get source``, builds the two binaries with Debian's Go and the vendored tree (no network
for Go), copies them to ``<cache>/<debian-version>/bin`` and marks the entry complete. Any failing step raises
:class:`InstallError` with a message that says which step failed and where its log is; the message is also recorded in
``<cache>/last-failure.txt`` so skipped cluster tests can show the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple, TextIO

from tests import prerequisites
from tests.prerequisites import InstallError, apt_install, privilege, run

SOURCE_PACKAGE = "kubernetes"
BINARIES = ("kube-apiserver", "kube-controller-manager")
# golang-github-modern-go-reflect2-dev: reflect2 1.0.2, which replaces the vendored 1.0.1 (see REVISION)
APT_PACKAGES = ("etcd-server", "golang-go", "rsync", "jq", "make", "dpkg-dev", "golang-github-modern-go-reflect2-dev")
# Our change to Debian's tree, part of the cache key: the vendored modern-go/reflect2 1.0.1 breaks under Go >= 1.18
# (Debian's Go is 1.19): json-iterator's sorted-map encoder faults in mapiterinit, and kube-apiserver crashes on the
# first custom resource it decodes. reflect2 1.0.2 (Debian's golang-github-modern-go-reflect2-dev) is the fix.
REVISION = "desched2"
REFLECT2_SOURCE = Path("/usr/share/gocode/src/github.com/modern-go/reflect2")
COMPLETE_MARKER = "complete"
SOURCES_DIR = Path("/etc/apt/sources.list.d")
DEB_SRC_FILE = SOURCES_DIR / "desched-deb-src.sources"


class Installation(NamedTuple):
    """Where the control plane's programs are."""

    version: str
    etcd: Path
    bin_dir: Path

    def binary(self, name: str) -> Path:
        return self.bin_dir / name


def cache_root() -> Path:
    """``$DESCHED_KCP_CACHE`` or ``~/.cache/desched/kcp``: outside the repository, shared by every clone."""
    configured = os.environ.get("DESCHED_KCP_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "desched" / "kcp"


def find() -> Installation | None:
    """The newest completed build in the cache, if etcd is installed too; ``None`` otherwise. Never runs apt."""
    etcd = shutil.which("etcd")
    root = cache_root()
    if etcd is None or not root.is_dir():
        return None
    builds = sorted(
        (
            entry
            for entry in root.iterdir()
            if (entry / COMPLETE_MARKER).is_file() and entry.name.endswith(f"+{REVISION}")
        ),
        key=lambda entry: (entry / COMPLETE_MARKER).stat().st_mtime,
        reverse=True,
    )
    for entry in builds:
        bin_dir = entry / "bin"
        if all(os.access(bin_dir / name, os.X_OK) for name in BINARIES):
            return Installation(entry.name, Path(etcd), bin_dir)
    return None


def last_failure() -> str | None:
    """The message of the last failed installation, if the last attempt failed."""
    return prerequisites.last_failure(cache_root())


def install(out: TextIO = sys.stderr) -> Installation:
    """Make sure the binaries exist (see the module contract) and say where they are."""
    root = cache_root()
    return prerequisites.installed_once(root, lambda: find() or _install(root, out))


def _install(root: Path, out: TextIO) -> Installation:
    sudo = privilege("the control plane")
    log = root / "install.log"
    _say(out, f"installing the control plane (log: {log})")
    with open(log, "a", encoding="utf-8") as sink:
        if not _has_deb_src():
            _say(out, f"adding deb-src entries ({DEB_SRC_FILE})")
            _write_deb_src(sudo)
        _say(out, "installing packages: " + " ".join(APT_PACKAGES))
        apt_install(APT_PACKAGES, sudo, sink, log, update=True)  # the deb-src entries are new to the lists
        version = _source_version(sink, log)
        entry = root / f"{version}+{REVISION}"
        if not (entry / COMPLETE_MARKER).is_file():
            _build(entry, version, sink, log, out)
    etcd = shutil.which("etcd")
    if etcd is None:
        raise InstallError("etcd is not on PATH after installing etcd-server")
    _say(out, f"control plane ready: Kubernetes from Debian {version}, binaries in {entry / 'bin'}")
    return Installation(entry.name, Path(etcd), entry / "bin")


def _has_deb_src() -> bool:
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in _source_files()]
    return any(re.search(r"^\s*(Types:.*\bdeb-src\b|deb-src\s)", text, re.MULTILINE) for text in texts)


def _source_files() -> list[Path]:
    files = [Path("/etc/apt/sources.list")] if Path("/etc/apt/sources.list").is_file() else []
    if SOURCES_DIR.is_dir():
        files += sorted(path for path in SOURCES_DIR.iterdir() if path.suffix in (".list", ".sources"))
    return files


def deb_src_entries(sources: Sequence[tuple[str, str]]) -> str:
    """``deb-src`` twins of the ``deb`` entries in ``sources`` ((file name, text) pairs, deb822 or one-line format)."""
    stanzas: list[str] = []
    for name, text in sources:
        if name.endswith(".sources"):
            for stanza in re.split(r"\n\s*\n", text):
                if re.search(r"^Types:\s*deb\s*$", stanza, re.MULTILINE):
                    stanzas.append(re.sub(r"^Types:\s*deb\s*$", "Types: deb-src", stanza.strip(), flags=re.MULTILINE))
        else:
            for line in text.splitlines():
                if re.match(r"^\s*deb\s", line):
                    rest = line.strip()[len("deb") :].strip()
                    stanzas.append(_one_line_to_deb822(rest))
    return "\n\n".join(stanzas) + "\n" if stanzas else ""


def _one_line_to_deb822(rest: str) -> str:
    options = ""
    if rest.startswith("["):
        options, _, rest = rest[1:].partition("]")
    uri, suite, *components = rest.split()
    lines = ["Types: deb-src", f"URIs: {uri}", f"Suites: {suite}", f"Components: {' '.join(components)}"]
    signed = re.search(r"signed-by=(\S+)", options)
    if signed:
        lines.append(f"Signed-By: {signed.group(1)}")
    return "\n".join(lines)


def _write_deb_src(sudo: list[str]) -> None:
    sources = [(path.name, path.read_text(encoding="utf-8", errors="replace")) for path in _source_files()]
    text = deb_src_entries(sources)
    if not text:
        raise InstallError("no 'deb' entries in the apt sources to derive 'deb-src' entries from")
    result = subprocess.run([*sudo, "tee", str(DEB_SRC_FILE)], input=text, text=True, capture_output=True)
    if result.returncode != 0:
        raise InstallError(f"cannot write {DEB_SRC_FILE}: {result.stderr.strip()}")


def _source_version(sink: TextIO, log: Path) -> str:
    """The Debian version of ``src:kubernetes`` that ``apt-get source`` would fetch (read from its .dsc name)."""
    output = run(["apt-get", "source", "--print-uris", SOURCE_PACKAGE], "apt-get source --print-uris", sink, log)
    match = re.search(rf"^'[^']*' {SOURCE_PACKAGE}_(\S+)\.dsc ", output, re.MULTILINE)
    if match is None:
        raise InstallError(f"apt-get source --print-uris {SOURCE_PACKAGE} named no .dsc file (see {log})")
    return match.group(1)


def _build(entry: Path, version: str, sink: TextIO, log: Path, out: TextIO) -> None:
    work = entry / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    _say(out, f"fetching src:{SOURCE_PACKAGE} {version}")
    run(["apt-get", "source", f"{SOURCE_PACKAGE}={version}"], "apt-get source", sink, log, cwd=work)
    trees = [path for path in work.iterdir() if path.is_dir() and (path / "Makefile").is_file()]
    if len(trees) != 1:
        raise InstallError(f"apt-get source unpacked no single source tree under {work}")
    tree = trees[0]
    vendored = tree / "vendor" / "github.com" / "modern-go" / "reflect2"
    if not REFLECT2_SOURCE.is_dir() or not vendored.is_dir():
        raise InstallError(f"cannot replace the vendored reflect2 ({vendored}) with {REFLECT2_SOURCE}")
    shutil.rmtree(vendored)
    shutil.copytree(REFLECT2_SOURCE, vendored, ignore=shutil.ignore_patterns("*_test.go", "test*"))
    env = {
        **os.environ,
        "CGO_ENABLED": "0",
        "GOFLAGS": "-mod=vendor",
        "GOPROXY": "off",
        "GOLDFLAGS": "-s -w",
        "HOME": str(work / "home"),
        "GOCACHE": str(work / "gocache"),
    }
    _say(out, "building " + " and ".join(BINARIES) + " (about 5 minutes, once)")
    targets = " ".join(f"cmd/{name}" for name in BINARIES)
    run(["make", f"WHAT={targets}"], "make (building Kubernetes)", sink, log, cwd=tree, env=env)
    bin_dir = entry / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in BINARIES:
        built = tree / "_output" / "bin" / name
        if not built.is_file():
            raise InstallError(f"the build produced no {name} (see {log})")
        shutil.copy2(built, bin_dir / name)
    (entry / COMPLETE_MARKER).write_text(f"{version}\n", encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


def _say(out: TextIO, message: str) -> None:
    print(f"control-plane: {message}", file=out, flush=True)

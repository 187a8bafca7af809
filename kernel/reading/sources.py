"""Finding and reading the files to lint: paths, directories, stdin, ignore globs, hostile bytes.

Contract: :func:`iter_paths` yields display names in a stable order and reports what it could not read through
``on_error`` instead of raising; :func:`read_text` returns the decoded text or raises :class:`SourceError`
carrying a 1-based position, so that bad bytes become a DS001 finding rather than a crash. Special files (FIFOs,
sockets, devices) are never opened: a named one is an error, one met in a directory walk is skipped.
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator

from desched.errors import InputError

__all__ = [
    "MAX_FILE_BYTES",
    "TEMPLATE_SUFFIXES",
    "SourceError",
    "decode_text",
    "git_root",
    "is_ignored",
    "is_template",
    "iter_paths",
    "read_text",
    "repository_root",
    "require_regular",
]

MAX_FILE_BYTES = 8 * 1024 * 1024
YAML_SUFFIXES = (".yaml", ".yml")
# Go templates of YAML (Helm, helmfile): linted once their template actions are neutralised (desched.linter.templates)
TEMPLATE_SUFFIXES = (".yaml.tpl", ".yml.tpl", ".yaml.gotmpl")
_WALKED = YAML_SUFFIXES + TEMPLATE_SUFFIXES  # what a directory walk yields
_SKIP_DIRS = {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache"}
_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class SourceError(InputError):
    """A file's bytes cannot be read as text (binary, not UTF-8, too large); the position is 1-based."""


def is_ignored(path: str, patterns: Iterable[str]) -> bool:
    """True when ``path`` (or any of its parent folders) matches one of the glob ``patterns``."""
    normalized = path.replace(os.sep, "/").removeprefix("./")
    parts = normalized.split("/")
    candidates = {normalized} | {"/".join(parts[: i + 1]) for i in range(len(parts))}
    for pattern in patterns:
        pattern = pattern.removeprefix("./").rstrip("/")
        for candidate in candidates:
            if fnmatch.fnmatchcase(candidate, pattern) or fnmatch.fnmatchcase(candidate, pattern + "/**"):
                return True
        if "/" not in pattern and any(fnmatch.fnmatchcase(part, pattern) for part in parts):
            return True
    return False


def is_template(path: str) -> bool:
    """True when ``path`` names a Go template of YAML: one of :data:`TEMPLATE_SUFFIXES`, or any file under a Helm
    chart's ``templates/`` folder (one beside a ``Chart.yaml``), which Helm renders whatever its name."""
    return path.endswith(TEMPLATE_SUFFIXES) or _in_chart_templates(os.path.dirname(os.path.abspath(path)))


@functools.lru_cache(maxsize=256)
def _in_chart_templates(folder: str) -> bool:
    """Whether ``folder`` is a chart's ``templates/`` folder or lies under one (cached: a walk asks per file)."""
    head, name = os.path.split(folder)
    if not name or head == folder:
        return False
    if name == "templates" and os.path.isfile(os.path.join(head, "Chart.yaml")):
        return True
    return _in_chart_templates(head)


def _not_regular(path: str) -> str | None:
    """``not a regular file (a FIFO)`` and the like when ``path`` (symlinks followed) is a special file; None when
    it is a regular file or a directory, or cannot be stat'ed (reading it will say why)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    kind = next((name for test, name in _SPECIAL if test(mode)), None)
    return None if kind is None else f"not a regular file ({kind})"


def require_regular(path: str) -> None:
    """Raise ``OSError`` (``strerror``: ``not a regular file (a FIFO)``, ...) when ``path`` is a special file, which
    is never opened: a FIFO would block forever, a device may act on being opened."""
    reason = _not_regular(path)
    if reason is not None:
        raise OSError(errno.EINVAL, reason, path)


def iter_paths(
    paths: Iterable[str],
    ignore: Iterable[str],
    on_error: Callable[[str, str], None],
    on_skip: Callable[[str, str], None] | None = None,
) -> Iterator[str]:
    """Yield the files to lint: named files as given, YAML files and YAML templates (:func:`is_template`) found under
    named directories, ``-`` for stdin.

    Directories are walked recursively in sorted order, skipping VCS and tool folders and anything matching
    ``ignore``. A missing path, a named special file or an unreadable directory is passed to ``on_error(path,
    reason)``; a special file found in a directory is not yielded but passed to ``on_skip(path, reason)`` if given.
    """
    patterns = list(ignore)
    for path in paths:
        if path == "-":
            yield path
        elif os.path.isdir(path):
            yield from _walk(path, patterns, on_error, on_skip)
        elif os.path.exists(path) or os.path.islink(path):
            if is_ignored(path, patterns):
                continue
            reason = _not_regular(path)
            if reason is None:
                yield path
            else:
                on_error(path, reason)
        else:
            on_error(path, "no such file or directory")


def _walk(
    top: str, patterns: list[str], on_error: Callable[[str, str], None], on_skip: Callable[[str, str], None] | None
) -> Iterator[str]:
    try:
        entries = sorted(os.scandir(top), key=lambda entry: entry.name)
    except OSError as exc:
        on_error(top, exc.strerror or str(exc))
        return
    for entry in entries:
        path = entry.path
        if is_ignored(path, patterns):
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir:
            if entry.name not in _SKIP_DIRS:
                yield from _walk(path, patterns, on_error, on_skip)
        elif entry.name.endswith(_WALKED):
            reason = None if _is_file(entry) else _not_regular(path)  # the directory's listing says, for most
            if reason is None:
                yield path
            elif on_skip is not None:
                on_skip(path, reason)


def _is_file(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a regular file (symlinks followed), as the directory listing tells without a stat of
    its own for anything but a symlink; False when that cannot be told."""
    try:
        return entry.is_file()
    except OSError:
        return False


def _read_bytes(path: str) -> bytes:
    if path == "-":
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    else:
        require_regular(path)
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    return data


def read_text(path: str) -> str:
    """Read and decode one file; raises ``OSError`` when unreadable, :class:`SourceError` when not lintable text."""
    data = _read_bytes(path)
    if len(data) > MAX_FILE_BYTES:
        raise SourceError(f"file is larger than the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit; not read")
    return decode_text(data)


def decode_text(data: bytes | bytearray) -> str:
    """``data`` as text: UTF-8 (a BOM dropped) or UTF-16 with its BOM; :class:`SourceError` for binary data (a NUL
    in the first 8 KiB) or bytes that are not UTF-8, at the line and column (in characters, the BOM not counted, as
    the text's other positions are) of the first bad byte."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise SourceError(f"invalid UTF-16 text: {exc.reason}") from None
    skip = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    nul = data.find(b"\x00", 0, 8192)
    if nul >= 0:
        raise SourceError("binary file (contains NUL bytes); not YAML", *_position(data, skip, nul))
    try:
        return str(memoryview(data)[skip:], "utf-8")
    except UnicodeDecodeError as exc:
        bad = skip + exc.start
        line, column = _position(data, skip, bad)
        raise SourceError(f"invalid UTF-8 byte 0x{data[bad]:02x}; YAML must be UTF-8", line, column) from None


def _position(data: bytes | bytearray, skip: int, offset: int) -> tuple[int, int]:
    """The line and column (in characters) of byte ``offset`` of ``data``, whose first ``skip`` bytes (a BOM) are
    not counted."""
    start = data.rfind(b"\n", skip, offset) + 1 or skip
    return data.count(b"\n", skip, offset) + 1, len(data[start:offset].decode("utf-8", "replace")) + 1


def repository_root(file: str) -> str | None:
    """The root of the repository ``file`` is in: the nearest directory above it holding ``.git`` or
    ``.desched.yaml``; ``None`` when there is none."""
    return _nearest(file, (".git", ".desched.yaml"))


def git_root(file: str) -> str:
    """The root of the Git repository ``file`` is in (where Flux and Argo CD paths start), else the current
    directory."""
    return _nearest(file, (".git",)) or os.getcwd()


def _nearest(file: str, markers: tuple[str, ...]) -> str | None:
    """The nearest directory above ``file`` that holds one of ``markers``."""
    directory = os.path.dirname(os.path.abspath(file))
    while True:
        if any(os.path.exists(os.path.join(directory, marker)) for marker in markers):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent

"""``desched migrate``: read files, migrate them with :func:`~desched.migrate.rewrite.migrate_text`, report, write.

Modes: print (the default), ``in-place``, ``check`` and ``diff``. Exit codes: 0 nothing to migrate (or migrated),
1 ``check``/``diff`` found something to migrate, 2 a file could not be read or migrated (the others are still
processed; a refused file is never written). Output contract:

* print: with one input (a file or ``-``) its text, migrated or not; with several, each file that changes, after a
  ``# ==> FILE <==`` line.
* ``in-place``: writes each changed file through a temporary file in the same directory (``.NAME.PID.N.desched-tmp``)
  and an atomic rename, keeping its mode, owner and group (as far as the user may set them) and encoding (UTF-8
  with or without BOM, UTF-16); ``-`` is printed instead. Says ``migrated FILE`` on stderr. A file is either wholly
  old or wholly new; SIGTERM, SIGINT and SIGHUP remove the temporary files not yet renamed before the process dies
  of the signal, and the temporary files of a killed (SIGKILL) run are removed by the next run writing in that
  directory. A read-only file (no write permission; for root, no write bit) is refused unless ``force``, and so is
  a migrated text larger than :data:`~desched.reading.sources.MAX_FILE_BYTES`.
* ``check``: ``would migrate FILE`` on stdout for each file that would change.
* ``diff``: a unified diff per changed file (``--- FILE`` / ``+++ FILE``, so ``patch -p0`` applies it).
* every conversion note on stderr as ``FILE:LINE: note: MESSAGE`` (lines of the input), unless ``quiet``;
  every error as ``desched: FILE:LINE:COL: MESSAGE``.
* templates (:func:`~desched.reading.sources.is_template`, found in directories or named) are never read nor written, in
  any mode: ``FILE: note: template not migrated ...`` on stderr, unless ``quiet``; so are special files met in a
  directory (``FILE: note: skipped: not a regular file (a FIFO)``), while a named one is an error.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Any, TextIO

from desched import versions
from desched.deployment.releases import Deployments, chart_yaml_app_version
from desched.migrate.rewrite import Result, migrate_text
from desched.reading.sources import MAX_FILE_BYTES, SourceError, is_template, iter_paths, read_text
from desched.reading.yamlsrc import YamlError, load_all

__all__ = ["MIGRATE", "MODES", "AtomicWriter", "MigrateCommand", "run", "write_atomic"]

MODES = ("print", "in-place", "check", "diff")
EXIT_OK, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2

_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
_SUFFIX = ".desched-tmp"
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


def _writable(path: str, info: os.stat_result) -> bool:
    """Whether the user may write ``path``: for root, which may write anything, whether any write bit is set."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return bool(info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return os.access(path, os.W_OK)


def _stage(path: str, text: str, force: bool = False) -> tuple[str, str, int]:
    """Write ``text`` to a new temporary file beside ``path``, in ``path``'s encoding (UTF-8, with or without BOM,
    or UTF-16), owner, group and mode; returns (real target, temporary file, open descriptor of the temporary file).
    Raises ``OSError`` for a read-only ``path`` (unless ``force``) or a text over ``MAX_FILE_BYTES``."""
    real = os.path.realpath(path)
    info = os.stat(real)
    if not force and not _writable(real, info):
        raise OSError(errno.EACCES, "read-only file, not written (--force writes it anyway)", path)
    with open(real, "rb") as handle:
        start = handle.read(3)
    data = text.encode("utf-8")
    for bom, codec in _BOMS:
        if start.startswith(bom):
            data = bom + text.encode(codec)
            break
    if len(data) > MAX_FILE_BYTES:
        limit = MAX_FILE_BYTES // (1024 * 1024)
        raise OSError(errno.EFBIG, f"migrated file is larger than the {limit} MiB that lint reads; not written", path)
    fd, temporary = _create_beside(real)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if hasattr(os, "fchown"):
            with contextlib.suppress(PermissionError):  # only root may give a file away
                os.fchown(fd, info.st_uid, info.st_gid)
        os.chmod(temporary, stat.S_IMODE(info.st_mode))  # after chown, which clears set-id bits
    except BaseException:
        os.close(fd)
        _remove(temporary)
        raise
    return real, temporary, fd


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def write_atomic(path: str, text: str) -> None:
    """Replace ``path``'s contents with ``text``: temporary file beside it, fsync, rename (mode, BOM, UTF-16 kept).

    A failure at any point leaves the original file as it was and removes the temporary file.
    """
    real, temporary, fd = _stage(path, text)
    try:
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, real)
    except BaseException:
        _remove(temporary)
        raise


class _Interrupted(BaseException):
    """A termination signal arrived while an :class:`AtomicWriter` was open."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class AtomicWriter:
    """Replaces many files, each atomically, syncing the disk once per batch instead of once per file.

    :meth:`stage` writes a file's new text to a temporary file beside it; :meth:`commit` (every ``batch`` files, and
    on leaving a ``with`` block) makes all staged data durable with one ``sync``, then renames each temporary file
    over its target and calls ``done(path, None)``, or ``done(path, reason)`` when that rename fails. A target is
    untouched until its own rename; an exception in the ``with`` block removes the temporary files not yet renamed.
    ``force`` writes read-only files too. Before the first stage in a directory, the temporary files left there by a
    killed run are removed.

    In the main thread, the ``with`` block catches SIGTERM, SIGINT and SIGHUP (those not ignored): one that arrives
    while a file is staged or renamed waits for that step, then the temporary files not yet renamed are removed, the
    previous handlers are restored and the signal is raised again, to be handled (or kill) as it would have been.
    """

    def __init__(self, done: Callable[[str, str | None], None], batch: int = 256, force: bool = False) -> None:
        self.done = done
        self.batch = batch
        self.force = force
        self.pending: list[tuple[str, str, str, int]] = []
        self._swept: set[str] = set()
        self._previous: dict[int, Any] = {}
        self._depth = 0  # > 0: inside a step a signal must not cut
        self._signal: int | None = None

    def __enter__(self) -> AtomicWriter:
        if threading.current_thread() is threading.main_thread():
            for signum in _SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> bool:
        self._depth += 1  # a signal now only waits for the clean-up
        try:
            if kind is None:
                self.commit()
            else:
                self.abort()
        finally:
            self._depth -= 1
            for caught, handler in self._previous.items():
                signal.signal(caught, handler)
            self._previous.clear()
        signum = error.signum if isinstance(error, _Interrupted) else self._signal
        if signum is None:
            return False
        self._signal = None
        signal.raise_signal(signum)  # the previous handler's turn: it may raise or end the process
        return isinstance(error, _Interrupted)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._depth:
            self._signal = signum
        else:
            raise _Interrupted(signum)

    @contextlib.contextmanager
    def _step(self) -> Iterator[None]:
        """A step no signal cuts: one arriving meanwhile is raised (as :class:`_Interrupted`) once it is done."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        signum = self._signal
        if not self._depth and signum is not None:
            self._signal = None
            raise _Interrupted(signum)

    def stage(self, path: str, text: str) -> None:
        """Raises ``OSError`` when the temporary file cannot be written or the file is refused (target untouched)."""
        with self._step():
            directory = os.path.dirname(os.path.realpath(path))
            if directory not in self._swept:
                self._swept.add(directory)
                _sweep(directory)
            real, temporary, fd = _stage(path, text, self.force)
            self.pending.append((path, real, temporary, fd))
        if len(self.pending) >= self.batch:
            self.commit()

    def commit(self) -> None:
        with self._step():
            self._commit()

    def _commit(self) -> None:
        pending, self.pending = self.pending, []
        if not pending:
            return
        try:
            if hasattr(os, "sync"):
                os.sync()  # Linux waits for the writes to complete
            else:  # pragma: no cover - Windows
                for *_, fd in pending:
                    os.fsync(fd)
        finally:
            for *_, fd in pending:
                os.close(fd)
        for index, (path, real, temporary, _) in enumerate(pending):
            try:
                os.replace(temporary, real)
            except OSError as exc:
                _remove(temporary)
                self.done(path, exc.strerror or str(exc))
            except BaseException:
                for _, _, left, _ in pending[index:]:
                    _remove(left)
                raise
            else:
                self.done(path, None)

    def abort(self) -> None:
        pending, self.pending = self.pending, []
        for _, _, temporary, fd in pending:
            with contextlib.suppress(OSError):
                os.close(fd)
            _remove(temporary)


def _sweep(directory: str) -> None:
    """Remove the temporary files a killed run left in ``directory``: ``.NAME.PID.N.desched-tmp`` whose PID is no
    running process (POSIX only: elsewhere a PID cannot be probed safely)."""
    if os.name != "posix":  # pragma: no cover - Windows
        return
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return
    for name in names:
        parts = name.split(".")
        stale = name.startswith(".") and name.endswith(_SUFFIX) and len(parts) >= 5 and parts[-3].isdigit()
        if stale and not _running(int(parts[-3])):
            _remove(os.path.join(directory, name))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _create_beside(path: str) -> tuple[int, str]:
    """A new, private file next to ``path`` (same directory, hence same file system for the rename)."""
    directory, base = os.path.split(path)
    for attempt in range(100):
        temporary = os.path.join(directory, f".{base}.{os.getpid()}.{attempt}{_SUFFIX}")
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), temporary
        except FileExistsError:
            continue
    return tempfile.mkstemp(prefix=f".{base}.", suffix=_SUFFIX, dir=directory or ".")


def _deployments(files: list[str]) -> Deployments:
    """The descheduler workloads and ConfigMap generators among ``files``: what names the release each policy runs
    on. Only files that mention a policy flag (``--policy-config-file``, ``desched run``'s ``--policy``) or a generator
    are parsed; unreadable ones are left to the run."""
    documents: list[tuple[str, Any]] = []
    for path in files:
        if path == "-" or is_template(path):
            continue
        try:
            text = read_text(path)
            if "-policy" in text or "configMapGenerator" in text:
                documents.extend((path, doc) for doc in load_all(text))
        except (OSError, SourceError, YamlError):
            continue
    return Deployments(documents)


class _Session:
    """One ``desched migrate`` run: where output and diagnostics go, and what has happened so far."""

    def __init__(self, mode: str, quiet: bool, single: bool, out: TextIO, err: TextIO) -> None:
        self.mode, self.quiet, self.single = mode, quiet, single
        self.out, self.err = out, err
        self.errors = 0
        self.changed = 0

    def fail(self, message: str) -> None:
        self.errors += 1
        self.err.write(f"desched: {message}\n")

    def note(self, line: str) -> None:
        if not self.quiet:
            self.err.write(line + "\n")

    def written(self, path: str, reason: str | None) -> None:
        """Called by the writer when a staged file is committed (``reason`` is None) or could not be."""
        if reason is not None:
            self.fail(f"{path}: cannot write: {reason}")
        elif not self.quiet:
            self.err.write(f"migrated {path}\n")

    def migrate(self, path: str, options: dict[str, Any]) -> tuple[str, Result] | None:
        """Read and migrate one file; None (after reporting why) when it cannot be read or migrated, or is a
        template: its template actions could not be kept safely through a rewrite."""
        if is_template(path):
            if not self.quiet:
                self.err.write(f"{path}: note: template not migrated (desched migrate cannot rewrite templates)\n")
            return None
        try:
            text = read_text(path)
        except SourceError as exc:
            self.fail(f"{path}:{exc.line}:{exc.column}: {exc.message}")
            return None
        except OSError as exc:
            self.fail(f"{path}: cannot read: {exc.strerror or exc}")
            return None
        try:
            result: Result = migrate_text(path, text, chart_version=chart_yaml_app_version(path), **options)
        except Exception as exc:  # a bug must not stop the other files; the file is left as it is
            if os.environ.get("DESCHED_DEBUG"):
                raise
            self.fail(f"{path}: internal error: {type(exc).__name__}: {exc} (set DESCHED_DEBUG=1 for details)")
            return None
        for problem in result.errors:
            self.fail(f"{path}:{problem.line}:{problem.column}: {problem.message}")
        if result.errors:
            return None
        if not self.quiet:
            for note, line in result.notes:
                self.err.write(f"{path}:{line}: note: {note.message}\n")
        self.changed += result.changed
        return text, result

    def emit(self, path: str, text: str, result: Result, writer: AtomicWriter) -> None:
        """What the mode does with one migrated file (see the module contract)."""
        if self.mode == "in-place" and path != "-":
            if result.changed:
                try:
                    writer.stage(path, result.text)
                except OSError as exc:
                    self.fail(f"{path}: cannot write: {exc.strerror or exc}")
        elif self.mode == "check":
            if result.changed:
                self.out.write(f"would migrate {path}\n")
        elif self.mode == "diff":
            if result.changed:
                self.out.writelines(_diff(path, text, result.text))
        elif self.single:
            self.out.write(result.text)
        elif result.changed:
            self.out.write(f"# ==> {path} <==\n{_ended(result.text)}")


def run(
    paths: Sequence[str],
    *,
    mode: str = "print",
    target: int | None = None,
    upstream_compatible: bool = False,
    merge_profiles: bool = False,
    quiet: bool = False,
    force: bool = False,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Migrate ``paths`` (files, directories walked for ``*.yaml``/``*.yml``, ``-`` for stdin; templates are
    skipped with a note, and so are special files met in a directory; ``force`` writes read-only files); returns
    the exit code."""
    single = len(paths) == 1 and (paths[0] == "-" or not os.path.isdir(paths[0]))
    session = _Session(mode, quiet, single, stdout or sys.stdout, stderr or sys.stderr)
    files = list(
        iter_paths(
            paths,
            [],
            lambda path, reason: session.fail(f"{path}: cannot read: {reason}"),
            lambda path, reason: session.note(f"{path}: note: skipped: {reason}"),
        )
    )
    session.single = single and len(files) == 1
    options: dict[str, Any] = {
        "target": target,
        "upstream_compatible": upstream_compatible,
        "merge_profiles": merge_profiles,
        "deployments": _deployments(files) if target is None else None,
    }
    with AtomicWriter(session.written, force=force) as writer:
        for path in files:
            migrated = session.migrate(path, options)
            if migrated is not None:
                session.emit(path, *migrated, writer)
    session.out.flush()
    if session.errors:
        return EXIT_ERROR
    return EXIT_CHANGES if session.changed and mode in ("check", "diff") else EXIT_OK


def _diff(path: str, old: str, new: str) -> list[str]:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), path, path)
    return [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


class MigrateCommand:
    """``desched migrate``."""

    help = "rewrite descheduler/v1alpha1 policies as v1alpha2, keeping everything else as written"
    description = (
        "Convert every descheduler/v1alpha1 DeschedulerPolicy (raw, in a ConfigMap, in Helm values) to "
        "descheduler/v1alpha2 with upstream v0.30's algorithm, keeping comments, key order and quoting of "
        "everything else. What upstream refuses is an error and the file is left untouched. Prints the result "
        "by default (several inputs: each changed file after a '# ==> FILE <==' line). Conversion notes go to "
        "stderr as FILE:LINE: note: ... and into the file as '# desched migrate:' comments. See "
        "docs/migration.md."
    )
    epilog = (
        "Exit codes: 0 nothing to migrate, or migrated; 1 --check or --diff found files to migrate; 2 a file "
        "could not be read or migrated (it is left untouched; the other files are still processed)."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); - reads stdin")
        # The last of --in-place/--check/--diff wins, so that a pre-commit hook's `args: [--in-place]` overrides its
        # `entry: desched migrate --check`.
        parser.set_defaults(mode="print")
        parser.add_argument(
            "-i",
            "--in-place",
            dest="mode",
            action="store_const",
            const="in-place",
            help="rewrite changed files (atomically)",
        )
        parser.add_argument(
            "--check",
            dest="mode",
            action="store_const",
            const="check",
            help="list files that would change; exit 1 if any",
        )
        parser.add_argument(
            "--diff",
            dest="mode",
            action="store_const",
            const="diff",
            help="print a unified diff; exit 1 if anything would change (the last of --in-place/--check/--diff wins)",
        )
        parser.add_argument(
            "--target-version",
            metavar="v0.NN",
            help="descheduler release the output is for (default: Helm values' image.tag or Chart.yaml appVersion, "
            "else newest); v0.34+ writes DefaultEvictor podProtections instead of the deprecated booleans",
        )
        parser.add_argument(
            "--upstream-compatible",
            action="store_true",
            help="reproduce upstream's conversion exactly, including what it loses (includedTaints, ...)",
        )
        parser.add_argument(
            "--merge-profiles", action="store_true", help="fold the one-profile-per-strategy output into one profile"
        )
        parser.add_argument("-q", "--quiet", action="store_true", help="no notes or 'migrated FILE' lines on stderr")
        parser.add_argument("--force", action="store_true", help="with --in-place, rewrite read-only files too")

    def run(self, args: argparse.Namespace) -> int:
        return run(
            args.paths or ["."],
            mode=args.mode,
            target=versions.from_option(args.target_version),
            upstream_compatible=args.upstream_compatible,
            merge_profiles=args.merge_profiles,
            quiet=args.quiet,
            force=args.force,
        )


MIGRATE = MigrateCommand()

"""Run a command of the unpacked image the way deploy/ runs its containers, without a container runtime.

Contract: :func:`run` starts ``ENTRYPOINT + arguments`` (or another command) from the image's root filesystem in
new mount and PID namespaces (the command is PID 1, as in a pod) with the root filesystem read-only, ``/proc`` and
a ``/dev`` holding only null, zero, full, random and urandom, the given volumes bound read-only (their mount points
are made in the unpacked tree first, symbolic links resolved within it), as the image's numeric user (65532) with
no supplementary groups, every capability dropped (bounding, permitted, effective, inheritable and ambient sets
empty) and ``no_new_privs`` set, with the image's environment plus the given variables; the network is the host's.
SIGTERM and SIGINT sent to the caller are passed on to the command; the return value is the command's exit status
(128 + the signal if a signal ended it). It needs root on Linux. This is what ``readOnlyRootFilesystem: true``,
``runAsUser: 65532`` and ``capabilities: {drop: [ALL]}`` give a pod; a seccomp profile is not applied.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from tests.image.build import Image

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
DEVICES = ("null", "zero", "full", "random", "urandom")
LIBC = ctypes.CDLL(None, use_errno=True)


class SandboxError(Exception):
    """The sandbox could not be set up (not root, not Linux, a volume missing); the message says why."""


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def _mount(source: str | None, target: Path, fstype: str | None, flags: int, data: str | None = None) -> None:
    encoded = [None if value is None else value.encode() for value in (source, str(target), fstype, data)]
    _check(LIBC.mount(encoded[0], encoded[1], encoded[2], ctypes.c_ulong(flags), encoded[3]), f"mount {target}")


def _bind_read_only(source: Path, target: Path) -> None:
    _mount(str(source), target, None, MS_BIND | MS_REC)
    _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def inside(rootfs: Path, target: str) -> Path:
    """Where ``target`` (an absolute path in the image) is under ``rootfs``, its symbolic links resolved within the
    image (``/var/run`` is a link to ``/run`` in Debian), never to a path outside ``rootfs``."""
    resolved = rootfs
    pending = [part for part in target.split("/") if part not in ("", ".")]
    hops = 0
    while pending:
        part = pending.pop(0)
        if part == "..":
            resolved = resolved.parent if resolved != rootfs else rootfs
            continue
        candidate = resolved / part
        if candidate.is_symlink():
            hops += 1
            if hops > 40:
                raise SandboxError(f"{target}: too many symbolic links in the image")
            link = os.readlink(candidate)
            resolved = rootfs if link.startswith("/") else resolved
            pending = [piece for piece in link.split("/") if piece not in ("", ".")] + pending
        else:
            resolved = candidate
    return resolved


def _user(image: Image) -> tuple[int, int]:
    """The image's USER, which must be numeric (``uid`` or ``uid:gid``) as deploy/'s runAsUser is."""
    user = image.config.get("User") or "0"
    uid, _, gid = user.partition(":")
    if not uid.isdigit() or not (gid or uid).isdigit():
        raise SandboxError(f"the image's USER {user!r} is not numeric")
    return int(uid), int(gid or uid)


def _environment(image: Image, extra: dict[str, str]) -> dict[str, str]:
    environment = dict(entry.split("=", 1) for entry in image.config.get("Env") or [])
    environment.setdefault("HOME", "/")
    environment.update(extra)
    return environment


def _prepare(image: Image, volumes: Sequence[tuple[Path, str]], workdir: str) -> None:
    """In the child, in its new namespaces, as root: the mounts, then the read-only root and the chroot."""
    rootfs = image.rootfs
    _mount(None, Path("/"), None, MS_REC | MS_PRIVATE)
    _mount(str(rootfs), rootfs, None, MS_BIND | MS_REC)
    _mount("proc", rootfs / "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _mount("tmpfs", rootfs / "dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k")
    for device in DEVICES:
        (rootfs / "dev" / device).touch()
        _mount(f"/dev/{device}", rootfs / "dev" / device, None, MS_BIND)
    for source, target in volumes:
        _bind_read_only(source, inside(rootfs, target))
    _mount(None, rootfs, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    os.chroot(rootfs)
    os.chdir(workdir)


def _drop_privileges(uid: int, gid: int, last: int) -> None:
    for capability in range(last + 1):
        _check(LIBC.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0), f"dropping capability {capability}")
    _check(LIBC.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clearing the ambient capabilities")
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)  # from root to another user: the permitted and effective sets are cleared
    _check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "setting no_new_privs")


def _clear_inheritable() -> None:
    """Empty the inheritable set (capset with version 3, this process, all sets read first and kept but inheritable)."""

    class Header(ctypes.Structure):
        _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))

    class Data(ctypes.Structure):
        _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32))

    header = Header(0x20080522, 0)
    data = (Data * 2)()
    _check(LIBC.capget(ctypes.byref(header), data), "capget")
    for half in data:
        half.inheritable = 0
    _check(LIBC.capset(ctypes.byref(header), data), "capset")


def run(
    image: Image,
    arguments: Sequence[str],
    volumes: Sequence[tuple[Path, str]] = (),
    environment: dict[str, str] | None = None,
    entrypoint: Sequence[str] | None = None,
    workdir: str | None = None,
) -> int:
    """Run the image's entrypoint (or ``entrypoint``) with ``arguments`` in its working directory (or ``workdir``),
    see the module contract; return its exit status."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        raise SandboxError("running the image needs root on Linux (namespaces, mounts, chroot)")
    for source, target in volumes:
        if not source.is_dir() or not target.startswith("/"):
            raise SandboxError(f"volume {source}:{target}: the source must be a directory, the target absolute")
        inside(image.rootfs, target).mkdir(parents=True, exist_ok=True)
    command = [*(image.config.get("Entrypoint") or [] if entrypoint is None else entrypoint), *arguments]
    if not command:
        raise SandboxError("nothing to run: the image has no ENTRYPOINT and no arguments were given")
    uid, gid = _user(image)
    env = _environment(image, environment or {})
    last_capability = int(Path("/proc/sys/kernel/cap_last_cap").read_text(encoding="ascii"))  # before the chroot
    _check(LIBC.unshare(CLONE_NEWNS | CLONE_NEWPID), "unshare")
    child = os.fork()
    if child == 0:
        try:
            _prepare(image, volumes, workdir or image.config.get("WorkingDir") or "/")
            _clear_inheritable()
            _drop_privileges(uid, gid, last_capability)
            os.execvpe(command[0], command, env)
        except OSError as error:
            print(f"image run: {error}", file=sys.stderr, flush=True)
        os._exit(127)

    def forward(number: int, frame: FrameType | None) -> None:
        os.kill(child, number)

    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, forward)
    _, status = os.waitpid(child, 0)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)

"""Start and stop etcd + kube-apiserver + kube-controller-manager on 127.0.0.1.

Contract:
* :func:`up` starts the three processes with free ports, token authentication and RBAC, writes a kubeconfig and a
  ``state.json`` into a fresh temporary directory, and returns once the apiserver answers ``/readyz`` and the controller
  manager ``/healthz`` (about 5 s). If any step fails, the processes it started are stopped and :class:`StartError` says
  which one failed, with the end of its log.
* :meth:`ControlPlane.stop` stops exactly the processes it started, by PID, checking that each PID still runs a program
  whose command line names this control plane's directory (so a reused PID is never signalled).
* With ``tied_to_parent=True`` the processes get ``PR_SET_PDEATHSIG=SIGKILL``: if the process that started them dies,
  even by SIGKILL, the kernel kills them too. The test fixture uses this; ``scripts/control-plane up`` does not (the
  control plane must outlive the command). :func:`sweep` stops leftovers of owners that are gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.kcp.api import Api
from tests.kcp.install import Installation, cache_root

DIRECTORY_PREFIX = "desched-kcp-"
# The controllers tests rely on: PDB status arithmetic and namespace finalization. The garbage collector is left out on
# purpose: snapshot pods keep ownerReferences to controllers that are not in the snapshot, and it would delete them.
DEFAULT_CONTROLLERS = ("disruption", "namespace")
USERS = {"admin": "system:masters", "unprivileged": "", "executor": ""}  # executor: for RBAC-bound runs
_PR_SET_PDEATHSIG = 1


class StartError(Exception):
    """The control plane did not come up; the message names the process and quotes its log."""


@dataclass
class Process:
    name: str
    pid: int
    log: str


@dataclass
class ControlPlane:
    """A running control plane, as recorded in ``<directory>/state.json``."""

    directory: str
    server: str
    ca_file: str
    kubeconfig: str
    version: str
    tokens: dict[str, str]
    processes: list[Process] = field(default_factory=list)
    owner: int | None = None

    @property
    def audit_log(self) -> str:
        """The apiserver's audit log (JSON lines, Metadata level, every request)."""
        return str(Path(self.directory) / "audit.log")

    def audit_events(self, user: str | None = None) -> list[dict[str, Any]]:
        """The audit events written so far (``ResponseComplete`` stage), optionally only those of ``user``."""
        try:
            lines = Path(self.audit_log).read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        events = [json.loads(line) for line in lines if line.strip()]
        return [
            event
            for event in events
            if event.get("stage") == "ResponseComplete" and (user is None or event["user"]["username"] == user)
        ]

    @classmethod
    def load(cls, directory: str | Path) -> ControlPlane:
        data = json.loads((Path(directory) / "state.json").read_text(encoding="utf-8"))
        data["processes"] = [Process(**process) for process in data["processes"]]
        return cls(**data)

    def save(self) -> None:
        path = Path(self.directory) / "state.json"
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    def api(self, user: str = "admin", **options: Any) -> Api:
        return Api(self.server, self.tokens[user], self.ca_file, **options)

    def running(self) -> dict[str, bool]:
        """For each process, whether it still runs (and is still ours)."""
        return {process.name: _ours(process.pid, self.directory) for process in self.processes}

    def stop(self, timeout: float = 10.0, remove: bool = True) -> None:
        """SIGTERM each process (controller manager first, etcd last), SIGKILL it after ``timeout``; then forget it."""
        for process in reversed(self.processes):
            _terminate(process.pid, self.directory, timeout)
        if remove:
            shutil.rmtree(self.directory, ignore_errors=True)


def up(
    installation: Installation,
    *,
    controllers: Sequence[str] = DEFAULT_CONTROLLERS,
    tied_to_parent: bool = False,
    timeout: float = 60.0,
) -> ControlPlane:
    """Start a control plane in a new temporary directory (see the module contract)."""
    directory = Path(tempfile.mkdtemp(prefix=DIRECTORY_PREFIX))
    tokens = {user: secrets.token_hex(16) for user in USERS}
    plane = ControlPlane(
        directory=str(directory),
        server="",
        ca_file=str(directory / "certs" / "apiserver.crt"),
        kubeconfig=str(directory / "kubeconfig"),
        version=installation.version,
        tokens=tokens,
        owner=os.getpid() if tied_to_parent else None,
    )
    try:
        _start(plane, installation, controllers, tied_to_parent, time.monotonic() + timeout)
    except BaseException:
        plane.stop()
        raise
    return plane


def _start(
    plane: ControlPlane, installation: Installation, controllers: Sequence[str], tied: bool, deadline: float
) -> None:
    directory = Path(plane.directory)
    pki = directory / "pki"
    pki.mkdir()
    _write_service_account_keys(pki)
    (pki / "tokens.csv").write_text(
        "".join(f"{plane.tokens[user]},{user},{user}-uid,{group}\n" for user, group in USERS.items()), encoding="utf-8"
    )
    etcd_client, etcd_peer, secure, kcm_port = free_ports(4)
    plane.server = f"https://127.0.0.1:{secure}"

    def spawn(name: str, command: list[str]) -> Process:
        process = _spawn(name, command, directory, tied)
        plane.processes.append(process)
        plane.save()
        return process

    etcd = spawn(
        "etcd",
        [
            str(installation.etcd),
            "--name",
            "kcp",
            "--data-dir",
            str(directory / "etcd-data"),
            "--listen-client-urls",
            f"http://127.0.0.1:{etcd_client}",
            "--advertise-client-urls",
            f"http://127.0.0.1:{etcd_client}",
            "--listen-peer-urls",
            f"http://127.0.0.1:{etcd_peer}",
            "--initial-advertise-peer-urls",
            f"http://127.0.0.1:{etcd_peer}",
            "--initial-cluster",
            f"kcp=http://127.0.0.1:{etcd_peer}",
            "--unsafe-no-fsync",
        ],
    )
    _wait(etcd, plane, deadline, lambda: _get(f"http://127.0.0.1:{etcd_client}/health") == 200)

    apiserver = spawn(
        "kube-apiserver",
        [
            str(installation.binary("kube-apiserver")),
            f"--etcd-servers=http://127.0.0.1:{etcd_client}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={secure}",
            "--insecure-port=0",
            f"--cert-dir={directory / 'certs'}",
            f"--token-auth-file={pki / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--disable-admission-plugins=ServiceAccount",
            "--allow-privileged=true",
            "--profiling=false",
            f"--audit-policy-file={_write_audit_policy(pki)}",
            f"--audit-log-path={plane.audit_log}",
            "--audit-log-format=json",
        ],
    )
    admin = {"Authorization": f"Bearer {plane.tokens['admin']}"}
    _wait(apiserver, plane, deadline, lambda: _get(f"{plane.server}/readyz", admin, plane.ca_file) == 200)
    _write_kubeconfig(plane)
    plane.save()

    manager = spawn(
        "kube-controller-manager",
        [
            str(installation.binary("kube-controller-manager")),
            f"--kubeconfig={plane.kubeconfig}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={kcm_port}",
            "--port=0",
            f"--cert-dir={directory / 'kcm-certs'}",
            f"--controllers={','.join(controllers)}",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={plane.ca_file}",
        ],
    )
    _wait(manager, plane, deadline, lambda: _get(f"https://127.0.0.1:{kcm_port}/healthz") == 200)


def _write_audit_policy(pki: Path) -> Path:
    """Every request at Metadata level (who did what to which object), so tests can prove what a client sent."""
    policy = pki / "audit-policy.json"
    policy.write_text(
        json.dumps(
            {
                "apiVersion": "audit.k8s.io/v1",
                "kind": "Policy",
                "omitStages": ["RequestReceived"],
                "rules": [{"level": "Metadata"}],
            }
        ),
        encoding="utf-8",
    )
    return policy


def _write_service_account_keys(pki: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    (pki / "sa.key").write_bytes(private)
    (pki / "sa.pub").write_bytes(public)


def _write_kubeconfig(plane: ControlPlane) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kcp", "cluster": {"server": plane.server, "certificate-authority": plane.ca_file}}],
        "users": [{"name": user, "user": {"token": token}} for user, token in plane.tokens.items()],
        "contexts": [{"name": user, "context": {"cluster": "kcp", "user": user}} for user in plane.tokens],
        "current-context": "admin",
    }
    Path(plane.kubeconfig).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports that were free a moment ago (bound together, then released)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _spawn(name: str, command: list[str], directory: Path, tied: bool) -> Process:
    log = directory / f"{name}.log"
    with open(log, "wb") as sink:
        popen = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if tied else None,
        )
    _children[popen.pid] = popen
    return Process(name, popen.pid, str(log))


# Popen objects of the processes this Python process started, so stopping them also reaps them (no zombies).
_children: dict[int, subprocess.Popen[bytes]] = {}


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")


def _wait(process: Process, plane: ControlPlane, deadline: float, ready: Callable[[], bool]) -> None:
    while True:
        if not _ours(process.pid, plane.directory):
            raise StartError(f"{process.name} exited while starting:\n{_tail(process.log)}")
        if ready():
            return
        if time.monotonic() > deadline:
            raise StartError(f"{process.name} was not ready in time:\n{_tail(process.log)}")
        time.sleep(0.05)


def _get(url: str, headers: dict[str, str] | None = None, ca_file: str | None = None) -> int:
    context: ssl.SSLContext | None = None
    if url.startswith("https:"):
        if ca_file is None or not Path(ca_file).is_file():
            context = ssl._create_unverified_context()  # the controller manager's self-signed health endpoint
        else:
            context = ssl.create_default_context(cafile=ca_file)
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=2, context=context) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, ssl.SSLError):
        return 0


def _tail(log: str, lines: int = 15) -> str:
    try:
        text = Path(log).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.strip().splitlines()[-lines:])


def _ours(pid: int, directory: str) -> bool:
    """Whether ``pid`` runs, is not a zombie, and its command line names ``directory``."""
    popen = _children.get(pid)
    if popen is not None:  # our own child: its PID cannot be reused before we reap it
        return popen.poll() is None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z" and directory.encode() in cmdline


def _terminate(pid: int, directory: str, timeout: float) -> None:
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        if not _ours(pid, directory):
            break
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        end = time.monotonic() + wait
        while _ours(pid, directory) and time.monotonic() < end:
            time.sleep(0.05)
    popen = _children.pop(pid, None)
    if popen is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=1)


def planes() -> list[ControlPlane]:
    """Every control plane with a state file in the temporary directory."""
    found = []
    for state in sorted(Path(tempfile.gettempdir()).glob(f"{DIRECTORY_PREFIX}*/state.json")):
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            found.append(ControlPlane.load(state.parent))
    return found


def sweep() -> list[ControlPlane]:
    """Stop and remove control planes whose owning process is gone; return them."""
    stale = [plane for plane in planes() if plane.owner is not None and not alive(plane.owner)]
    for plane in stale:
        plane.stop()
    return stale


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def current_pointer() -> Path:
    """The file naming the control plane ``scripts/control-plane up`` started last."""
    return cache_root() / "current"

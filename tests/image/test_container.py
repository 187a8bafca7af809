"""The image, built from the Dockerfile by scripts/image and run as deploy/ runs it.

Every command runs through ``scripts/image run``: PID 1 of its own namespaces, read-only root filesystem, uid and gid
65532, no capabilities, no_new_privs, the volumes read-only (tests/image/sandbox.py). The first run builds the image
(about 5 minutes on a 2-core machine, then cached by its inputs); the build tools are installed with
``scripts/image install``'s installer, and the tests are skipped with its reason when that or a prerequisite
(the Debian mirror, the wheels) fails. A failing image build fails them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

from tests.cluster.test_executor_live import _evicted, _policy, executor_role, loaded  # noqa: F401 (fixtures)
from tests.image import build
from tests.image.build import Image
from tests.kcp.controlplane import ControlPlane, free_ports
from tests.webhook.server import Running, policy_review

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = [sys.executable, str(ROOT / "scripts" / "image"), "run"]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
INSTALLERS = ("pip", "setuptools", "wheel", "pkg_resources", "_distutils_hack")


@pytest.fixture(scope="session")
def image() -> Image:
    if os.geteuid() != 0:
        pytest.skip("building and running the image needs root (apt-get, mmdebstrap, namespaces and mounts)")
    try:
        build.install()
        return build.build()
    except build.InstallError as error:
        pytest.skip(f"the image cannot be built here: {str(error).splitlines()[0]}")


def _run(
    *arguments: str, volumes: tuple[str, ...] = (), entrypoint: str | None = None, env: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``scripts/image run`` of ``arguments`` with the volumes (``DIR:PATH``) and variables (``NAME=VALUE``)."""
    options = [option for volume in volumes for option in ("--volume", volume)]
    options += [option for variable in env for option in ("--env", variable)]
    options += ["--entrypoint", entrypoint] if entrypoint else []
    return subprocess.run([*SCRIPT, *options, "--", *arguments], capture_output=True, text=True, timeout=300)


def test_the_labels_say_what_the_image_is(image: Image) -> None:
    labels = image.labels
    assert labels["org.opencontainers.image.title"] == PROJECT["name"]
    assert labels["org.opencontainers.image.description"] == PROJECT["description"]
    assert labels["org.opencontainers.image.licenses"] == PROJECT["license"]
    assert labels["org.opencontainers.image.version"] == PROJECT["version"]
    assert labels["org.opencontainers.image.revision"] == build.revision()
    assert labels["org.opencontainers.image.source"].startswith("https://github.com/")
    assert image.config["User"] == "65532:65532"


def test_no_installer_is_in_the_image(image: Image) -> None:
    """Neither the venv nor the base holds pip, setuptools or wheel: no file, and nothing the interpreter imports."""
    found = [
        str(path.relative_to(image.rootfs))
        for path in image.rootfs.rglob("*")
        if path.name in INSTALLERS or (path.name.split("-")[0] in INSTALLERS and path.name.endswith(".dist-info"))
    ]
    assert not found
    assert not [path.name for path in (image.rootfs / "opt" / "desched" / "bin").iterdir() if "pip" in path.name]
    probe = f"import importlib.util as u; print(sorted(n for n in {INSTALLERS!r} if u.find_spec(n)))"
    done = _run("-c", probe, entrypoint="python")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    done = _run("-c", "import yaml, kubernetes, fastapi, uvicorn, cryptography", entrypoint="python")
    assert done.returncode == 0, done.stderr  # the probe's interpreter is the venv's, which has desched's imports


def test_it_runs_unprivileged_on_a_read_only_root(image: Image) -> None:
    probe = """
import os
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print(os.getpid(), status["Uid"].split()[0], status["Gid"].split()[0], status["NoNewPrivs"].strip())
print(*(status[key].strip() for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")))
for path in ("/opt/desched/probe", "/tmp/probe", "/probe"):
    try:
        open(path, "w")
    except OSError as error:
        print(path, error.errno)
"""
    done = _run("-c", probe, entrypoint="python")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "1 65532 65532 1"
    assert set(lines[1].split()) == {"0000000000000000"}
    assert lines[2:] == [f"{path} 30" for path in ("/opt/desched/probe", "/tmp/probe", "/probe")]  # EROFS


def test_lint_prints_in_the_image_what_it_prints_on_the_host(image: Image) -> None:
    arguments = ("lint", "--no-config", "examples")
    host = subprocess.run([_host_desched(), *arguments], cwd=ROOT, capture_output=True, text=True)
    inside = _run(*arguments, volumes=(f"{ROOT / 'examples'}:/examples",))
    assert "DS" in host.stdout  # the examples have findings: the comparison compares something
    assert (inside.returncode, inside.stdout) == (host.returncode, host.stdout), inside.stderr


@pytest.fixture
def webhook(image: Image, tmp_path: Path) -> Iterator[Running]:
    """``desched webhook`` in the image with deploy/'s arguments, serving certificates from ``desched certs``; the
    key mode 0440 and group 65532 as the pod's fsGroup makes it."""
    certs = tmp_path / "certs"
    made = subprocess.run(
        [_host_desched(), "certs", "--out", str(certs), "--dns-name", "localhost", "--ip", "127.0.0.1"],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    certs.chmod(0o755)  # desched certs makes it 0700, as a Secret volume is not
    os.chown(certs / "tls.key", 0, 65532)
    (certs / "tls.key").chmod(0o440)
    port, metrics_port = free_ports(2)
    log = tmp_path / "webhook.log"
    command = [*SCRIPT, "--volume", f"{certs}:/certs", "--", "webhook", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--tls-cert", "/certs/tls.crt", "--tls-key", "/certs/tls.key", "--metrics-port", str(metrics_port)]
    with open(log, "wb") as sink:
        process = subprocess.Popen([*command, "--mode", "enforce"], stdout=sink, stderr=subprocess.STDOUT)
    running = Running(process, port, metrics_port, certs / "ca.crt", log)
    try:
        end = time.monotonic() + 60
        while not _ready(metrics_port):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < end, log.read_text()
            time.sleep(0.1)
        yield running
    finally:
        if process.poll() is None:
            running.stop()


def _volume(directory: Path) -> Path:
    """A new directory that uid 65532 can read once it is bound into the image."""
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    return directory


def _host_desched() -> str:
    return str(Path(sys.executable).parent / "desched")


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def test_the_webhook_answers_admission_reviews_over_verified_tls_and_stops_on_sigterm(webhook: Running) -> None:
    _, allowed = webhook.post(policy_review(1, 2000))
    assert allowed["uid"] == "uid-1" and allowed["allowed"] is True
    broken = json.loads(policy_review(2, 2000))
    text = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n"
    broken["request"]["object"]["data"] = {"policy.yaml": text + "    deschedule:\n      enabled: [NoSuchPlugin]\n"}
    _, denied = webhook.post(json.dumps(broken).encode())
    assert denied["uid"] == "uid-2" and denied["allowed"] is False
    webhook.process.send_signal(signal.SIGTERM)
    assert webhook.process.wait(timeout=30) == 0, webhook.log.read_text()


@pytest.mark.cluster
def test_run_dry_run_in_the_image_decides_what_it_decides_on_the_host(
    image: Image,
    control_plane: ControlPlane,
    loaded: tuple[str, str],  # noqa: F811
    executor_role: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """As deploy/executor runs it: the policy from a volume, the API through the pod's service account (token, CA
    and namespace at the standard path, the service's address in the environment)."""
    namespace, run = loaded
    policy, account = _volume(tmp_path / "policy"), _volume(tmp_path / "serviceaccount")
    (policy / "policy.yaml").write_text(_policy(namespace, run), encoding="utf-8")
    (account / "token").write_text(control_plane.tokens["executor"], encoding="utf-8")
    (account / "namespace").write_text("kube-system", encoding="utf-8")
    (account / "ca.crt").write_bytes(Path(control_plane.ca_file).read_bytes())
    for path in (*account.iterdir(), policy / "policy.yaml"):
        path.chmod(0o644)
    address = urllib.parse.urlsplit(control_plane.server)
    arguments = ("run", "--dry-run", "--format", "json", "--policy")
    inside = _run(
        *arguments,
        "/policy/policy.yaml",
        volumes=(f"{policy}:/policy", f"{account}:/var/run/secrets/kubernetes.io/serviceaccount"),
        env=(f"KUBERNETES_SERVICE_HOST={address.hostname}", f"KUBERNETES_SERVICE_PORT={address.port}"),
    )
    assert inside.returncode == 0, inside.stderr
    kubeconfig = ("--kubeconfig", control_plane.kubeconfig, "--context", "executor")
    host = subprocess.run(
        [_host_desched(), *arguments, str(policy / "policy.yaml"), *kubeconfig], capture_output=True, text=True
    )
    assert host.returncode == 0, host.stderr
    done = json.loads(inside.stdout)
    assert done["summary"]["dryRun"] is True
    assert {pod for pod, _, _ in _evicted(done)} >= {"tainted-1", "crash-1", "failed-1"}
    assert _evicted(done) == _evicted(json.loads(host.stdout))

"""``desched certs``: certificate properties, a real TLS handshake, file modes, atomic rewrites, the Secret manifest,
usage errors, and --apply/--patch-webhook against the test control plane."""

from __future__ import annotations

import argparse
import base64
import contextlib
import datetime
import errno
import ipaddress
import os
import secrets
import socket
import ssl
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from desched.errors import UsageError
from desched.runtime.kube import KubeClient
from desched.webhook.certs import BACKDATE, CA_DAYS, CERTS, generate
from tests.kcp.api import Api, ApiError
from tests.kcp.controlplane import ControlPlane

DNS = "desched-webhook.desched.svc"
FILES = ("ca.crt", "tls.key", "tls.crt")
Capture = pytest.CaptureFixture[str]


def certs(capsys: Capture, out: Path, *flags: str) -> list[str]:
    """Run the command with ``--out out`` and ``flags``; the lines it printed (it must succeed)."""
    parser = argparse.ArgumentParser()
    CERTS.add_arguments(parser)
    assert CERTS.run(parser.parse_args(["--out", str(out), *flags])) == 0
    return capsys.readouterr().out.splitlines()


def failure(out: Path, *flags: str) -> str:
    """The UsageError message of a run that must fail."""
    parser = argparse.ArgumentParser()
    CERTS.add_arguments(parser)
    with pytest.raises(UsageError) as raised:
        CERTS.run(parser.parse_args(["--out", str(out), *flags]))
    message = str(raised.value)
    assert "\n" not in message
    return message


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def handshake(directory: Path, server_hostname: str, cafile: Path | None = None) -> None:
    """Serve ``directory``'s tls.crt/tls.key on a loopback socket and connect trusting only ``cafile`` (default: its
    ca.crt), checking ``server_hostname``; raises ``ssl.SSLCertVerificationError`` when verification fails."""
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(directory / "tls.crt", directory / "tls.key")
    client = ssl.create_default_context(cafile=cafile or directory / "ca.crt")  # no system roots with cafile
    assert client.check_hostname and client.verify_mode == ssl.CERT_REQUIRED
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(10)

        def serve() -> None:
            with contextlib.suppress(OSError), listener.accept()[0] as connection:
                connection.settimeout(10)
                with server.wrap_socket(connection, server_side=True) as tls:
                    tls.sendall(b"ok")

        thread = threading.Thread(target=serve)
        thread.start()
        try:
            with (
                socket.create_connection(listener.getsockname(), timeout=10) as raw,
                client.wrap_socket(raw, server_hostname=server_hostname) as tls,
            ):
                assert tls.recv(2) == b"ok"
        finally:
            thread.join(10)


def test_writes_the_pem_files_with_private_key_modes(capsys: Capture, tmp_path: Path) -> None:
    out = tmp_path / "new" / "certs"
    lines = certs(capsys, out, "--dns-name", DNS)
    assert lines == [f"wrote {out / name}" for name in FILES]
    assert sorted(os.listdir(out)) == sorted(FILES)
    assert mode(out) == 0o700
    assert (mode(out / "tls.key"), mode(out / "tls.crt"), mode(out / "ca.crt")) == (0o600, 0o644, 0o644)
    assert (out / "tls.key").read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----\n")
    for name in ("ca.crt", "tls.crt"):
        assert (out / name).read_bytes().startswith(b"-----BEGIN CERTIFICATE-----\n")


def test_serving_certificate_properties(capsys: Capture, tmp_path: Path) -> None:
    before = datetime.datetime.now(datetime.timezone.utc)
    certs(
        capsys,
        tmp_path,
        "--dns-name",
        DNS,
        "--dns-name",
        "localhost",
        "--dns-name",
        DNS,
        "--ip",
        "127.0.0.1",
        "--ip",
        "::1",
        "--days",
        "30",
    )
    ca, cert = load(tmp_path / "ca.crt"), load(tmp_path / "tls.crt")
    extensions = cert.extensions
    names = extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == [DNS, "localhost"]  # in order, duplicates dropped
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == DNS
    usage = extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical and usage.value.digital_signature and usage.value.key_encipherment
    assert not (usage.value.key_cert_sign or usage.value.crl_sign or usage.value.content_commitment)
    assert list(extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    key = cert.public_key()
    assert isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == "secp256r1"
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(days=30)
    assert before - BACKDATE - datetime.timedelta(seconds=5) <= cert.not_valid_before_utc <= before

    constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca
    ca_usage = ca.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ca_usage.key_cert_sign and ca_usage.crl_sign and not ca_usage.digital_signature
    assert ca.not_valid_before_utc == cert.not_valid_before_utc
    assert ca.not_valid_after_utc - ca.not_valid_before_utc == datetime.timedelta(days=CA_DAYS)
    cert.verify_directly_issued_by(ca)
    ca.verify_directly_issued_by(ca)


def test_default_validity_is_a_year(capsys: Capture, tmp_path: Path) -> None:
    certs(capsys, tmp_path, "--dns-name", DNS)
    cert = load(tmp_path / "tls.crt")
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(days=365)


def test_tls_handshake_verifies_against_the_ca_only(capsys: Capture, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    certs(capsys, first, "--dns-name", DNS, "--dns-name", "localhost", "--ip", "127.0.0.1")
    certs(capsys, second, "--dns-name", DNS)
    for hostname in (DNS, "localhost", "127.0.0.1"):
        handshake(first, hostname)
    with pytest.raises(ssl.SSLCertVerificationError, match="Hostname mismatch"):
        handshake(first, "other.desched.svc")
    with pytest.raises(ssl.SSLCertVerificationError, match="IP address mismatch"):
        handshake(second, "127.0.0.1")
    with pytest.raises(ssl.SSLCertVerificationError, match="unable to get local issuer certificate"):
        handshake(first, DNS, cafile=second / "ca.crt")  # every run makes a new CA


def test_rewrite_replaces_each_file_atomically(capsys: Capture, tmp_path: Path) -> None:
    certs(capsys, tmp_path, "--dns-name", DNS)
    old = {name: (tmp_path / name).read_bytes() for name in FILES}
    (tmp_path / "tls.key").chmod(0o644)
    with open(tmp_path / "tls.key", "rb") as reader:  # a server that opened the old key
        inode = os.fstat(reader.fileno()).st_ino
        certs(capsys, tmp_path, "--dns-name", DNS)
        assert reader.read() == old["tls.key"]  # renamed over, not rewritten in place
    assert (tmp_path / "tls.key").stat().st_ino != inode
    assert all((tmp_path / name).read_bytes() != old[name] for name in FILES)
    assert mode(tmp_path / "tls.key") == 0o600
    assert sorted(os.listdir(tmp_path)) == sorted(FILES)  # no temporary files left
    load(tmp_path / "tls.crt").verify_directly_issued_by(load(tmp_path / "ca.crt"))


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    certs(capsys, tmp_path, "--dns-name", DNS)
    old = (tmp_path / "ca.crt").read_bytes()

    def full(source: str, target: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    assert failure(tmp_path, "--dns-name", DNS) == f"cannot write {tmp_path / 'ca.crt'}: No space left on device"
    assert (tmp_path / "ca.crt").read_bytes() == old
    assert sorted(os.listdir(tmp_path)) == sorted(FILES)


def test_secret_manifest(capsys: Capture, tmp_path: Path) -> None:
    lines = certs(capsys, tmp_path, "--dns-name", DNS, "--secret", "desched/webhook-tls")
    assert lines[-1] == f"wrote {tmp_path / 'secret.yaml'}"
    assert mode(tmp_path / "secret.yaml") == 0o600
    secret = yaml.safe_load((tmp_path / "secret.yaml").read_text())
    assert {key: secret[key] for key in ("apiVersion", "kind", "metadata", "type")} == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "webhook-tls", "namespace": "desched"},
        "type": "kubernetes.io/tls",
    }
    assert {key: base64.b64decode(value) for key, value in secret["data"].items()} == {
        name: (tmp_path / name).read_bytes() for name in ("tls.crt", "tls.key", "ca.crt")
    }


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--secret", "webhook-tls"], "--secret 'webhook-tls' is not NAMESPACE/NAME"),
        (["--secret", "desched/"], "is not NAMESPACE/NAME"),
        (["--secret", "/webhook-tls"], "is not NAMESPACE/NAME"),
        (["--secret", "Desched/webhook-tls"], "is not NAMESPACE/NAME"),
        (["--secret", "desched/webhook/tls"], "is not NAMESPACE/NAME"),
        (["--apply"], "--apply needs --secret NAMESPACE/NAME"),
        (["--ip", "127.0.0.256"], "--ip '127.0.0.256' is not an IPv4 or IPv6 address"),
        (["--dns-name", "bad_name.svc"], "--dns-name 'bad_name.svc' is not a DNS name"),
        (["--dns-name=-x.svc"], "--dns-name '-x.svc' is not a DNS name"),
        (["--days", "0"], f"--days must be between 1 and {CA_DAYS}"),
        (["--days", str(CA_DAYS + 1)], f"--days must be between 1 and {CA_DAYS}"),
        (["--patch-webhook", "Not/A/Name"], "--patch-webhook 'Not/A/Name' is not a Kubernetes object name"),
    ],
)
def test_usage_errors_write_nothing(tmp_path: Path, flags: list[str], message: str) -> None:
    out = tmp_path / "out"
    assert message in failure(out, "--dns-name", DNS, *flags)
    assert not out.exists()


def test_the_common_name_must_fit(tmp_path: Path) -> None:
    long = ".".join(["a" * 40, "b" * 40, "svc"])
    assert "at most 64 characters" in failure(tmp_path / "out", "--dns-name", long)
    assert not (tmp_path / "out").exists()


def test_an_unusable_directory_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert failure(blocker, "--dns-name", DNS) == f"cannot create {blocker}: File exists"
    assert failure(blocker / "sub", "--dns-name", DNS) == f"cannot create {blocker / 'sub'}: Not a directory"


def test_a_missing_kubeconfig_fails_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    message = failure(out, "--dns-name", DNS, "--patch-webhook", "x", "--kubeconfig", str(tmp_path / "missing"))
    assert message.startswith(f"cannot load {tmp_path / 'missing'}")
    assert not out.exists()


# -- against the real API server --------------------------------------------------------------------------------------


def webhook_configuration(name: str, ca_bundle: str) -> dict[str, object]:
    """Two webhooks that never apply (no namespace has the label); the first already has a ``caBundle``."""

    def webhook(index: int) -> dict[str, object]:
        client = {"url": f"https://127.0.0.1:9/validate-{index}"}
        return {
            "name": f"{index}.certs.desched.test",
            "clientConfig": {**client, "caBundle": ca_bundle} if index == 0 else client,
            "rules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
            ],
            "namespaceSelector": {"matchLabels": {"desched.test/never": "x"}},
            "failurePolicy": "Ignore",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 1,
        }

    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [webhook(0), webhook(1)],
    }


@pytest.fixture
def configuration(kube: Api) -> Iterator[str]:
    """The name of a fresh two-webhook ValidatingWebhookConfiguration, deleted afterwards."""
    name = f"desched-certs-{secrets.token_hex(3)}"
    kube.create(webhook_configuration(name, base64.b64encode(generate([DNS], []).ca).decode()))
    yield name
    with contextlib.suppress(ApiError):
        kube.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", name)


@pytest.mark.cluster
def test_apply_creates_then_replaces_the_secret(
    capsys: Capture, tmp_path: Path, control_plane: ControlPlane, kube: Api, namespace: str
) -> None:
    flags = (
        "--dns-name",
        DNS,
        "--secret",
        f"{namespace}/webhook-tls",
        "--apply",
        "--kubeconfig",
        control_plane.kubeconfig,
        "--context",
        "admin",
    )
    versions = []
    for action in ("created", "replaced"):
        lines = certs(capsys, tmp_path, *flags)
        assert lines[-1] == f"{action} secret {namespace}/webhook-tls"
        secret = kube.get("v1", "Secret", "webhook-tls", namespace)
        assert secret["type"] == "kubernetes.io/tls"
        assert {key: base64.b64decode(value) for key, value in secret["data"].items()} == {
            name: (tmp_path / name).read_bytes() for name in ("tls.crt", "tls.key", "ca.crt")
        }
        versions.append(secret["metadata"]["resourceVersion"])
    assert versions[0] != versions[1]


@pytest.mark.cluster
def test_patch_webhook_sets_every_ca_bundle(
    capsys: Capture, tmp_path: Path, control_plane: ControlPlane, kube: Api, configuration: str
) -> None:
    lines = certs(
        capsys,
        tmp_path,
        "--dns-name",
        DNS,
        "--patch-webhook",
        configuration,
        "--kubeconfig",
        control_plane.kubeconfig,
        "--context",
        "admin",
    )
    assert lines[-1] == f"patched caBundle of 2 webhooks in validatingwebhookconfiguration {configuration}"
    stored = kube.get("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", configuration)
    expected = base64.b64encode((tmp_path / "ca.crt").read_bytes()).decode()
    assert [webhook["clientConfig"]["caBundle"] for webhook in stored["webhooks"]] == [expected, expected]
    assert [webhook["clientConfig"]["url"] for webhook in stored["webhooks"]] == [
        "https://127.0.0.1:9/validate-0",
        "https://127.0.0.1:9/validate-1",
    ]


@pytest.mark.cluster
def test_patch_webhook_refuses_a_configuration_changed_since_it_was_read(
    tmp_path: Path, control_plane: ControlPlane, kube: Api, configuration: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = KubeClient.get

    def read_then_change(self: KubeClient, path: str, params: dict[str, object] | None = None) -> dict[str, object]:
        document = read(self, path, params)
        kube.patch(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            configuration,
            {"metadata": {"labels": {"changed": "meanwhile"}}},
        )
        return document

    monkeypatch.setattr(KubeClient, "get", read_then_change)
    message = failure(
        tmp_path,
        "--dns-name",
        DNS,
        "--patch-webhook",
        configuration,
        "--kubeconfig",
        control_plane.kubeconfig,
        "--context",
        "admin",
    )
    assert message.startswith(f"cannot patch validatingwebhookconfiguration {configuration}: PATCH ")
    assert ": 409 " in message and "the object has been modified" in message
    stored = kube.get("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", configuration)
    assert "caBundle" not in stored["webhooks"][1]["clientConfig"]


@pytest.mark.cluster
def test_api_errors_are_one_line_usage_errors(
    tmp_path: Path, control_plane: ControlPlane, kube: Api, namespace: str, configuration: str
) -> None:
    unprivileged = ("--kubeconfig", control_plane.kubeconfig, "--context", "unprivileged")
    message = failure(tmp_path, "--dns-name", DNS, "--patch-webhook", configuration, *unprivileged)
    assert message.startswith(f"cannot patch validatingwebhookconfiguration {configuration}: GET ")
    assert ": 403 " in message and "forbidden" in message
    message = failure(tmp_path, "--dns-name", DNS, "--secret", f"{namespace}/webhook-tls", "--apply", *unprivileged)
    assert message.startswith(f"cannot apply secret {namespace}/webhook-tls: POST ")
    assert ": 403 " in message and "forbidden" in message
    admin = ("--kubeconfig", control_plane.kubeconfig, "--context", "admin")
    message = failure(tmp_path, "--dns-name", DNS, "--patch-webhook", "desched-certs-missing", *admin)
    assert ": 404 " in message
    empty = f"desched-certs-empty-{secrets.token_hex(3)}"
    kube.create({**webhook_configuration(empty, ""), "webhooks": []})
    try:
        assert failure(tmp_path, "--dns-name", DNS, "--patch-webhook", empty, *admin) == (
            f"validatingwebhookconfiguration {empty} has no webhooks to patch"
        )
    finally:
        kube.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", empty)

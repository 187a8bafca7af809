"""The executor's metrics: upstream's families (v0.36.0 metrics/metrics.go), served over HTTPS like upstream.

Pinned from upstream: names, types, label names, help texts as component-base prints them ("[ALPHA] " prefix; no
deprecation note, since upstream's binary reports component-base v0.0.0) and the literal bucket lists.
"""

from __future__ import annotations

import argparse
import http.client
import ipaddress
import os
import ssl
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from desched.errors import UsageError
from desched.executor.evictions import NAMESPACE_LIMIT_TEXT, NODE_LIMIT_TEXT, TOTAL_LIMIT_TEXT, Outcome
from desched.executor.metrics import ExecutorMetrics, MetricsServer, add_serving_arguments, start_server
from desched.runtime.tls import generate
from tests.exposition import parse

EVICTED = "[ALPHA] Number of total evicted pods, by the result, by the strategy, by the namespace, by the node name. "
EVICTED += "'error' result means a pod could not be evicted"
LOOP = "[ALPHA] Time taken to complete a full descheduling cycle"
STRATEGY = "[ALPHA] Time taken to complete Each strategy of the descheduling operation"
BUILD = "[ALPHA] Build info about descheduler, including Go version, Descheduler version, Git SHA, Git branch"
LOOP_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500]
STRATEGY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100]
EVICTED_LABELS = {"result", "strategy", "profile", "namespace", "node"}
BUILD_LABELS = {"AppVersion", "DeschedulerVersion", "GitBranch", "GitSha1", "GoVersion"}
# name: (type, help, label names, bucket bounds as written)
UPSTREAM = {
    "descheduler_build_info": ("gauge", BUILD, BUILD_LABELS, None),
    "descheduler_descheduler_loop_duration_seconds": ("histogram", LOOP, set(), LOOP_BUCKETS),
    "descheduler_descheduler_strategy_duration_seconds": (
        "histogram",
        STRATEGY,
        {"strategy", "profile"},
        STRATEGY_BUCKETS,
    ),
    "descheduler_loop_duration_seconds": ("histogram", LOOP, set(), LOOP_BUCKETS),
    "descheduler_pods_evicted": ("counter", EVICTED, EVICTED_LABELS, None),  # deprecated in 0.34.0
    "descheduler_pods_evicted_total": ("counter", EVICTED, EVICTED_LABELS, None),
    "descheduler_strategy_duration_seconds": ("histogram", STRATEGY, {"strategy", "profile"}, STRATEGY_BUCKETS),
}


def _metrics() -> ExecutorMetrics:
    metrics = ExecutorMetrics("0.1.0")
    metrics.evicted("success", "PodLifeTime", "default", "shop", "n1")
    metrics.evicted("maximum number of evicted pods per node reached", "PodLifeTime", "default", "shop", "n1")
    metrics.loop_duration(1234567.0)
    metrics.strategy_duration("default", "PodLifeTime", 0.03)
    return metrics


def test_the_families_are_upstreams() -> None:
    families = parse(_metrics().exposition())
    assert list(families) == sorted(families)  # name order, as Go's registry gathers
    assert [name for name in families if not name.startswith("desched_")] == sorted(UPSTREAM)  # the rest are ours
    for name, (kind, help_text, label_names, buckets) in UPSTREAM.items():
        family = families[name]
        assert (family.type, family.help) == (kind, help_text), name
        assert {label for s in family.samples for label in s.labels} - {"le"} == label_names, name
        bounds = [s.labels["le"] for s in family.samples if s.name.endswith("_bucket")]
        if buckets is not None:
            assert bounds == [*(str(bound) for bound in buckets), "+Inf"], name


def test_the_deprecated_twins_repeat_every_sample() -> None:
    families = parse(_metrics().exposition())
    for old, new in (
        ("descheduler_pods_evicted", "descheduler_pods_evicted_total"),
        ("descheduler_descheduler_loop_duration_seconds", "descheduler_loop_duration_seconds"),
        ("descheduler_descheduler_strategy_duration_seconds", "descheduler_strategy_duration_seconds"),
    ):
        renamed = [(s.name.replace(old, new, 1), s.labels, s.text) for s in families[old].samples]
        assert renamed == [(s.name, s.labels, s.text) for s in families[new].samples]


def test_values_are_exact() -> None:
    text = _metrics().exposition()
    assert "descheduler_loop_duration_seconds_sum 1234567\n" in text
    assert "descheduler_loop_duration_seconds_count 1\n" in text
    assert 'descheduler_loop_duration_seconds_bucket{le="500"} 0\n' in text
    assert 'descheduler_strategy_duration_seconds_sum{strategy="PodLifeTime",profile="default"} 0.03\n' in text


def _args(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_serving_arguments(parser)
    return parser.parse_args(list(flags))


@pytest.fixture
def running() -> Iterator[list[MetricsServer]]:
    servers: list[MetricsServer] = []
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


def _start(running: list[MetricsServer], metrics: ExecutorMetrics, *flags: str) -> int:
    server = start_server(metrics, _args("--metrics-bind-address", "127.0.0.1:0", *flags))
    assert server is not None
    running.append(server)
    return int(server.server_address[1])


def _get(port: int, path: str, context: ssl.SSLContext | None) -> tuple[int, str, bytes | None]:
    """Status, body and (over TLS) the server's certificate (DER) of ``GET path`` on 127.0.0.1."""
    if context is None:
        connection: http.client.HTTPConnection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    else:
        connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=context)
    try:
        connection.connect()
        sock = connection.sock
        peer = sock.getpeercert(binary_form=True) if isinstance(sock, ssl.SSLSocket) else None
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, answer.read().decode(), peer
    finally:
        connection.close()


def _trusting(ca_file: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca_file))


def _unverified() -> ssl.SSLContext:
    """What a kubelet HTTPS probe does: TLS without verifying the certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def test_https_with_a_self_signed_certificate_by_default(running: list[MetricsServer]) -> None:
    metrics = _metrics()
    port = _start(running, metrics)
    status, body, peer = _get(port, "/metrics", _unverified())
    assert (status, body) == (200, metrics.exposition())
    assert peer is not None
    certificate = x509.load_der_x509_certificate(peer)
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert certificate.issuer.rfc4514_string().startswith("CN=desched metrics CA ")
    assert _get(port, "/healthz", _unverified())[:2] == (200, "ok")
    assert _get(port, "/other", _unverified())[0] == 404
    with pytest.raises(ssl.SSLError):  # it cannot be verified: its CA is nowhere
        _get(port, "/metrics", ssl.create_default_context())
    with pytest.raises((http.client.HTTPException, OSError)):  # no plain HTTP on the HTTPS port...
        _get(port, "/metrics", None)
    assert _get(port, "/healthz", _unverified())[:2] == (200, "ok")  # ...and the server keeps serving


def test_https_with_a_given_certificate(tmp_path: Path, running: list[MetricsServer]) -> None:
    bundle = generate(["localhost"], [ipaddress.ip_address("127.0.0.1")])
    (tmp_path / "ca.crt").write_bytes(bundle.ca)
    (tmp_path / "tls.crt").write_bytes(bundle.cert)
    (tmp_path / "tls.key").write_bytes(bundle.key)
    metrics = _metrics()
    flags = ("--tls-cert-file", str(tmp_path / "tls.crt"), "--tls-private-key-file", str(tmp_path / "tls.key"))
    port = _start(running, metrics, *flags)
    status, body, peer = _get(port, "/metrics", _trusting(tmp_path / "ca.crt"))
    assert (status, body) == (200, metrics.exposition())
    assert peer == x509.load_pem_x509_certificate(bundle.cert).public_bytes(Encoding.DER)


def test_cert_dir_keeps_a_generated_pair_across_restarts(tmp_path: Path, running: list[MetricsServer]) -> None:
    directory = tmp_path / "certs"
    metrics = _metrics()
    port = _start(running, metrics, "--cert-dir", str(directory))
    cert, key = directory / "apiserver.crt", directory / "apiserver.key"
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    status, body, first = _get(port, "/metrics", _trusting(cert))  # the file holds the certificate and its CA
    assert (status, body) == (200, metrics.exposition())
    written = cert.read_bytes()
    again = _start(running, metrics, "--cert-dir", str(directory))
    assert cert.read_bytes() == written
    assert _get(again, "/healthz", _trusting(cert))[2] == first


def test_plain_http_behind_metrics_insecure(running: list[MetricsServer]) -> None:
    metrics = _metrics()
    port = _start(running, metrics, "--metrics-insecure")
    assert _get(port, "/metrics", None)[:2] == (200, metrics.exposition())
    assert _get(port, "/healthz", None)[:2] == (200, "ok")


def test_no_server_without_a_bind_address() -> None:
    assert start_server(_metrics(), _args()) is None


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--metrics-insecure"], "--metrics-insecure needs --metrics-bind-address"),
        (["--cert-dir", "d"], "--cert-dir needs --metrics-bind-address"),
        (["--metrics-bind-address", ":0", "--metrics-insecure", "--cert-dir", "d"], "--cert-dir does not apply"),
        (["--metrics-bind-address", ":0", "--tls-cert-file", "c"], "must be given together"),
        (["--metrics-bind-address", "10258"], "is not HOST:PORT"),
        (["--metrics-bind-address", ":http"], "is not HOST:PORT"),
        (["--metrics-bind-address", ":0", "--tls-cert-file", "c", "--tls-private-key-file", "k"], "cannot load"),
    ],
)
def test_flag_problems_are_usage_errors(flags: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        start_server(_metrics(), _args(*flags))


def test_result_values_upstream_never_records_are_documented_as_desched_own() -> None:
    """``result`` carries upstream's values (success, error, a limit's text) and desched's own ``unknown``, which
    upstream never records: docs/executor-semantics.md#9-metrics must say so, as the README does."""
    upstream = {"success", "error", TOTAL_LIMIT_TEXT, NODE_LIMIT_TEXT, NAMESPACE_LIMIT_TEXT}
    own = {outcome.value for outcome in Outcome} - upstream
    assert own == {"unknown"}
    docs = (Path(__file__).resolve().parents[2] / "docs" / "executor-semantics.md").read_text()
    section = " ".join(docs.split("## 9. Metrics")[1].split("\n## ")[0].split())
    for value in own:
        assert f"`{value}`, desched's own" in section  # the table
        assert f"the `result` value `{value}` of `descheduler_pods_evicted_total` (and its twin)" in section

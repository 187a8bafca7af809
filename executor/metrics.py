"""Prometheus metrics with upstream's names, labels, help texts and buckets (v0.36.0 ``metrics/metrics.go``;
docs/executor-semantics.md#9-metrics), and the server for them.

Contract: :class:`ExecutorMetrics` holds the families upstream registers: the counter
``descheduler_pods_evicted_total`` (labels ``result, strategy, profile, namespace, node``; ``result`` is upstream's
``success``, ``error`` or a limit's text, or desched's own ``unknown``: see docs/executor-semantics.md#9-metrics), the
histograms ``descheduler_loop_duration_seconds`` (no labels, :data:`LOOP_BUCKETS`) and
``descheduler_strategy_duration_seconds`` (``strategy, profile``, :data:`STRATEGY_BUCKETS`), the gauge
``descheduler_build_info`` (value 1), and the twins upstream deprecated in 0.34.0 but still updates
(:data:`DEPRECATED`), plus desched's own counter ``desched_cycle_failures_total`` (label ``reason``: ``list``,
``deadline``; see :mod:`desched.executor.live`). Help texts of upstream's families carry component-base's ``[ALPHA]``
prefix and, like upstream's binary (whose component-base version is v0.0.0, older than 0.34.0), no deprecation note.
:meth:`ExecutorMetrics.exposition` renders the families in name order, as Go's registry gathers them.

:func:`add_serving_arguments` adds the serving flags of ``desched run``; :func:`start_server` starts the server they
ask for, in daemon threads: ``GET /metrics`` (the exposition), ``GET /healthz`` (``ok``), 404 otherwise. It serves
HTTPS (TLS 1.2 and later) with ``--tls-cert-file``/``--tls-private-key-file``, else with the pair
``apiserver.crt``/``apiserver.key`` in ``--cert-dir`` (generated there when missing, as upstream's apiserver options
do), else with a self-signed certificate made at start; ``--metrics-insecure`` serves plain HTTP instead. A
self-signed certificate (:func:`desched.runtime.tls.generate`) names ``localhost`` and the bind address unless it is
unspecified (``0.0.0.0``, ``::``). Every flag problem and a certificate that does not load is a
:class:`~desched.errors.UsageError`.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from desched.errors import UsageError
from desched.runtime.prometheus import Counter, Histogram, labels
from desched.runtime.tls import IPAddress, generate, server_context, write_atomic

# Upstream's literal bucket lists (not component-base's DefBuckets or ExponentialBuckets).
LOOP_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500)
STRATEGY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100)
EVICTED_LABELS = ("result", "strategy", "profile", "namespace", "node")
# Deprecated name -> the family it repeats (upstream: DeprecatedVersion "0.34.0", still registered and updated).
DEPRECATED = {
    "descheduler_pods_evicted": "descheduler_pods_evicted_total",
    "descheduler_descheduler_loop_duration_seconds": "descheduler_loop_duration_seconds",
    "descheduler_descheduler_strategy_duration_seconds": "descheduler_strategy_duration_seconds",
}
CERT_PAIR = ("apiserver.crt", "apiserver.key")  # upstream's file names in --cert-dir (PairName "apiserver")


class ExecutorMetrics:
    """The executor's metrics (see the module contract); thread-safe."""

    def __init__(self, version: str) -> None:
        self.version = version
        self._evicted = Counter(
            "descheduler_pods_evicted_total",
            "[ALPHA] Number of total evicted pods, by the result, by the strategy, by the namespace, by the node "
            "name. 'error' result means a pod could not be evicted",
            EVICTED_LABELS,
        )
        self._loop = Histogram(
            "descheduler_loop_duration_seconds",
            "[ALPHA] Time taken to complete a full descheduling cycle",
            LOOP_BUCKETS,
        )
        self._strategy = Histogram(
            "descheduler_strategy_duration_seconds",
            "[ALPHA] Time taken to complete Each strategy of the descheduling operation",
            STRATEGY_BUCKETS,
            ("strategy", "profile"),
        )
        self._cycle_failures = Counter(
            "desched_cycle_failures_total",
            "Number of descheduling cycles that failed: the cluster could not be listed (list) or the cycle ran past "
            "--cycle-timeout (deadline)",
            ("reason",),
        )

    def cycle_failed(self, reason: str) -> None:
        self._cycle_failures.inc(reason)

    def evicted(self, result: str, strategy: str, profile: str, namespace: str, node: str) -> None:
        self._evicted.inc(result, strategy, profile, namespace, node)

    def loop_duration(self, seconds: float) -> None:
        self._loop.observe(seconds)

    def strategy_duration(self, profile: str, strategy: str, seconds: float) -> None:
        self._strategy.observe(seconds, strategy, profile)

    def exposition(self) -> str:
        """Every family in the text format, in name order."""
        current = {family.name: family for family in (self._evicted, self._loop, self._strategy, self._cycle_failures)}
        families = {name: family.render() for name, family in current.items()}
        families.update({name: current[twin].render(name) for name, twin in DEPRECATED.items()})
        families["descheduler_build_info"] = [
            "# HELP descheduler_build_info [ALPHA] Build info about descheduler, including Go version, Descheduler "
            "version, Git SHA, Git branch",
            "# TYPE descheduler_build_info gauge",
            "descheduler_build_info"
            + labels(
                ("AppVersion", "DeschedulerVersion", "GitBranch", "GitSha1", "GoVersion"),
                (self.version, self.version, "", "", ""),
            )
            + " 1",
        ]
        return "\n".join(line for name in sorted(families) for line in families[name]) + "\n"


class MetricsServer(ThreadingHTTPServer):
    """``/metrics`` and ``/healthz`` of ``metrics``; TLS with ``context`` (each handshake in its request's thread, so
    a slow client holds up no other), plain HTTP without."""

    def __init__(self, address: tuple[str, int], metrics: ExecutorMetrics, context: ssl.SSLContext | None) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.metrics, self.context = metrics, context
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[Any, Any]:
        connection, client = super().get_request()
        if self.context is not None:
            connection = self.context.wrap_socket(connection, server_side=True, do_handshake_on_connect=False)
        return connection, client


class _Handler(BaseHTTPRequestHandler):
    server: MetricsServer
    timeout = 30  # seconds a connection may stay silent (handshake included)

    def handle(self) -> None:
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                self.connection.do_handshake()
            except (ssl.SSLError, OSError):
                return  # not TLS, or gone: nothing to answer
        super().handle()

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/metrics":
            self._answer(self.server.metrics.exposition(), "text/plain; version=0.0.4; charset=utf-8")
        elif path == "/healthz":
            self._answer("ok", "text/plain; charset=utf-8")
        else:
            self.send_error(404)

    def _answer(self, text: str, content_type: str) -> None:
        body = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes and probes are not logged."""


def serve(metrics: ExecutorMetrics, address: str, context: ssl.SSLContext | None = None) -> MetricsServer:
    """Serve ``metrics`` at ``host:port`` (``:port`` means every IPv4 interface, ``[::]:port`` every IPv6 one) over
    HTTPS with ``context``, else plain HTTP, in a daemon thread."""
    server = MetricsServer(_address(address), metrics, context)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server


def add_serving_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags :func:`start_server` reads (upstream's names for the TLS ones)."""
    group = parser.add_argument_group("metrics server (HTTPS, like upstream's secure serving)")
    group.add_argument(
        "--metrics-bind-address",
        default="",
        metavar="HOST:PORT",
        help="serve /metrics and /healthz over HTTPS at HOST:PORT, e.g. 0.0.0.0:10258 (upstream: --bind-address "
        "and --secure-port); default: no server",
    )
    group.add_argument(
        "--tls-cert-file",
        metavar="FILE",
        help="certificate to serve (any CA concatenated after it), with --tls-private-key-file; default: self-signed",
    )
    group.add_argument("--tls-private-key-file", metavar="FILE", help="private key matching --tls-cert-file")
    group.add_argument(
        "--cert-dir",
        metavar="DIR",
        help=f"without --tls-cert-file: serve DIR/{CERT_PAIR[0]} and DIR/{CERT_PAIR[1]}, generating a self-signed "
        "pair there when missing; default: a new self-signed certificate at each start",
    )
    group.add_argument(
        "--metrics-insecure",
        action="store_true",
        help="serve plain HTTP instead of HTTPS (no upstream equivalent)",
    )


def start_server(metrics: ExecutorMetrics, args: argparse.Namespace) -> MetricsServer | None:
    """The server the flags of :func:`add_serving_arguments` ask for, serving; None without
    ``--metrics-bind-address``."""
    names = ("tls_cert_file", "tls_private_key_file", "cert_dir", "metrics_insecure")
    flags = [f"--{name.replace('_', '-')}" for name in names if getattr(args, name)]
    if not args.metrics_bind_address:
        if flags:
            raise UsageError(f"{flags[0]} needs --metrics-bind-address")
        return None
    if args.metrics_insecure and len(flags) > 1:
        raise UsageError(f"--metrics-insecure serves plain HTTP: {flags[0]} does not apply")
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        raise UsageError("--tls-cert-file and --tls-private-key-file must be given together")
    host = _address(args.metrics_bind_address)[0]
    context = (
        None if args.metrics_insecure else _context(args.tls_cert_file, args.tls_private_key_file, args.cert_dir, host)
    )
    return serve(metrics, args.metrics_bind_address, context)


def _address(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--metrics-bind-address {text!r} is not HOST:PORT (:10258, 127.0.0.1:10258, [::]:10258)")
    return host.removeprefix("[").removesuffix("]") or "0.0.0.0", int(port)


def _context(cert: str | None, key: str | None, cert_dir: str | None, host: str) -> ssl.SSLContext:
    """The SSL context for the certificate the flags name (see the module contract)."""
    if cert and key:
        return _load(cert, key)
    if cert_dir:
        cert, key = (os.path.join(cert_dir, name) for name in CERT_PAIR)
        if not (os.path.exists(cert) and os.path.exists(key)):
            _write_self_signed(cert_dir, host)
        return _load(cert, key)
    try:
        temporary = tempfile.TemporaryDirectory(prefix="desched-metrics-")  # ssl loads certificates from files only
    except OSError as error:
        raise UsageError(
            f"no writable temporary directory for a self-signed metrics certificate ({error}): set TMPDIR, or give "
            "--cert-dir or --tls-cert-file"
        ) from None
    with temporary as directory:
        _write_self_signed(directory, host)
        return _load(*(os.path.join(directory, name) for name in CERT_PAIR))


def _load(cert: str, key: str) -> ssl.SSLContext:
    try:
        return server_context(cert, key)
    except (ssl.SSLError, OSError) as error:
        raise UsageError(f"cannot load the metrics certificate {cert} with key {key}: {error}") from None


def _write_self_signed(directory: str, host: str) -> None:
    """A self-signed pair for ``host`` in ``directory`` (created 0700 when missing): the certificate then its CA, and
    the key (0600)."""
    names = ["localhost"]
    ips: list[IPAddress] = []
    try:
        address = ipaddress.ip_address(host)
        ips += [] if address.is_unspecified else [address]
    except ValueError:
        names += [host] if host != "localhost" else []
    bundle = generate(names, ips, purpose="metrics")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        write_atomic(os.path.join(directory, CERT_PAIR[1]), bundle.key, 0o600)
        write_atomic(os.path.join(directory, CERT_PAIR[0]), bundle.cert + bundle.ca, 0o644)
    except OSError as error:
        raise UsageError(f"cannot write a self-signed metrics certificate into {directory}: {error}") from None

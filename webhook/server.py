"""Serving: uvicorn with TLS for admission, plain HTTP for operations, certificate reload, limits, graceful shutdown.

Contract: :func:`run` binds both ports first (a port in use raises :class:`~desched.errors.UsageError`, exit 2), then
serves admission on the main thread's event loop and operations (probes, metrics) on a loop in a thread of their own,
so that probes are answered while admission is busy, until SIGTERM or SIGINT, and returns 0.

* Certificate reload: the files are polled every ``poll`` seconds. When they change, a NEW context is built from them
  (:func:`desched.tls.server_context`, which refuses a key that does not match the certificate); only then does it
  become the one every new handshake uses (the listener's context switches each handshake to it from its SNI
  callback). Open connections keep their session. A pair that does not load keeps the old certificate serving; the
  failure is counted (``desched_webhook_certificate_reload_failures_total``), logged once per change of the files,
  and reported by :attr:`Certificate.failure` until a later change loads.
* Limits: a TLS handshake must finish within :data:`HANDSHAKE_TIMEOUT` seconds of the TCP connection, a request's
  headers must arrive within :data:`HEADER_TIMEOUT` seconds of the connection or of their first byte, headers are at
  most :data:`MAX_HEADER_BYTES`; an idle keep-alive connection is closed after :data:`KEEP_ALIVE` seconds. Beyond
  ``max_connections`` open connections (per port), requests get 503.
* Shutdown: both listeners stop accepting. A request that has arrived is answered, with ``Connection: close``; an
  idle keep-alive connection stays open :data:`DRAIN` seconds so that a request already on its way is answered (with
  ``Connection: close``) rather than reset, and is then closed. Everything is cut after ``grace`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import ssl
import threading
import time
from collections.abc import Generator
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from desched.errors import UsageError
from desched.prometheus import Counter
from desched.tls import server_context

LOG = logging.getLogger("desched.webhook")
HANDSHAKE_TIMEOUT = 5.0
HEADER_TIMEOUT = 5.0
KEEP_ALIVE = 5
MAX_HEADER_BYTES = 16 * 1024
DRAIN = 2.0


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals to :func:`run` (two servers share one loop)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class _Loop(asyncio.SelectorEventLoop):
    """An event loop whose TLS listeners drop connections that have not finished the handshake in time."""

    async def create_server(self, *args: Any, **kwargs: Any) -> asyncio.Server:
        if kwargs.get("ssl") is not None:
            kwargs.setdefault("ssl_handshake_timeout", HANDSHAKE_TIMEOUT)
        return await super().create_server(*args, **kwargs)


class _Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the header deadline and the shutdown drain of the module contract."""

    _deadline: asyncio.TimerHandle | None = None
    _draining = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._idle():
            self._arm()
        super().data_received(data)
        if not self._idle():  # a request's headers arrived
            self._disarm()
            if self._draining:
                self.cycle.keep_alive = False

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        self._draining = True
        if not self._idle():
            self.cycle.keep_alive = False
            return
        self._disarm()
        self._unset_keepalive_if_required()
        self.timeout_keep_alive_task = self.loop.call_later(DRAIN, self.timeout_keep_alive_handler)

    def _idle(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(HEADER_TIMEOUT, self.timeout_keep_alive_handler)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


class Certificate:
    """The serving certificate (see the module contract): :attr:`context` is the listener's, :attr:`current` the one
    handshakes use; :attr:`failure` says why the last reload failed, or is None."""

    def __init__(
        self, cert: str, key: str, failures: Counter, minimum: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2
    ) -> None:
        """Loads the pair (raises ``ssl.SSLError`` or ``OSError``); ``failures`` counts failed reloads."""
        self.cert, self.key, self.minimum, self.failures = cert, key, minimum, failures
        self.stamp = self._stamp()
        self.context = self.current = server_context(cert, key, minimum)
        self.context.sni_callback = self._select
        self.failure: str | None = None

    def _select(self, connection: ssl.SSLObject, _name: str | None, context: ssl.SSLContext) -> None:
        if self.current is not context:
            connection.context = self.current

    def _stamp(self) -> tuple[float, int, float, int]:
        cert, key = os.stat(self.cert), os.stat(self.key)
        return cert.st_mtime, cert.st_size, key.st_mtime, key.st_size

    def reload_if_changed(self) -> bool:
        """Load the files if they changed since the last attempt; whether the served certificate changed."""
        try:
            stamp = self._stamp()
        except OSError:
            return False
        if stamp == self.stamp:
            return False
        self.stamp = stamp
        try:
            self.current = server_context(self.cert, self.key, self.minimum)
        except (ssl.SSLError, OSError) as error:
            self.failure = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}: {error}"
            self.failures.inc()
            LOG.warning(
                "certificate not reloaded, the previous one still serves", extra={"event": {"error": str(error)}}
            )
            return False
        self.failure = None
        LOG.info("certificate reloaded", extra={"event": {"cert": self.cert}})
        return True


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port``; UsageError (one line) when that is impossible, e.g. the port is in
    use."""
    # IPPROTO_TCP spelled out: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on connections of a socket that
    # says so, and socket.create_server's does not; with Nagle on, every answer waited ~40 ms for a delayed ACK.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
        return sock
    except OSError as error:
        sock.close()
        reason = os.strerror(error.errno).lower() if error.errno else str(error)
        raise UsageError(f"cannot listen on {host}:{port}: {reason}") from None


def run(
    app: Any,
    ops_app: Any,
    host: str,
    port: int,
    metrics_port: int,
    certificate: Certificate,
    grace: float = 25.0,
    poll: float = 1.0,
    max_connections: int = 512,
) -> int:
    """Serve until SIGTERM/SIGINT (see the module contract)."""

    def config(served: Any) -> uvicorn.Config:
        return uvicorn.Config(
            served,
            http=_Protocol,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=int(grace),
            timeout_keep_alive=KEEP_ALIVE,
            limit_concurrency=max_connections,
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
            server_header=False,
        )

    admission, operations = config(app), config(ops_app)
    admission.load()
    admission.ssl = certificate.context
    sockets = [listen(host, port), listen(host, metrics_port)]
    servers = [_Server(admission), _Server(operations)]

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def stop() -> None:
            LOG.info("shutting down", extra={"event": {}})
            for server in servers:
                server.should_exit = True

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)

        async def watch_certificate() -> None:
            while not all(server.should_exit for server in servers):
                await asyncio.sleep(poll)
                certificate.reload_if_changed()

        watcher = asyncio.create_task(watch_certificate())
        try:
            await servers[0].serve([sockets[0]])
        finally:
            watcher.cancel()
            servers[1].should_exit = True

    # Probes and metrics are answered on a loop and a thread of their own: a busy admission loop does not fail them.
    operations_loop = asyncio.new_event_loop()
    operations_thread = threading.Thread(
        target=operations_loop.run_until_complete,
        args=(servers[1].serve([sockets[1]]),),
        name="desched-operations",
        daemon=True,
    )
    operations_thread.start()
    loop = _Loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
        servers[1].should_exit = True
        operations_thread.join(timeout=grace + 5)
        operations_loop.close()
        for sock in sockets:
            sock.close()
    return 0

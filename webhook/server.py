"""Serving: uvicorn with TLS 1.2+ for admission, plain HTTP for operations, certificate reload, graceful shutdown.

Contract: :func:`run` serves both apps in one event loop until SIGTERM or SIGINT; then both servers stop accepting,
in-flight requests finish (up to ``grace`` seconds) and it returns 0. The certificate and key files are polled every
``poll`` seconds; when they change and load as a pair, they replace the serving certificate in the SSL context the
listener uses, so new handshakes get the new certificate and no connection is dropped. A pair that does not load (a
half-written rotation) is retried on the next poll while the old certificate keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import ssl
from collections.abc import Generator
from typing import Any

import uvicorn

from desched.tls import server_context

LOG = logging.getLogger("desched.webhook")


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals to :func:`run` (two servers share one loop)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class Certificate:
    """The serving certificate: loaded into ``context`` now and again whenever the files change."""

    def __init__(self, cert: str, key: str) -> None:
        self.cert, self.key = cert, key
        self.context = server_context(cert, key)
        self.stamp = self._stamp()
        self.loaded = True

    def _stamp(self) -> tuple[float, int, float, int]:
        cert, key = os.stat(self.cert), os.stat(self.key)
        return cert.st_mtime, cert.st_size, key.st_mtime, key.st_size

    def reload_if_changed(self) -> bool:
        try:
            stamp = self._stamp()
        except OSError:
            return False
        if stamp == self.stamp:
            return False
        try:
            self.context.load_cert_chain(self.cert, self.key)
        except (ssl.SSLError, OSError) as error:
            LOG.warning("certificate not reloaded (will retry)", extra={"event": {"error": str(error)}})
            return False
        self.stamp = stamp
        LOG.info("certificate reloaded", extra={"event": {"cert": self.cert}})
        return True


def run(
    app: Any,
    ops_app: Any,
    host: str,
    port: int,
    metrics_port: int,
    certificate: Certificate,
    grace: float = 25.0,
    poll: float = 1.0,
) -> int:
    """Serve until SIGTERM/SIGINT (see the module contract)."""
    admission = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=int(grace),
        server_header=False,
    )
    admission.load()
    admission.ssl = certificate.context  # the one context the listener uses: reloading it rotates the certificate
    operations = uvicorn.Config(
        ops_app,
        host=host,
        port=metrics_port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
    )
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
            await asyncio.gather(*(server.serve() for server in servers))
        finally:
            watcher.cancel()

    asyncio.run(main())
    return 0

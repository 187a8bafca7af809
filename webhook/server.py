"""Serving: uvicorn with TLS for admission, plain HTTP for operations, certificate reload, limits, graceful shutdown.

Contract: :func:`run` binds both ports first (a port in use raises :class:`~desched.errors.UsageError`, exit 2), then
serves admission on the main thread's event loop and operations (probes, metrics) on a loop in a thread of their own,
so that probes are answered while admission is busy, until SIGTERM or SIGINT, and returns 0. Before serving, what
start-up made is left out of the collector's full collections (:func:`desched.runtime.collector.freeze_survivors`).

* Certificate reload: the files are polled every ``poll`` seconds. When they change, a NEW context is built from them
  (:func:`desched.runtime.tls.server_context`, which refuses a key that does not match the certificate); only then does
  it become the one every new handshake uses (the listener's context switches each handshake to it from its SNI
  callback). Open connections keep their session. A pair that does not load keeps the old certificate serving; the
  failure is counted (``desched_webhook_certificate_reload_failures_total``), logged once per change of the files,
  and reported by :attr:`Certificate.failure` until a later change loads.
* Reading a request (:class:`Gate`): a TLS handshake must finish within :data:`HANDSHAKE_TIMEOUT` seconds of the TCP
  connection. A request, headers and body, must arrive within ``read_timeout`` seconds of its arrival (the connection
  being made, or its first byte on a kept-alive connection); a late one is answered 408 and its connection closed (a
  new connection that sent nothing is closed quietly). At most ``max_reading`` connections may be reading a request:
  one more closes the oldest of them the same way, so connections trickling a request cannot take the slots of those
  that send theirs at once. Headers are at most :data:`MAX_HEADER_BYTES`; an idle keep-alive connection is closed
  after :data:`KEEP_ALIVE` seconds. At ``max_connections`` open connections (per port), a request that begins to
  arrive closes the connection that has been reading a request longest the same way; only when none is reading (all
  are being answered or idle) does it get 503.
  Every request's ASGI scope carries its arrival time under ``extensions[ARRIVAL]``.
* Framing (RFC 9112), checked before any request reaches the application: a request with both Content-Length and
  Transfer-Encoding is answered 400, a chunk announcing more than ``max_body_bytes`` (with what came before) 413 at
  once; either way the connection closes and nothing after the refused request is read.
* Shutdown: from SIGTERM/SIGINT on, every answer carries ``Connection: close``, also those of requests that had
  already arrived. The listeners stop accepting once no accepted connection waits in their queue (at most
  :data:`DRAIN` seconds; a connection the kernel completed but the server never accepted would be reset, not refused).
  An idle keep-alive connection stays open :data:`DRAIN` seconds, so that a request already on its way is answered
  (with ``Connection: close``) rather than reset, and is then closed. Everything is cut after ``grace`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http
import json
import logging
import os
import select
import signal
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Generator
from typing import Any, NoReturn

import h11
import uvicorn
from h11._readers import ChunkedReader
from uvicorn.protocols.http.h11_impl import H11Protocol

from desched.errors import UsageError
from desched.runtime.collector import freeze_survivors
from desched.runtime.prometheus import Counter
from desched.runtime.tls import server_context

LOG = logging.getLogger("desched.webhook")
HANDSHAKE_TIMEOUT = 5.0
KEEP_ALIVE = 5
MAX_HEADER_BYTES = 16 * 1024
DRAIN = 2.0
SETTLE = 0.2
#: The ASGI scope extension ``{"perf_counter": t}``: the ``time.perf_counter()`` at which the request began to arrive.
ARRIVAL = "desched.arrival"


CLOSE = (b"connection", b"close")


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals to :func:`run` (two servers share one loop), drains as the module
    contract says, and closes its listeners only when no accepted connection waits in their queue."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    def drain(self) -> None:
        """Start the shutdown: from now on every answer carries ``Connection: close``, also those of requests that
        have arrived but not been answered yet; the server stops at its next tick."""
        self.should_exit = True
        if CLOSE not in self.config.encoded_headers:
            self.config.encoded_headers.append(CLOSE)  # uvicorn rebuilds the default headers from these every second
        self.server_state.default_headers = [*self.server_state.default_headers, CLOSE]
        for connection in self.server_state.connections:
            if isinstance(connection, _Protocol):
                connection.drain()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        listeners = [sock for server in self.servers for sock in server.sockets]
        waited = time.monotonic() + DRAIN
        # A connection the kernel completed but the loop has not accepted yet is reset when its listener closes; the
        # client, which already wrote its request, sees a failure instead of a refusal. Let the loop accept those
        # first (answered with Connection: close), then close in the same step as the last look at the queue.
        while time.monotonic() < waited and select.select(listeners, [], [], 0)[0]:
            await asyncio.sleep(0.005)
        for server in self.servers:
            server.close()
        await asyncio.sleep(SETTLE)  # handshakes of connections accepted just before finish and join the drain
        await super().shutdown(sockets)


class _Loop(asyncio.SelectorEventLoop):
    """An event loop whose TLS listeners drop connections that have not finished the handshake, or the closing
    handshake, in time."""

    async def create_server(self, *args: Any, **kwargs: Any) -> asyncio.Server:
        if kwargs.get("ssl") is not None:
            kwargs.setdefault("ssl_handshake_timeout", HANDSHAKE_TIMEOUT)
            if sys.version_info >= (3, 11):  # a peer that never answers close_notify holds its connection this long
                kwargs.setdefault("ssl_shutdown_timeout", HANDSHAKE_TIMEOUT)
        return await super().create_server(*args, **kwargs)


def log_refusal(code: int, message: str) -> None:
    """The log line of a request answered 400, 408 or 413 instead of being decided."""
    LOG.info("rejected", extra={"event": {"code": code, "message": message}})


class Gate:
    """What the connections of one listener share: the limits on reading a request, the connections still reading one
        (oldest first) and what is done of a refusal, by status and message: logged (:func:`log_refusal`) unless told
    otherwise (see the module contract)."""

    def __init__(
        self,
        read_timeout: float = 2.5,
        max_reading: int = 128,
        max_body_bytes: int = 3 * 2**20,
        refused: Callable[[int, str], None] = log_refusal,
    ) -> None:
        self.read_timeout, self.max_reading, self.max_body_bytes = read_timeout, max_reading, max_body_bytes
        self.refused = refused
        self.reading: dict[_Protocol, None] = {}


class _Refused(h11.RemoteProtocolError):
    """A request this server refuses although h11 would take it; ``error_status_hint`` is the answer's status."""


class _Framing(h11.Connection):
    """h11's server side with the framing checks of the module contract on top."""

    def __init__(self, max_incomplete_event_size: int, max_body_bytes: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_incomplete_event_size)
        self.max_body_bytes = max_body_bytes
        self.body_bytes = 0
        self.refusal: _Refused | None = None  # why the last request was refused

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Request):
            self.body_bytes = 0
            names = {name.lower() for name, _value in event.headers}
            if b"transfer-encoding" in names and b"content-length" in names:
                # RFC 9112 section 6.3: such a message may be an attempt at request smuggling; the connection closes.
                self._refuse(400, "Content-Length together with Transfer-Encoding")
        elif isinstance(event, h11.Data):
            self.body_bytes += len(event.data)
        if self.their_state is h11.SEND_BODY and self.body_bytes + self._announced() > self.max_body_bytes:
            self._refuse(413, f"the body exceeds {self.max_body_bytes} bytes")
        return event

    def _refuse(self, code: int, message: str) -> NoReturn:
        self.refusal = _Refused(message, error_status_hint=code)
        raise self.refusal

    def _announced(self) -> int:
        """The bytes of the current chunk still to come: h11 (pinned in constraints.txt) keeps the size of the chunk
        it reads in its ChunkedReader, and yields the data only as it arrives."""
        return int(getattr(self._reader, "_bytes_in_chunk", 0)) if isinstance(self._reader, ChunkedReader) else 0


class _Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the request deadline, the cap on reading connections, the framing checks and
    the shutdown drain of the module contract."""

    def __init__(self, *args: Any, gate: Gate, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = gate
        self.framing = _Framing(self.config.h11_max_incomplete_event_size or MAX_HEADER_BYTES, gate.max_body_bytes)
        self.conn = self.framing
        self.arrival = 0.0  # time.perf_counter() when the request being read began to arrive
        self._reading = False
        self._partial = False  # some bytes of that request have arrived
        self._deadline: asyncio.TimerHandle | None = None
        self._stamped: Any = None  # the request cycle that was told its arrival

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._begin()

    def data_received(self, data: bytes) -> None:
        if not self._reading and self._idle():
            self._begin()  # the next request on a kept-alive connection
        if self._reading and not self._partial:
            self._make_room()  # the first bytes of a request
        self._partial = self._reading
        super().data_received(data)
        self._after_events()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self._reading and not self.transport.is_closing() and (not self._idle() or self.conn.trailing_data[0]):
            self._begin()  # a pipelined request was waiting
            self._partial = True
        self._after_events()

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 or :class:`_Framing` refused: its status, and the connection closes."""
        self._end()
        refusal, self.framing.refusal = self.framing.refusal, None
        if refusal is None:
            self._refuse(400, msg)
        else:
            self._refuse(refusal.error_status_hint, str(refusal))

    def drain(self) -> None:
        """Answers from now on carry ``Connection: close``, including one whose request has already arrived."""
        if self.cycle is not None and not self.cycle.response_started:
            self.cycle.default_headers = [*self.cycle.default_headers, CLOSE]

    def shutdown(self) -> None:
        if not self._idle():
            self.cycle.keep_alive = False
            return
        if self._reading and self._partial:
            return  # a request is arriving: it is answered with Connection: close, or refused at its deadline
        self._unset_keepalive_if_required()
        self.timeout_keep_alive_task = self.loop.call_later(DRAIN, self.timeout_keep_alive_handler)

    def _idle(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _after_events(self) -> None:
        cycle = self.cycle
        if cycle is not None and cycle is not self._stamped:
            self._stamped = cycle
            cycle.scope.setdefault("extensions", {})[ARRIVAL] = {"perf_counter": self.arrival}
        if self._reading and cycle is not None and not cycle.response_complete and not cycle.more_body:
            self._end()  # the whole request has arrived

    def _begin(self) -> None:
        self._reading, self._partial, self.arrival = True, False, time.perf_counter()
        self.gate.reading[self] = None
        self._deadline = self.loop.call_later(self.gate.read_timeout, self._late)
        if len(self.gate.reading) > self.gate.max_reading:
            oldest = next(iter(self.gate.reading))
            LOG.warning("too many connections reading a request: the oldest is closed", extra={"event": {}})
            oldest._late()

    def _make_room(self) -> None:
        """At the connection cap (where uvicorn answers 503), close the connection that has been reading a request
        longest, as if late (408, or quietly when it sent nothing), so that this request is served: a connection
        trickling its body gives way to one that sends its request."""
        limit = self.limit_concurrency
        if limit is None or len(self.connections) < limit:
            return
        oldest = next((other for other in self.gate.reading if other is not self), None)
        if oldest is not None:
            LOG.warning("connection cap reached: the connection reading longest is closed", extra={"event": {}})
            oldest._late()

    def _end(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self.gate.reading.pop(self, None)
        self._reading = False

    def _late(self) -> None:
        """The request did not arrive in time (or its connection is the oldest one reading when too many are)."""
        partial = self._partial
        self._end()
        if self.transport.is_closing() or (self.cycle is not None and self.cycle.response_started):
            return
        if not partial:
            self._close()  # nothing was asked: close quietly, as for an idle keep-alive connection
            return
        self._refuse(408, f"the request did not arrive within {self.gate.read_timeout:g}s")

    def _refuse(self, code: int, message: str) -> None:
        """Count and log the refusal, answer ``code`` with ``message`` and close, whatever state h11 is in: nothing
        after it is read; the application, if it started on this request, sees the client gone at once."""
        self.gate.refused(code, message)
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        body = json.dumps({"message": message}).encode()
        reason = http.HTTPStatus(code).phrase
        head = f"HTTP/1.1 {code} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        self.transport.write(head.encode() + b"connection: close\r\n\r\n" + body)
        self._close()

    def _close(self) -> None:
        """Close the connection, and free its slot now: TLS waits up to :data:`HANDSHAKE_TIMEOUT` for the client's
        close_notify, and a client that does not answer must not count against ``max_connections`` meanwhile."""
        self.connections.discard(self)
        self.transport.close()


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
    gate: Gate | None = None,
) -> int:
    """Serve until SIGTERM/SIGINT (see the module contract); ``gate`` holds the admission port's request limits."""

    def config(served: Any, limits: Gate) -> uvicorn.Config:
        return uvicorn.Config(
            served,
            http=functools.partial(_Protocol, gate=limits),  # type: ignore[arg-type]
            log_config=None,  # uvicorn's loggers go through the handlers of the process (desched webhook: JSON)
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=int(grace),
            timeout_keep_alive=KEEP_ALIVE,
            limit_concurrency=max_connections,
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
            server_header=False,
        )

    admission, operations = config(app, gate or Gate()), config(ops_app, Gate())
    admission.load()
    admission.ssl = certificate.context
    sockets = [listen(host, port), listen(host, metrics_port)]
    servers = [_Server(admission), _Server(operations)]
    freeze_survivors()  # start-up is over: what it made stays out of the collections that pause the answers

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def stop() -> None:
            LOG.info("shutting down", extra={"event": {}})
            servers[0].drain()
            servers[1].should_exit = True

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

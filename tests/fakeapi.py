"""A small fake Kubernetes API server for client tests that need no control plane.

Contract: :class:`FakeApi` serves plain HTTP/1.1 on 127.0.0.1 from a daemon thread; each request gets the
:class:`Answer` ``route(method, path)`` returns (path with its query) and is recorded in :attr:`FakeApi.log` with
the :func:`time.monotonic` time it came.
:meth:`FakeApi.kubeconfig` writes a kubeconfig naming it. Use it as a context manager (it stops on exit).
:func:`bounded` ends a block in the main thread that runs longer than its time with :class:`Expired` (a
``BaseException``: no ``except OSError`` or ``except Exception`` of the code under test swallows it), so a test of a
wait fails instead of hanging.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple


class Answer(NamedTuple):
    status: int
    body: dict[str, Any]
    headers: tuple[tuple[str, str], ...] = ()  # (name, value) pairs


class Expired(BaseException):
    """The block of :func:`bounded` ran past its time."""


class FakeApi:
    """See the module contract."""

    def __init__(self, route: Callable[[str, str], Answer]) -> None:
        self.route = route
        self.log: list[tuple[str, str, float]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                api.log.append((self.command, self.path, time.monotonic()))
                answer = api.route(self.command, self.path)
                data = json.dumps(answer.body).encode()
                self.send_response(answer.status)
                for name, value in (*answer.headers, ("Content-Type", "application/json")):
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def kubeconfig(self, path: Path) -> Path:
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
                    "users": [{"name": "fake", "user": {"token": "fake"}}],
                    "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
                    "current-context": "fake",
                }
            )
        )
        return path

    def __enter__(self) -> FakeApi:
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Raise :class:`Expired` in the block once it ran ``seconds`` (main thread only)."""

    def expire(*_: object) -> None:
        raise Expired(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

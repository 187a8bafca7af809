"""A fault-injecting reverse proxy between ``desched run`` and the test control plane's API server.

Contract: :class:`FaultProxy` serves plain HTTP/1.1 on 127.0.0.1 and forwards each request (method, path with query,
body, ``Authorization``, ``Accept`` and ``Content-Type``) over HTTPS to the API server, verified with the control
plane's CA, answering with the server's status and body; the client's bearer token passes through, so RBAC applies as
usual. A :class:`Rule` added with :meth:`FaultProxy.inject` replaces that for the requests it matches (method, and a
regular expression searched in the path with its query) while it has uses left; the first matching rule applies:

* :class:`Reply`: answer ``status`` with a ``Status`` body; nothing reaches the server;
* :class:`Hang`: nothing reaches the server and nothing is answered for ``seconds``, then the connection is dropped (a
  client with a shorter timeout sees a read timeout);
* :class:`ForwardThen`: forward, then answer ``status`` instead of the server's answer (the server did the work).

:attr:`FaultProxy.log` records ``(method, path, status answered or None)`` per request.
:meth:`FaultProxy.kubeconfig` writes a kubeconfig naming the proxy, with the control plane's users and tokens.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

import urllib3

from tests.kcp.controlplane import ControlPlane


@dataclass(frozen=True)
class Reply:
    status: int


@dataclass(frozen=True)
class Hang:
    seconds: float


@dataclass(frozen=True)
class ForwardThen:
    status: int


Action = Reply | Hang | ForwardThen


@dataclass
class Rule:
    method: str
    pattern: re.Pattern[str]
    action: Action
    uses: int | None  # None: every matching request


class Logged(NamedTuple):
    method: str
    path: str
    status: int | None


class FaultProxy:
    """See the module contract; a context manager that stops the server (and ends hangs) on exit."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.rules: list[Rule] = []
        self.log: list[Logged] = []
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._upstream = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=plane.ca_file, retries=False)
        self._server = _Server(self)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, name="fault-proxy", daemon=True).start()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._upstream.clear()

    def inject(self, method: str, pattern: str, action: Action, uses: int | None = 1) -> None:
        with self._lock:
            self.rules.append(Rule(method, re.compile(pattern), action, uses))

    def requests(self, method: str, pattern: str) -> list[Logged]:
        """The logged requests of ``method`` whose path matches ``pattern``."""
        with self._lock:
            return [entry for entry in self.log if entry.method == method and re.search(pattern, entry.path)]

    def kubeconfig(self, path: Path) -> str:
        tokens = self.plane.tokens
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "proxy", "cluster": {"server": self.url}}],
            "users": [{"name": user, "user": {"token": token}} for user, token in tokens.items()],
            "contexts": [{"name": user, "context": {"cluster": "proxy", "user": user}} for user in tokens],
            "current-context": "admin",
        }
        path.write_text(json.dumps(config), encoding="utf-8")
        return str(path)

    def action_for(self, method: str, path: str) -> Action | None:
        with self._lock:
            for rule in self.rules:
                if rule.method == method and rule.uses != 0 and rule.pattern.search(path):
                    if rule.uses is not None:
                        rule.uses -= 1
                    return rule.action
        return None

    def record(self, method: str, path: str, status: int | None) -> None:
        with self._lock:
            self.log.append(Logged(method, path, status))

    def forward(self, method: str, path: str, headers: Any, body: bytes | None) -> tuple[int, bytes, str]:
        wanted = {name: headers[name] for name in ("Authorization", "Accept", "Content-Type") if headers.get(name)}
        answer = self._upstream.request(
            method, self.plane.server + path, body=body, headers=wanted, timeout=urllib3.Timeout(connect=5, read=30)
        )
        return answer.status, answer.data, answer.headers.get("Content-Type", "application/json")


def _status_body(status: int) -> bytes:
    document = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": f"injected by the fault proxy: {status}",
        "code": status,
    }
    return json.dumps(document).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, proxy: FaultProxy) -> None:
        self.proxy = proxy
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        proxy = self.server.proxy
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        action = proxy.action_for(self.command, self.path)
        if isinstance(action, Hang):
            proxy.record(self.command, self.path, None)
            proxy.closing.wait(action.seconds)
            self.close_connection = True
            return
        if isinstance(action, Reply):
            status, data, content_type = action.status, _status_body(action.status), "application/json"
        else:
            status, data, content_type = proxy.forward(self.command, self.path, self.headers, body)
            if isinstance(action, ForwardThen):
                status, data = action.status, _status_body(action.status)
        proxy.record(self.command, self.path, status)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are in FaultProxy.log."""

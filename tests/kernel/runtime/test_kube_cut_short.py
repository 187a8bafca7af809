"""An answer the API server cut short is reported as that, never as a server desched could not reach, and never
read as an empty document (a listing cut short would read as no pods)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from desched.errors import KubeError
from desched.runtime.kube import KubeClient

LISTING = b'{"kind": "PodList", "items": [{"metadata": {"name": "a"}}, {"metadata": {"na'


@contextmanager
def _raw_server(head: bytes, body: bytes) -> Iterator[int]:
    """A server on 127.0.0.1 that answers every connection with ``head`` and ``body`` as written, then closes."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.recv(65536)
                connection.sendall(head + body)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        listener.close()


def _client(tmp_path: Path, port: int) -> KubeClient:
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\n"
    )
    return KubeClient(str(config), timeout=5)


@pytest.mark.parametrize(
    "head",
    [
        # the body stops before the length the server announced
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\nConnection: close\r\n\r\n",
        # the server closes a body it announced as complete: no length, the JSON cut in the middle
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
    ],
    ids=["short-of-its-length", "json-cut-short"],
)
def test_a_listing_cut_short_is_the_servers_answer_not_a_failure_to_reach_it(tmp_path: Path, head: bytes) -> None:
    with _raw_server(head, LISTING) as port, pytest.raises(KubeError) as raised:
        _client(tmp_path, port).get("/api/v1/pods")
    message = str(raised.value)
    assert "cannot reach" not in message
    assert message.startswith("GET /api/v1/pods: the server answered 200")
    assert raised.value.status == 200

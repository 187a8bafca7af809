"""The serving layer (issue 18): certificate reload, input and connection limits, graceful shutdown, TLS, busy port."""

from __future__ import annotations

import http.client
import ipaddress
import json
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509

from desched.webhook.certs import generate
from desched.webhook.depth import too_deep
from tests.kcp.controlplane import free_ports
from tests.webhook.server import ROOT, Running, start
from tests.webhook.test_rotation import REVIEW, _replace


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    server = start(tmp_path)
    yield server
    server.stop()


def _client(running: Running, **versions: ssl.TLSVersion) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(running.ca_file))
    for name, version in versions.items():
        setattr(context, name, version)
    return context


def _post(running: Running, context: ssl.SSLContext, body: str = REVIEW) -> tuple[int, int]:
    """One request on a new connection: the status and the serial number of the certificate served."""
    connection = http.client.HTTPSConnection("127.0.0.1", running.port, context=context, timeout=10)
    try:
        connection.request("POST", "/validate", body=body, headers={"Content-Type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        der = connection.sock.getpeercert(binary_form=True) if connection.sock else None
        return answer.status, x509.load_der_x509_certificate(der).serial_number if der else 0
    finally:
        connection.close()


def _readyz(running: Running) -> tuple[int, str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{running.metrics_port}/readyz", timeout=5) as answer:
        return answer.status, answer.read().decode()


def _reload_failures(running: Running) -> float:
    found = re.search(r"^desched_webhook_certificate_reload_failures_total (\S+)$", running.metrics(), re.MULTILINE)
    assert found
    return float(found.group(1))


def test_cert_written_before_key_loses_no_request(running: Running, tmp_path: Path) -> None:
    fresh = generate(["localhost"], [ipaddress.ip_address("127.0.0.1")])
    context = _client(running)
    context.load_verify_locations(cadata=fresh.ca.decode())
    new_serial = x509.load_pem_x509_certificate(fresh.cert).serial_number
    _replace(tmp_path / "tls.crt", fresh.cert)  # the race: a new certificate with the old key
    results = []
    end = time.monotonic() + 2.5  # more than two polls with the mismatched pair
    while time.monotonic() < end:
        results.append(_post(running, context))
    _replace(tmp_path / "tls.key", fresh.key)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and results[-1][1] != new_serial:
        results.append(_post(running, context))
    assert all(status == 200 for status, _ in results), results
    assert results[-1][1] == new_serial
    assert _reload_failures(running) == 1  # the mismatched pair, counted once
    assert _readyz(running) == (200, "ok\n")  # the later change loaded


def test_mismatched_pair_keeps_the_old_certificate(running: Running, tmp_path: Path) -> None:
    context = _client(running)
    _, old_serial = _post(running, context)
    one, two = (generate(["localhost"], [ipaddress.ip_address("127.0.0.1")]) for _ in range(2))
    _replace(tmp_path / "tls.key", one.key)
    _replace(tmp_path / "tls.crt", two.cert)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _reload_failures(running) == 0:
        time.sleep(0.1)
    assert _post(running, context) == (200, old_serial)
    assert _reload_failures(running) >= 1
    status, body = _readyz(running)
    assert status == 200 and "certificate reload failed" in body and "key values mismatch" in body.lower()
    assert "certificate not reloaded" in running.log.read_text()


def test_deep_json_is_400_with_one_log_line(running: Running) -> None:
    body = '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":' + "[" * 1000 + "]" * 1000 + "}"
    assert _post(running, _client(running), body)[0] == 400
    assert _post(running, _client(running))[0] == 200
    log = running.log.read_text()
    assert "Traceback" not in log and "nests deeper than" in log


def test_too_deep_counts_arrays_and_objects_not_strings() -> None:
    assert not too_deep(json.loads('{"a": [1, {"b": "[[[[\\"[["}]}'), 3)
    assert too_deep(json.loads('{"a": [1, {"b": "x"}]}'), 2)
    assert not too_deep([[] for _ in range(10_000)], 2)
    assert too_deep(json.loads("[" * 101 + "]" * 101)) and not too_deep(json.loads("[" * 100 + "]" * 100))


def test_too_deep_walks_nothing_when_the_text_has_too_few_brackets_to_nest_that_deep() -> None:
    text = b"[" * 4 + b"]" * 4
    assert too_deep(json.loads(text), 3, text)
    assert not too_deep(json.loads(text), 3, b"[[[]]]")  # the text is believed: the value is not walked
    assert too_deep(json.loads(text), 3, b'["[[[", "]]]"]')  # brackets in strings count: the value is walked


def test_no_openapi_or_docs(running: Running) -> None:
    context = _client(running)
    for path in ("/openapi.json", "/docs", "/redoc"):
        connection = http.client.HTTPSConnection("127.0.0.1", running.port, context=context, timeout=10)
        connection.request("GET", path)
        assert connection.getresponse().status == 404, path
        connection.close()


def test_slow_clients_are_cut_off(running: Running) -> None:
    """A TCP connection that never starts TLS, and a TLS one trickling its headers, are closed within seconds."""
    silent = socket.create_connection(("127.0.0.1", running.port))
    trickling = _client(running).wrap_socket(
        socket.create_connection(("127.0.0.1", running.port)), server_hostname="127.0.0.1"
    )
    started = time.monotonic()
    closed: dict[str, float] = {}

    def watch(name: str, sock: socket.socket, trickle: bool) -> None:
        sock.settimeout(1)
        while time.monotonic() - started < 20:
            try:
                if trickle:
                    sock.sendall(b"P")
                if sock.recv(1) == b"":
                    break
            except (TimeoutError, ssl.SSLWantReadError):
                continue
            except OSError:
                break
        closed[name] = time.monotonic() - started
        sock.close()

    threads = [
        threading.Thread(target=watch, args=("silent", silent, False)),
        threading.Thread(target=watch, args=("trickling", trickling, True)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert closed["silent"] < 9 and closed["trickling"] < 9, closed


def test_tls_12_aead_only_and_13(running: Running) -> None:
    tls12 = _client(running, maximum_version=ssl.TLSVersion.TLSv1_2)
    assert _post(running, tls12)[0] == 200
    tls13 = _client(running, minimum_version=ssl.TLSVersion.TLSv1_3)
    assert _post(running, tls13)[0] == 200
    cbc = _client(running, maximum_version=ssl.TLSVersion.TLSv1_2)
    cbc.set_ciphers("ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384:ECDHE-ECDSA-AES128-SHA256")
    with pytest.raises(ssl.SSLError):
        _post(running, cbc)


def test_tls_min_version_13_refuses_12(tmp_path: Path) -> None:
    server = start(tmp_path, "--tls-min-version", "1.3")
    try:
        assert _post(server, _client(server, minimum_version=ssl.TLSVersion.TLSv1_3))[0] == 200
        with pytest.raises(ssl.SSLError):
            _post(server, _client(server, maximum_version=ssl.TLSVersion.TLSv1_2))
    finally:
        assert server.stop() == 0


def test_busy_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    server = start(tmp_path)
    try:
        ports = ["--port", str(server.port), "--metrics-port", str(free_ports(1)[0])]
        files = ["--tls-cert", str(tmp_path / "tls.crt"), "--tls-key", str(tmp_path / "tls.key")]
        done = subprocess.run(
            [sys.executable, "-m", "desched", "webhook", "--host", "127.0.0.1", *ports, *files],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop()
    errors = [line for line in done.stderr.splitlines() if not line.startswith("{")]  # the JSON log lines aside
    assert done.returncode == 2
    assert errors == [f"desched: cannot listen on 127.0.0.1:{server.port}: address already in use"], done.stderr


def test_sigterm_finishes_keep_alive_requests(running: Running) -> None:
    """Keep-alive clients: every request sent before SIGTERM is answered; the server exits 0."""
    context = _client(running)
    signalled = threading.Event()
    failures: list[str] = []
    answered = [0]
    lock = threading.Lock()

    def client() -> None:
        connection = http.client.HTTPSConnection("127.0.0.1", running.port, context=context, timeout=10)
        while True:
            before = not signalled.is_set()
            try:
                connection.request("POST", "/validate", body=REVIEW, headers={"Content-Type": "application/json"})
                answer = connection.getresponse()
                answer.read()
                ok = answer.status == 200
            except (OSError, http.client.HTTPException) as error:
                ok = False
                if before:
                    with lock:
                        failures.append(repr(error))
            if not ok or not before:
                break
            with lock:
                answered[0] += 1
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)
    signalled.set()
    running.process.send_signal(signal.SIGTERM)
    for thread in threads:
        thread.join()
    assert running.process.wait(timeout=30) == 0
    assert failures == [] and answered[0] > 50, (failures, answered)


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (Debian: apt-get install wrk)")
def test_sigterm_under_wrk_drops_no_request(running: Running, tmp_path: Path) -> None:
    """Every request the server received is answered, and wrk read every answer: the server's count of decisions
    equals wrk's count of completed requests. wrk ignores ``Connection: close``: after the last answer on each of its
    connections (sent after the signal) it writes one more request on the closed connection and counts a read error,
    so at most one per connection, and none of them reached the server."""
    script = tmp_path / "post.lua"
    body = json.dumps(REVIEW)
    script.write_text(f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = {body}\n')
    wrk = subprocess.Popen(
        ["wrk", "-t2", "-c32", "-d6s", "-s", str(script), f"https://127.0.0.1:{running.port}/validate"],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(2.5)
    running.process.send_signal(signal.SIGTERM)
    output, _ = wrk.communicate(timeout=60)
    assert running.process.wait(timeout=30) == 0
    completed = re.search(r"(\d+) requests in", output)
    assert completed is not None and "Non-2xx" not in output, output
    decided = running.log.read_text().count('"msg": "admission"')
    assert decided == int(completed.group(1)) > 100, (decided, output)
    errors = re.search(r"Socket errors: connect \d+, read (\d+), write (\d+), timeout (\d+)", output)
    if errors is not None:
        read, write, timeout = map(int, errors.groups())
        assert read <= 32 and write == 0 and timeout == 0, output


def test_answers_are_not_held_back_by_nagle(running: Running) -> None:
    """Each answer on a keep-alive connection comes at once: with Nagle's algorithm on (a listening socket that did
    not say IPPROTO_TCP), every one waited ~40 ms for the client's delayed ACK."""
    connection = http.client.HTTPSConnection("127.0.0.1", running.port, context=_client(running), timeout=10)
    try:
        times = []
        for _ in range(12):
            started = time.perf_counter()
            connection.request("POST", "/validate", body=REVIEW, headers={"Content-Type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            assert answer.status == 200
            times.append(time.perf_counter() - started)
    finally:
        connection.close()
    assert sorted(times)[len(times) // 2] < 0.02, times


def test_at_the_connection_cap_a_trickling_body_gives_way_to_a_whole_request(tmp_path: Path) -> None:
    """70 connections trickle their bodies against --max-connections 64: a request sent at once is still decided,
    long before the server would cut the tricklers at their read deadline: the trickler reading longest gives way."""
    running = start(tmp_path, "--timeout-seconds", "4", "--max-connections", "64")
    context = _client(running)
    tricklers: list[ssl.SSLSocket] = []
    try:
        for _ in range(70):
            sock = context.wrap_socket(
                socket.create_connection(("127.0.0.1", running.port)), server_hostname="127.0.0.1"
            )
            head = (
                b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            )
            sock.sendall(head + b"{")
            tricklers.append(sock)
        opened = time.monotonic()
        status, _ = _post(running, context)
        answered = time.monotonic() - opened
        assert status == 200 and answered < 3, (status, answered)  # decided, not held until the 4 s read deadline
        tricklers[0].settimeout(1)
        assert tricklers[0].recv(64).startswith(b"HTTP/1.1 408")  # the one that waited longest gave way
    finally:
        for sock in tricklers:
            sock.close()
        running.stop()

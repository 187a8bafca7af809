"""Certificate rotation under continuous load loses no request, and new handshakes get the new certificate."""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import ssl
import tempfile
import threading
import time
from pathlib import Path

from cryptography import x509

from desched.webhook.certs import generate
from tests.webhook.server import start

REVIEW = json.dumps(
    {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "rot",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "operation": "CREATE",
            "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}},
        },
    }
)


def _replace(path: Path, data: bytes) -> None:
    """Write atomically, as a Secret volume update or ``desched certs`` does."""
    handle, temporary = tempfile.mkstemp(dir=path.parent)
    with os.fdopen(handle, "wb") as stream:
        stream.write(data)
    os.replace(temporary, path)


def test_rotation_under_load_loses_no_request(tmp_path: Path) -> None:
    running = start(tmp_path)
    fresh = generate(["localhost"], [ipaddress.ip_address("127.0.0.1")])
    client = ssl.create_default_context(cafile=str(running.ca_file))
    client.load_verify_locations(cadata=fresh.ca.decode())
    new_serial = x509.load_pem_x509_certificate(fresh.cert).serial_number
    results: list[tuple[bool, int]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            connection = http.client.HTTPSConnection("127.0.0.1", running.port, context=client, timeout=10)
            try:
                connection.request("POST", "/validate", body=REVIEW, headers={"Content-Type": "application/json"})
                answer = connection.getresponse()
                ok = answer.status == 200 and json.loads(answer.read())["response"]["uid"] == "rot"
                der = connection.sock.getpeercert(binary_form=True) if connection.sock else None
                serial = x509.load_der_x509_certificate(der).serial_number if der else 0
            except (OSError, ssl.SSLError, http.client.HTTPException, ValueError):
                ok, serial = False, 0
            finally:
                connection.close()
            with lock:
                results.append((ok, serial))

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(1.5)
        _replace(tmp_path / "tls.key", fresh.key)
        _replace(tmp_path / "tls.crt", fresh.cert)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with lock:
                if sum(1 for _, serial in results if serial == new_serial) >= 20:
                    break
            time.sleep(0.1)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        assert running.stop() == 0
    failures = [result for result in results if not result[0]]
    rotated = [result for result in results if result[1] == new_serial]
    assert len(results) > 100 and failures == [], f"{len(failures)} of {len(results)} requests failed"
    assert len(rotated) >= 20, "new handshakes did not get the new certificate"
    assert "certificate reloaded" in running.log.read_text()

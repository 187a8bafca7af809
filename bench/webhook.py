"""Admission webhook latency and throughput (issue 8): 50 concurrent TLS connections on loopback.

Starts ``desched webhook`` and, as the baseline, a no-op ``/validate`` (it only parses the AdmissionReview and echoes
the uid) served by the same stack (:func:`webhook.server.run`, uvicorn, TLS 1.2+). A closed-loop load generator keeps
50 keep-alive HTTPS connections busy with a typical policy ConfigMap review (``deploy/executor/base/policy.yaml``) for
``--seconds`` per round; rounds alternate webhook / no-op (A B A B) and the medians are printed: requests per second,
p50 and p99 latency. Targets: p99 <= 20 ms and throughput >= 50% of the no-op. Run ``python bench/webhook.py``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tests.kcp.controlplane import free_ports  # noqa: E402
from tests.webhook.server import Running, start, write_certificates  # noqa: E402

NOOP = """
import json, sys
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from webhook.server import Certificate, run
app, ops = FastAPI(), FastAPI()
@app.post("/validate")
async def validate(request: Request):
    review = json.loads(await request.body())
    return JSONResponse({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                         "response": {"uid": review["request"]["uid"], "allowed": True}})
@ops.get("/readyz")
async def ready():
    return "ok"
port, metrics, cert, key = sys.argv[1:]
sys.exit(run(app, ops, "127.0.0.1", int(port), int(metrics), Certificate(cert, key)))
"""


def review_body() -> bytes:
    policy = Path(ROOT, "deploy", "executor", "base", "policy.yaml").read_text()
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "bench", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"}, "operation": "CREATE",
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "descheduler",
                   "namespace": "kube-system", "labels": {"desched.io/policy": "true"}},
                   "data": {"policy.yaml": policy}}}}).encode()


def load(port: int, ca_file: str, body: bytes, connections: int, seconds: float) -> tuple[float, float, float]:
    """(requests/s, p50 ms, p99 ms) of a closed loop over ``connections`` keep-alive connections."""
    context = ssl.create_default_context(cafile=ca_file)
    latencies: list[float] = []
    lock = threading.Lock()
    end = time.perf_counter() + seconds
    errors: list[str] = []

    def worker() -> None:
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
        mine: list[float] = []
        try:
            while time.perf_counter() < end:
                started = time.perf_counter()
                connection.request("POST", "/validate", body=body, headers={"Content-Type": "application/json"})
                answer = connection.getresponse()
                answer.read()
                if answer.status != 200:
                    errors.append(str(answer.status))
                mine.append(time.perf_counter() - started)
        except (OSError, http.client.HTTPException) as error:
            errors.append(repr(error))
        finally:
            connection.close()
            with lock:
                latencies.extend(mine)

    began = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    if errors:
        raise SystemExit(f"{len(errors)} failed requests, e.g. {errors[0]}")
    ordered = sorted(latencies)
    return len(ordered) / elapsed, ordered[len(ordered) // 2] * 1000, ordered[int(len(ordered) * 0.99)] * 1000


def start_noop(directory: Path) -> Running:
    ca = write_certificates(directory)
    port, metrics = free_ports(2)
    log = directory / "noop.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen([sys.executable, "-c", NOOP, str(port), str(metrics), str(directory / "tls.crt"),
                                    str(directory / "tls.key")], cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/readyz", timeout=1):
                return Running(process, port, metrics, ca, log)
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"the no-op server did not start: {log.read_text()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    body = review_body()
    with tempfile.TemporaryDirectory() as work:
        webhook = start(Path(work, "webhook"))
        noop = start_noop(Path(work, "noop"))
        try:
            rows: dict[str, list[tuple[float, float, float]]] = {"webhook": [], "no-op": []}
            for _ in range(args.rounds):
                for name, server in (("webhook", webhook), ("no-op", noop)):
                    rows[name].append(load(server.port, str(server.ca_file), body, args.connections, args.seconds))
        finally:
            webhook.stop()
            noop.stop()
    print(f"machine: {os.cpu_count()} CPUs; {args.connections} connections, {args.rounds} rounds of "
          f"{args.seconds:g} s, medians (load generator on the same machine)")
    print(f"{'endpoint':<10} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    medians = {}
    for name, runs in rows.items():
        medians[name] = tuple(statistics.median(run[index] for run in runs) for index in range(3))
        rate, p50, p99 = medians[name]
        print(f"{name:<10} {rate:>8.0f} {p50:>8.1f} {p99:>8.1f}")
    ratio = medians["webhook"][0] / medians["no-op"][0]
    p99 = medians["webhook"][2]
    met = p99 <= 20 and ratio >= 0.5
    print(f"webhook/no-op throughput {ratio:.2f} (target >= 0.5); webhook p99 {p99:.1f} ms (target <= 20): "
          + ("met" if met else "MISSED"))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

"""A running ``desched webhook`` process for tests and benchmarks: certificates, free ports, readiness, shutdown."""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from desched.webhook.certs import generate
from tests.kcp.controlplane import free_ports

ROOT = Path(__file__).resolve().parents[2]


def write_certificates(directory: Path) -> Path:
    """A CA and a serving certificate for 127.0.0.1/localhost in ``directory``; returns the CA file."""
    bundle = generate(["localhost"], [ipaddress.ip_address("127.0.0.1")])
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tls.key").write_bytes(bundle.key)
    (directory / "tls.crt").write_bytes(bundle.cert)
    (directory / "ca.crt").write_bytes(bundle.ca)
    return directory / "ca.crt"


class Running(NamedTuple):
    process: subprocess.Popen[bytes]
    port: int
    metrics_port: int
    ca_file: Path
    log: Path

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/validate"

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as answer:
            return str(answer.read().decode())

    def post(self, body: bytes, timeout: float = 30) -> tuple[float, dict[str, Any]]:
        """POST ``body`` to ``/validate`` on a new TLS connection: seconds to the answer, and its ``response``."""
        context = ssl.create_default_context(cafile=str(self.ca_file))
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=context)
        started = time.perf_counter()
        try:
            connection.request("POST", "/validate", body, {"Content-Type": "application/json"})
            answer = json.loads(connection.getresponse().read())
        finally:
            connection.close()
        return time.perf_counter() - started, answer["response"]

    def flood(self, bodies: list[bytes]) -> tuple[list[tuple[float, dict[str, Any]]], int]:
        """Every body posted at once (one connection each): the answers in order, and the peak RSS in bytes of the
        server's process tree while they were served (sampled every 20 ms)."""
        peak, done = [tree_rss(self.process.pid)], threading.Event()

        def sample() -> None:
            while not done.wait(0.02):
                peak.append(tree_rss(self.process.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            with ThreadPoolExecutor(len(bodies)) as senders:
                answers = list(senders.map(self.post, bodies))
        finally:
            done.set()
            sampler.join()
        return answers, max(peak)

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def tree_rss(pid: int) -> int:
    """The resident memory in bytes of process ``pid`` and all its descendants (Linux ``/proc``)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, total = [pid], 0
    while tree:
        current = tree.pop()
        tree.extend(child for child, parent in parents.items() if parent == current)
        try:
            with open(f"/proc/{current}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    return total


def policy_text(seed: int, size: int) -> str:
    """A valid, distinct policy of about ``size`` characters: the executor's policy with as many profiles as fit."""
    head, _, profile = (ROOT / "deploy" / "executor" / "base" / "policy.yaml").read_text().partition("profiles:\n")
    parts = [head.replace("maxNoOfPodsToEvictPerNode: 5", f"maxNoOfPodsToEvictPerNode: {seed + 1}"), "profiles:\n"]
    while sum(map(len, parts)) + len(profile) <= size:
        parts.append(profile.replace("name: default", f"name: p{len(parts) - 2}"))
    return "".join(parts)


def policy_review(seed: int, size: int, keys: int = 1) -> bytes:
    """An AdmissionReview creating a labelled ConfigMap of about ``size`` bytes of policies in ``keys`` data keys."""
    data = {f"policy-{key}.yaml": policy_text(seed * 1000 + key, size // keys) for key in range(keys)}
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"policy-{seed}", "namespace": "kube-system", "labels": {"desched.io/policy": "true"}},
        "data": data,
    }
    request = {"uid": f"uid-{seed}", "kind": {"kind": "ConfigMap"}, "operation": "CREATE", "object": obj}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


def start(directory: Path, *extra: str, timeout: float = 60) -> Running:
    """``desched webhook`` on free loopback ports with fresh certificates in ``directory``; ready or RuntimeError."""
    return serve(
        directory,
        "desched webhook",
        lambda port, metrics_port: [
            sys.executable,
            "-m",
            "desched",
            "webhook",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--metrics-port",
            str(metrics_port),
            "--tls-cert",
            str(directory / "tls.crt"),
            "--tls-key",
            str(directory / "tls.key"),
            *extra,
        ],
        timeout=timeout,
    )


def serve(directory: Path, name: str, command: Callable[[int, int], list[str]], timeout: float = 60) -> Running:
    """The server ``name``, run by ``command(port, metrics_port)`` on free loopback ports with fresh certificates in
    ``directory`` (``tls.crt``, ``tls.key``, ``ca.crt``), once its ``/readyz`` on the metrics port answers 200;
    RuntimeError if it exits or is not ready within ``timeout``."""
    ca_file = write_certificates(directory)
    port, metrics_port = free_ports(2)
    log = directory / "desched.webhook.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(command(port, metrics_port), cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    running = Running(process, port, metrics_port, ca_file, log)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited: {log.read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/readyz", timeout=2) as answer:
                if answer.status == 200:
                    return running
        except OSError:
            pass
        time.sleep(0.1)
    running.stop()
    raise RuntimeError(f"{name} not ready in {timeout:g}s: {log.read_text()}")

"""A running ``desched webhook`` process for tests and benchmarks: certificates, free ports, readiness, shutdown."""

from __future__ import annotations

import ipaddress
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


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

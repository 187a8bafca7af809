"""Prometheus metrics with upstream's names (semantics §9), in the text exposition format, and a server for them.

Contract: :class:`Metrics` holds ``descheduler_pods_evicted_total`` (and the deprecated ``descheduler_pods_evicted``)
with labels ``result, strategy, profile, namespace, node``, the loop and strategy duration histograms (and their
deprecated ``descheduler_descheduler_*`` twins) and ``descheduler_build_info``. :meth:`Metrics.exposition` renders them;
:func:`serve` answers ``GET /metrics`` on a plain-HTTP port in a daemon thread.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOOP_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600)
STRATEGY_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 15, 20, 25, 30, 40, 50, 100)
EVICTED_LABELS = ("result", "strategy", "profile", "namespace", "node")


def _labels(names: Sequence[str], values: Sequence[str]) -> str:
    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    pairs = ",".join(f'{name}="{escape(value)}"' for name, value in zip(names, values, strict=True))
    return "{" + pairs + "}" if pairs else ""


class _Histogram:
    def __init__(self, buckets: Sequence[float]) -> None:
        self.buckets = tuple(buckets)
        self.counts = [0] * len(self.buckets)
        self.total = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        for index, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[index] += 1
        self.total += value
        self.count += 1


class Metrics:
    """The executor's metrics (see the module contract); thread-safe."""

    def __init__(self, version: str) -> None:
        self.version = version
        self._lock = threading.Lock()
        self._evicted: dict[tuple[str, ...], int] = {}
        self._loop = _Histogram(LOOP_BUCKETS)
        self._strategy: dict[tuple[str, str], _Histogram] = {}

    def evicted(self, result: str, strategy: str, profile: str, namespace: str, node: str) -> None:
        with self._lock:
            labels = (result, strategy, profile, namespace, node)
            self._evicted[labels] = self._evicted.get(labels, 0) + 1

    def loop_duration(self, seconds: float) -> None:
        with self._lock:
            self._loop.observe(seconds)

    def strategy_duration(self, profile: str, strategy: str, seconds: float) -> None:
        with self._lock:
            self._strategy.setdefault((strategy, profile), _Histogram(STRATEGY_BUCKETS)).observe(seconds)

    def exposition(self) -> str:
        with self._lock:
            lines: list[str] = []
            for name, text in (
                ("descheduler_pods_evicted_total", "Number of evicted pods, by the result, by the strategy, by the "
                 "namespace, by the node name. 'error' result means a pod could not be evicted"),
                ("descheduler_pods_evicted", "Number of evicted pods (deprecated: use descheduler_pods_evicted_total)"),
            ):
                lines += [f"# HELP {name} {text}", f"# TYPE {name} counter"]
                lines += [f"{name}{_labels(EVICTED_LABELS, labels)} {count}"
                          for labels, count in sorted(self._evicted.items())]
            for name in ("descheduler_loop_duration_seconds", "descheduler_descheduler_loop_duration_seconds"):
                lines += [f"# HELP {name} Time taken to complete a full descheduling cycle", f"# TYPE {name} histogram"]
                lines += _histogram(name, (), (), self._loop)
            for name in ("descheduler_strategy_duration_seconds", "descheduler_descheduler_strategy_duration_seconds"):
                lines += [f"# HELP {name} Time taken to complete Each strategy of the descheduling operation",
                          f"# TYPE {name} histogram"]
                for (strategy, profile), histogram in sorted(self._strategy.items()):
                    lines += _histogram(name, ("strategy", "profile"), (strategy, profile), histogram)
            lines += ["# HELP descheduler_build_info Build info about descheduler, including Go version, Descheduler "
                      "version, Git SHA, Git branch", "# TYPE descheduler_build_info gauge",
                      "descheduler_build_info" + _labels(
                          ("AppVersion", "DeschedulerVersion", "GitBranch", "GitSha1", "GoVersion"),
                          (self.version, self.version, "", "", "")) + " 1"]
            return "\n".join(lines) + "\n"


def _histogram(name: str, names: Sequence[str], values: Sequence[str], histogram: _Histogram) -> list[str]:
    lines = [
        f"{name}_bucket{_labels((*names, 'le'), (*values, f'{bound:g}'))} {count}"
        for bound, count in zip(histogram.buckets, histogram.counts, strict=True)
    ]
    lines.append(f"{name}_bucket{_labels((*names, 'le'), (*values, '+Inf'))} {histogram.count}")
    lines.append(f"{name}_sum{_labels(names, values)} {histogram.total:g}")
    lines.append(f"{name}_count{_labels(names, values)} {histogram.count}")
    return lines


def serve(metrics: Metrics, address: str) -> ThreadingHTTPServer:
    """Serve ``GET /metrics`` on ``host:port`` (``:port`` means every interface) in a daemon thread."""
    host, _, port = address.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = metrics.exposition().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Metrics scrapes are not logged."""

    server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server

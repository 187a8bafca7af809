"""Prometheus metrics with upstream's names (docs/executor-semantics.md#9-metrics), in the text exposition format, and a
server for them.

Contract: :class:`ExecutorMetrics` holds ``descheduler_pods_evicted_total`` (and the deprecated
``descheduler_pods_evicted``) with labels ``result, strategy, profile, namespace, node``, the loop and strategy duration
histograms (and their deprecated ``descheduler_descheduler_*`` twins) and ``descheduler_build_info``.
:meth:`ExecutorMetrics.exposition` renders them; :func:`serve` answers ``GET /metrics`` on a plain-HTTP port in a daemon
thread.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from desched.prometheus import Counter, Histogram, labels

LOOP_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600)
STRATEGY_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 15, 20, 25, 30, 40, 50, 100)
EVICTED_LABELS = ("result", "strategy", "profile", "namespace", "node")


class ExecutorMetrics:
    """The executor's metrics (see the module contract); thread-safe."""

    def __init__(self, version: str) -> None:
        self.version = version
        self._evicted = Counter(
            "descheduler_pods_evicted_total",
            "Number of evicted pods, by the result, by the strategy, by the namespace, by the node name. 'error' "
            "result means a pod could not be evicted",
            EVICTED_LABELS,
        )
        self._loop = Histogram(
            "descheduler_loop_duration_seconds", "Time taken to complete a full descheduling cycle", LOOP_BUCKETS
        )
        self._strategy = Histogram(
            "descheduler_strategy_duration_seconds",
            "Time taken to complete Each strategy of the descheduling operation",
            STRATEGY_BUCKETS,
            ("strategy", "profile"),
        )

    def evicted(self, result: str, strategy: str, profile: str, namespace: str, node: str) -> None:
        self._evicted.inc(result, strategy, profile, namespace, node)

    def loop_duration(self, seconds: float) -> None:
        self._loop.observe(seconds)

    def strategy_duration(self, profile: str, strategy: str, seconds: float) -> None:
        self._strategy.observe(seconds, strategy, profile)

    def exposition(self) -> str:
        lines = [
            *self._evicted.render(),
            *self._evicted.render("descheduler_pods_evicted"),
            *self._loop.render(),
            *self._loop.render("descheduler_descheduler_loop_duration_seconds"),
            *self._strategy.render(),
            *self._strategy.render("descheduler_descheduler_strategy_duration_seconds"),
            "# HELP descheduler_build_info Build info about descheduler, including Go version, Descheduler "
            "version, Git SHA, Git branch",
            "# TYPE descheduler_build_info gauge",
            "descheduler_build_info"
            + labels(
                ("AppVersion", "DeschedulerVersion", "GitBranch", "GitSha1", "GoVersion"),
                (self.version, self.version, "", "", ""),
            )
            + " 1",
        ]
        return "\n".join(lines) + "\n"


def serve(metrics: ExecutorMetrics, address: str) -> ThreadingHTTPServer:
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
            """ExecutorMetrics scrapes are not logged."""

    server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server

"""``desched webhook``: the validating admission webhook (see :mod:`desched.webhook.review` for what it decides).

``desched webhook --host 127.0.0.1 --port 8443 --tls-cert CERT --tls-key KEY [--metrics-port 9090]
[--mode enforce|warn] [--tls-min-version 1.2|1.3] [--max-connections N] [--policy-configmap NAMESPACE/NAME]
[--deny RULES] [--kubeconfig PATH] [--context NAME]``

Exit codes: 0 after a graceful shutdown (SIGTERM/SIGINT); 2 usage error, unreadable certificate, a port that cannot
be bound (in use) or unreachable cluster at start.
"""

from __future__ import annotations

import argparse
import logging
import ssl
import sys
import threading
from typing import TYPE_CHECKING, Any

from desched.errors import UsageError
from desched.runtime.tls import TLS_VERSIONS

if TYPE_CHECKING:
    from desched.linter.engine import Settings
    from desched.webhook.state import ClusterCache


# The policy limits and the worker pool (docs/webhook.md#bounded-work-per-request): flag, default, help.
LIMIT_FLAGS = (
    ("--max-policy-bytes", 256 * 1024, "a policy text (ConfigMap key) or object over it is refused unparsed"),
    ("--max-documents", 64, "YAML documents per policy text"),
    ("--max-profiles", 256, "profiles per policy"),
    ("--max-nodes", 100_000, "YAML nodes per policy text, estimated before parsing"),
    ("--workers", 2, "worker processes deciding the policies too large for the event loop"),
    ("--queue", 4, "policy decisions waiting for a worker; more are answered 'webhook busy' at once"),
)


class WebhookCommand:
    extra = "webhook"
    help = "serve the validating admission webhook (POST /validate over HTTPS)"
    description = (
        "Check DeschedulerPolicy ConfigMaps, KubeDescheduler resources and workloads at kubectl-apply time with the "
        "same rules as desched lint. Health, readiness and Prometheus metrics are served on --metrics-port."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default: %(default)s)")
        parser.add_argument("--port", type=int, default=8443, help="HTTPS port (default: %(default)s)")
        parser.add_argument(
            "--tls-cert", required=True, metavar="CERT", help="serving certificate (PEM), reloaded when it changes"
        )
        parser.add_argument("--tls-key", required=True, metavar="KEY", help="its private key (PEM)")
        parser.add_argument(
            "--metrics-port",
            type=int,
            default=9090,
            help="plain-HTTP port for /healthz, /readyz and /metrics (default: %(default)s)",
        )
        parser.add_argument(
            "--mode",
            choices=("enforce", "warn"),
            default="enforce",
            help="enforce: errors deny; warn: never deny (default: %(default)s)",
        )
        parser.add_argument(
            "--policy-configmap",
            metavar="NAMESPACE/NAME",
            help="the descheduler's active policy "
            "ConfigMap; enables the workload checks (watched, with a cache of workloads and PDBs)",
        )
        parser.add_argument(
            "--deny",
            default="",
            metavar="RULES",
            help="workload rules that deny instead of warn (comma-separated, e.g. DS401,DS402,DS601)",
        )
        parser.add_argument(
            "--kubeconfig",
            metavar="PATH",
            help="for the cache (default: in-cluster, else KUBECONFIG or ~/.kube/config)",
        )
        parser.add_argument("--context", metavar="NAME", help="kubeconfig context")
        parser.add_argument(
            "--timeout-seconds",
            type=float,
            default=2.5,
            help="time budget per request, below the webhook's timeoutSeconds (default: %(default)s)",
        )
        parser.add_argument(
            "--max-body-bytes", type=int, default=3 * 2**20, help="larger bodies get 413 (default: %(default)s)"
        )
        parser.add_argument(
            "--max-concurrency", type=int, default=64, help="decisions running at once (default: %(default)s)"
        )
        for flag, default, what in LIMIT_FLAGS:
            parser.add_argument(flag, type=int, default=default, help=f"{what} (default: %(default)s)")
        parser.add_argument(
            "--max-connections",
            type=int,
            default=512,
            help="open connections per port beyond which requests get 503 (default: %(default)s)",
        )
        parser.add_argument(
            "--read-timeout",
            type=float,
            metavar="SECONDS",
            help="a request's headers and body must arrive within it, else 408 and the connection closes "
            "(default and at most: --timeout-seconds)",
        )
        parser.add_argument(
            "--max-reading-connections",
            type=int,
            default=128,
            help="connections still reading a request; one more closes the oldest with 408 (default: %(default)s)",
        )
        parser.add_argument(
            "--tls-min-version",
            choices=tuple(TLS_VERSIONS),
            default="1.2",
            help="oldest TLS version accepted; 1.2 only with ECDHE and AES-GCM or ChaCha20 (default: %(default)s)",
        )
        parser.add_argument("--target-version", metavar="v0.NN", help="descheduler release the policies run on")
        parser.add_argument(
            "--stage-times",
            action="store_true",
            help="count the CPU time of each stage of answering /validate in /metrics (for benchmarks)",
        )
        parser.epilog = (
            "Exit codes: 0 after SIGTERM/SIGINT; 2 usage error, unreadable certificate, port in use, cluster."
        )

    def run(self, args: argparse.Namespace) -> int:
        from desched import versions
        from desched.linter.engine import Settings
        from desched.webhook.app import JsonFormatter, Reviewer, create_app, create_ops_app
        from desched.webhook.decision import Options
        from desched.webhook.limits import PolicyLimits
        from desched.webhook.server import Certificate, Gate, run
        from desched.webhook.workloads import WORKLOAD_RULES

        logger = _json_logging(JsonFormatter())
        try:
            target = versions.parse(args.target_version) if args.target_version else None
        except ValueError as error:
            raise UsageError(str(error)) from None
        if args.timeout_seconds <= 0 or (args.read_timeout is not None and args.read_timeout <= 0):
            raise UsageError("--timeout-seconds and --read-timeout must be positive")
        if args.max_reading_connections < 1:
            raise UsageError("--max-reading-connections must be at least 1")
        read_timeout = min(args.read_timeout or args.timeout_seconds, args.timeout_seconds)
        deny = frozenset(rule.strip().upper() for rule in args.deny.split(",") if rule.strip())
        unknown = deny - set(WORKLOAD_RULES)
        if unknown:
            raise UsageError(f"--deny accepts {', '.join(WORKLOAD_RULES)}, not {', '.join(sorted(unknown))}")
        settings = Settings(target=target)
        cache = None
        if args.policy_configmap:
            cache = _cache(args, settings)
        try:
            reviewer = Reviewer(
                Options(args.mode, deny, settings),
                cache,
                args.timeout_seconds,
                args.max_concurrency,
                args.max_body_bytes,
                PolicyLimits(args.max_policy_bytes, args.max_documents, args.max_profiles, args.max_nodes),
                args.workers,
                args.queue,
                args.stage_times,
            )
            reviewer.pool.start()  # the workers import while the server starts, not during the first large policy
            try:
                certificate = Certificate(
                    args.tls_cert, args.tls_key, reviewer.metrics.reload_failures, TLS_VERSIONS[args.tls_min_version]
                )
            except (OSError, ssl.SSLError) as error:
                raise UsageError(f"cannot load the TLS certificate {args.tls_cert} / {args.tls_key}: {error}") from None

            def ready() -> bool:
                return cache is None or cache.synced()

            def detail() -> str:
                failure = certificate.failure
                return f"certificate reload failed, the previous certificate serves: {failure}\n" if failure else ""

            logger.info(
                "serving",
                extra={
                    "event": {
                        "port": args.port,
                        "metricsPort": args.metrics_port,
                        "mode": args.mode,
                        "policy": args.policy_configmap,
                        "tlsMinVersion": args.tls_min_version,
                    }
                },
            )
            return run(
                create_app(reviewer),
                create_ops_app(reviewer, ready, detail),
                args.host,
                args.port,
                args.metrics_port,
                certificate,
                max_connections=args.max_connections,
                gate=Gate(
                    read_timeout,
                    args.max_reading_connections,
                    args.max_body_bytes,
                    reviewer.refused,
                ),
            )
        finally:
            if cache is not None:
                cache.stop()


def _json_logging(formatter: logging.Formatter) -> logging.Logger:
    """Every record of the process (desched, uvicorn, asyncio, uncaught exceptions of any thread) as one JSON line on
    stderr; the webhook's own logger at INFO, the others at WARNING. Returns the webhook's logger."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "asyncio"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logger = logging.getLogger("desched.webhook")
    logger.handlers[:] = []
    logger.setLevel(logging.INFO)
    logger.propagate = True
    # The JSON lines carry no thread, process or source location: records skip collecting them (the logging
    # HOWTO's "Optimization"), which makes the per-request line about a fifth cheaper.
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    logging._srcfile = None

    def uncaught(kind: type[BaseException], error: BaseException, trace: Any) -> None:
        logger.critical("uncaught exception", exc_info=(kind, error, trace))

    sys.excepthook = uncaught
    threading.excepthook = lambda hook: uncaught(hook.exc_type, hook.exc_value or hook.exc_type(), hook.exc_traceback)
    return logger


def _cache(args: argparse.Namespace, settings: Settings) -> ClusterCache:
    from desched.errors import KubeError
    from desched.runtime.kube import KubeClient
    from desched.webhook.state import ClusterCache

    namespace, _, name = args.policy_configmap.partition("/")
    if not namespace or not name:
        raise UsageError("--policy-configmap must be NAMESPACE/NAME")
    try:
        kube = KubeClient.connect(args.kubeconfig, args.context)
    except KubeError as error:
        raise UsageError(str(error)) from None
    cache = ClusterCache(kube, (namespace, name), settings)
    cache.start()
    return cache


WEBHOOK = WebhookCommand()

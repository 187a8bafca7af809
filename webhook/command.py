"""``desched webhook``: the validating admission webhook (see :mod:`desched.webhook.review` for what it decides).

``desched webhook --host 127.0.0.1 --port 8443 --tls-cert CERT --tls-key KEY [--metrics-port 9090]
[--mode enforce|warn] [--policy-configmap NAMESPACE/NAME] [--deny RULES] [--kubeconfig PATH] [--context NAME]``

Exit codes: 0 after a graceful shutdown (SIGTERM/SIGINT); 2 usage error, unreadable certificate or unreachable
cluster at start.
"""

from __future__ import annotations

import argparse
import logging
import ssl
import sys
from typing import TYPE_CHECKING

from desched.errors import UsageError

if TYPE_CHECKING:
    from desched.linter.engine import Settings
    from desched.webhook.state import ClusterCache


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
            help="workload rules that deny instead of warn (comma-separated, e.g. DS401,DS402)",
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
        parser.add_argument("--target-version", metavar="v0.NN", help="descheduler release the policies run on")
        parser.epilog = "Exit codes: 0 after SIGTERM/SIGINT; 2 usage error, unreadable certificate or cluster."

    def run(self, args: argparse.Namespace) -> int:
        from desched import versions
        from desched.linter.engine import Settings
        from desched.webhook.app import JsonFormatter, Reviewer, create_app, create_ops_app
        from desched.webhook.decision import Options
        from desched.webhook.server import Certificate, run
        from desched.webhook.workloads import WORKLOAD_RULES

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        logger = logging.getLogger("desched.webhook")
        logger.handlers[:] = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False
        # The JSON lines carry no thread, process or source location: records skip collecting them (the logging
        # HOWTO's "Optimization"), which makes the per-request line about a fifth cheaper.
        logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
        logging._srcfile = None
        try:
            target = versions.parse(args.target_version) if args.target_version else None
        except ValueError as error:
            raise UsageError(str(error)) from None
        deny = frozenset(rule.strip().upper() for rule in args.deny.split(",") if rule.strip())
        unknown = deny - set(WORKLOAD_RULES)
        if unknown:
            raise UsageError(f"--deny accepts {', '.join(WORKLOAD_RULES)}, not {', '.join(sorted(unknown))}")
        try:
            certificate = Certificate(args.tls_cert, args.tls_key)
        except (OSError, ssl.SSLError) as error:
            raise UsageError(f"cannot load the TLS certificate {args.tls_cert} / {args.tls_key}: {error}") from None
        settings = Settings(target=target)
        cache = None
        if args.policy_configmap:
            cache = _cache(args, settings)
        reviewer = Reviewer(
            Options(args.mode, deny, settings), cache, args.timeout_seconds, args.max_concurrency, args.max_body_bytes
        )

        def ready() -> bool:
            return certificate.loaded and (cache is None or cache.synced())

        logger.info(
            "serving",
            extra={
                "event": {
                    "port": args.port,
                    "metricsPort": args.metrics_port,
                    "mode": args.mode,
                    "policy": args.policy_configmap,
                }
            },
        )
        try:
            return run(
                create_app(reviewer),
                create_ops_app(reviewer, ready),
                args.host,
                args.port,
                args.metrics_port,
                certificate,
            )
        finally:
            if cache is not None:
                cache.stop()


def _cache(args: argparse.Namespace, settings: Settings) -> ClusterCache:
    from desched.errors import KubeError
    from desched.kube import KubeClient
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

"""``desched run``: the engine against a live cluster.

Contract: each cycle lists Nodes, Pods, Namespaces, PriorityClasses, PVCs and PodDisruptionBudgets (``policy/v1``, else
``policy/v1beta1``) and runs :func:`desched.executor.framework.run_cycle` on them. Without ``--dry-run`` an eviction is
a POST to the pod's ``eviction`` subresource whose body has no ``apiVersion`` (every server version accepts it), with
upstream's annotations and the policy's ``gracePeriodSeconds``; a refusal (429 from a PDB, 404, anything else) is
recorded for that pod and the cycle goes on. A successful eviction emits an ``events.k8s.io/v1`` Event on the pod like
upstream (reason: the plugin; action ``Descheduled``); with ``evictionFailureEventNotification`` a failed one emits a
Warning ``EvictionFailed``. ``--dry-run`` sends no mutating request at all. Metrics use upstream's names
(:mod:`desched.executor.metrics`). ``--interval`` repeats cycles until SIGTERM/SIGINT (finishing the current cycle);
without it one cycle runs. A summary (text or JSON, as ``simulate``) is printed after each cycle.

Exit codes: 0 every cycle ran; 2 usage error, a policy with lint errors, or a cluster that cannot be reached or
listed (RBAC) - nothing is evicted then.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any

from desched import __version__
from desched.errors import KubeError, UsageError
from desched.executor.cluster import Cluster, Json, key, node_of
from desched.executor.command import load_policy, render_text, report
from desched.executor.defaultevictor import UnrunnablePolicy
from desched.executor.evictions import Limits, Outcome, PodEvictor
from desched.executor.framework import prepare_policy, run_cycle
from desched.executor.metrics import ExecutorMetrics, serve
from desched.goduration import parse_duration
from desched.kube import KubeClient
from desched.policy.model import Policy

EXIT_OK, EXIT_ERROR = 0, 2
REQUESTED_BY = "sigs.k8s.io/descheduler"
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Node", ("v1",)),
    ("Namespace", ("v1",)),
    ("PriorityClass", ("scheduling.k8s.io/v1",)),
    ("PersistentVolumeClaim", ("v1",)),
    ("PodDisruptionBudget", ("policy/v1", "policy/v1beta1")),
    ("Pod", ("v1",)),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--policy",
        required=True,
        metavar="POLICY",
        help="policy file (raw, ConfigMap, chart values, v1alpha1 or KubeDescheduler)",
    )
    parser.add_argument("--dry-run", action="store_true", help="decide and report, but evict nothing")
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="kubeconfig (default: in-cluster service account when "
        "running in a pod, else KUBECONFIG or ~/.kube/config)",
    )
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current)")
    parser.add_argument(
        "--interval", metavar="DURATION", help="run a cycle every DURATION (5m, 1h) until SIGTERM; default: one cycle"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="per-cycle summary format")
    parser.add_argument(
        "--metrics-bind-address",
        default="",
        metavar="HOST:PORT",
        help="serve Prometheus metrics on plain HTTP at HOST:PORT (default: off)",
    )
    parser.add_argument("--target-version", metavar="v0.NN", help="descheduler release the policy runs on")
    parser.epilog = "Exit codes: 0 every cycle ran; 2 usage error, a policy with lint errors or an unreachable cluster."


def connect(kubeconfig: str | None, context: str | None) -> KubeClient:
    """The cluster connection; a configuration problem is a usage error (exit 2)."""
    try:
        return KubeClient.connect(kubeconfig, context)
    except KubeError as error:
        raise UsageError(str(error)) from None


def list_cluster(kube: KubeClient) -> list[Json]:
    """Every object a cycle needs; KubeError when one kind cannot be listed (the cycle must not run half-blind)."""
    objects: list[Json] = []
    for kind, versions in KINDS:
        resource = kube.find(kind, versions)
        if resource is None:
            raise KubeError(f"the server serves no {kind} (tried {', '.join(versions)})")
        objects.extend(kube.list(resource))
    return objects


class Evictions:
    """Evictions and Events through the API (see the module contract)."""

    def __init__(self, kube: KubeClient, policy: Policy) -> None:
        self.kube = kube
        self.grace = policy.grace_period_seconds
        self.notify_failures = policy.eviction_failure_event_notification

    def evict(self, pod: Json, profile: str, plugin: str) -> tuple[int | None, str] | None:
        namespace, name = key(pod)
        body: Json = {
            "metadata": {
                "name": name,
                "namespace": namespace,
                "annotations": {"reason": f"triggered by {profile}/{plugin}: ", "requested-by": REQUESTED_BY},
            }
        }
        if self.grace is not None:
            body["deleteOptions"] = {"gracePeriodSeconds": self.grace}
        try:
            self.kube.request("POST", f"/api/v1/namespaces/{namespace}/pods/{name}/eviction", body=body)
        except KubeError as error:
            if self.notify_failures:
                self._event(
                    pod,
                    "Warning",
                    "EvictionFailed",
                    f"pod eviction from {node_of(pod)} node by {REQUESTED_BY} failed: {error}",
                )
            message = str(error) + (" (ignoring)" if error.status == 429 else "")
            return error.status, message
        self._event(pod, "Normal", plugin or "NotSet", f"pod eviction from {node_of(pod)} node by {REQUESTED_BY}")
        return None

    def _event(self, pod: Json, kind: str, reason: str, note: str) -> None:
        namespace, name = key(pod)
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        event = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{name}.{time.time_ns():x}", "namespace": namespace},  # as client-go names it
            "eventTime": now,
            "reportingController": REQUESTED_BY,
            "reportingInstance": f"desched-{os.getpid()}",
            "action": "Descheduled",
            "reason": reason,
            "note": note,
            "type": kind,
            "regarding": {
                "apiVersion": "v1",
                "kind": "Pod",
                "namespace": namespace,
                "name": name,
                "uid": (pod.get("metadata") or {}).get("uid"),
            },
        }
        try:
            self.kube.request("POST", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", body=event)
        except KubeError as error:
            print(f"desched: warning: cannot record an event on {namespace}/{name}: {error}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    policy = load_policy(args.policy, args.target_version)
    try:
        interval = parse_duration(args.interval) / 1e9 if args.interval else None
    except ValueError as error:
        raise UsageError(f"--interval: {error}") from None
    if interval is not None and interval <= 0:
        raise UsageError("--interval must be positive")
    try:
        prepared = prepare_policy(policy)
    except UnrunnablePolicy as error:
        raise UsageError(str(error)) from None
    kube = connect(args.kubeconfig, args.context)
    metrics = ExecutorMetrics(__version__)
    server = serve(metrics, args.metrics_bind_address) if args.metrics_bind_address else None
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while True:
            _cycle(kube, prepared, args, metrics)
            if interval is None or stop.wait(interval):
                return EXIT_OK
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if server is not None:
            server.shutdown()


def _cycle(kube: KubeClient, policy: Policy, args: argparse.Namespace, metrics: ExecutorMetrics) -> None:
    started = time.perf_counter()
    try:
        cluster = Cluster.from_objects(list_cluster(kube))
    except KubeError as error:
        raise UsageError(f"cannot list the cluster: {error}") from None
    backend = None if args.dry_run else Evictions(kube, policy)
    evictor = PodEvictor(cluster, Limits.from_policy(policy), backend)

    def count(outcome: Outcome, pod: Json, profile: str, plugin: str) -> None:
        metrics.evicted(outcome.value, plugin, profile, key(pod)[0], node_of(pod))

    evictor.listeners.append(count)
    try:
        result = run_cycle(
            policy,
            cluster,
            datetime.now(timezone.utc),
            evictor,
            observe=lambda profile, plugin, seconds: metrics.strategy_duration(profile, plugin, seconds),
        )
    except UnrunnablePolicy as error:
        raise UsageError(str(error)) from None
    metrics.loop_duration(time.perf_counter() - started)
    document: dict[str, Any] = report(result, evictor.evictions, explain=False)
    document["failures"] = [failure._asdict() for failure in evictor.failures]
    document["summary"]["dryRun"] = bool(args.dry_run)
    if args.format == "json":
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(document, result.errors, evictor.failures))
    sys.stdout.flush()
    for problem in result.errors:
        print(f"desched: warning: {problem}", file=sys.stderr)

"""``desched run``: the engine against a live cluster.

Contract: each cycle lists what ``desched run``'s declaration lists (:data:`desched.deployment.access.DESCHED_RUN`:
Nodes, Namespaces, PriorityClasses, PVCs, PodDisruptionBudgets at ``policy/v1``, else ``policy/v1beta1``, and Pods) and
runs :func:`desched.executor.framework.run_cycle` on them. Without ``--dry-run`` an eviction is
a POST to the pod's ``eviction`` subresource whose body has no ``apiVersion`` (every server version accepts it), with
upstream's annotations and the policy's ``gracePeriodSeconds``. A 5xx, a timeout or a connection that could not be
made is retried (3 attempts, jittered backoff: :mod:`desched.executor.resilience`); a failure is then recorded for that
pod with its outcome (refused: 429 from a PDB; gone: 404; error; unknown: a timeout or 5xx after sending, which counts
toward the limits like an eviction) and the cycle goes on. For the rest of the cycle an evicted pod is what upstream's
informer shows (:class:`~desched.executor.evictions.SameCycle`): terminating and still listed, or, with
``--dry-run``, gone as in upstream's dry-run sandbox. A successful eviction emits an ``events.k8s.io/v1`` Event
on the pod like upstream (reason: the plugin; action ``Descheduled``); with ``evictionFailureEventNotification`` a
failed one emits a Warning ``EvictionFailed``. ``--dry-run`` sends no mutating request at all. Metrics use upstream's
names and, with ``--metrics-bind-address``, are served over HTTPS (:mod:`desched.executor.metrics`). Each API request
is bounded by ``--request-timeout`` (30s) and each cycle by ``--cycle-timeout`` (10m): past it the cycle stops
evicting, reports what it did and counts as failed. A server's ``Retry-After`` (429, 503) is waited for at most
``--request-timeout`` per request and never past the cycle's deadline (:mod:`desched.runtime.kube`); a warning says
when the server asked for longer. A summary (text or JSON, as ``simulate``, with
``failures[].outcome``, ``summary.failed`` and ``summary.halted``) is printed after each cycle.

Without ``--interval`` one cycle runs; a transient failure to list the cluster (a 5xx, a timeout, a refused connection)
is retried within ``--cycle-timeout`` (:func:`~desched.executor.resilience.list_with_retries`). The API server's
release (``GET /version``) decides how the PDB check matches budgets (:mod:`desched.executor.budgets`), as it does
for the live Eviction API. ``--interval`` repeats cycles, each ``interval`` after the last one started,
until SIGTERM/SIGINT: a failed cycle (the cluster could not be listed, or the deadline passed) is logged, counted in
``desched_cycle_failures_total`` and followed by the next one (after a failed listing sooner: 1 s, 2 s, 4 s, ... never
longer than the interval). SIGTERM/SIGINT stop evicting at once (a request already sent completes, bounded by
``--request-timeout``) and end the run with exit 0. ``--leader-elect`` (:mod:`desched.executor.leaderelection`) runs
cycles only while this process holds the Lease; when leadership is lost it stops evicting at once and exits 1, like
upstream's process ends; SIGTERM releases the Lease.

Exit codes: 0 every eviction was carried out, refused by a PDB or found its pod gone (and always after SIGTERM in
``--interval`` mode); 1 some eviction failed otherwise (unknown outcomes included), the cycle ran past
``--cycle-timeout``, or leadership was lost; 2 usage error, a policy with lint errors, or (one cycle) a cluster that
cannot be reached or listed before the cycle's deadline - nothing is evicted then.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from functools import partial
from typing import Any, NamedTuple

from desched.deployment.access import DESCHED_RUN
from desched.errors import KubeError, UsageError
from desched.executor.cluster import Cluster, Json, bulk_load, key, node_of, server_version
from desched.executor.defaultevictor import UnrunnablePolicy
from desched.executor.evictions import (
    BackendError,
    CycleHalted,
    EvictionFailure,
    Failure,
    Limits,
    Outcome,
    PodEvictor,
    SameCycle,
)
from desched.executor.framework import CycleResult, prepare_policy, run_cycle
from desched.executor.leaderelection import LeaderElector, identity, lease_config
from desched.executor.leaderelection import add_arguments as add_leader_election_arguments
from desched.executor.load import load_policy
from desched.executor.metrics import ExecutorMetrics, add_serving_arguments, start_server
from desched.executor.releases import NEWEST_DECISIONS, ReleaseDecisions
from desched.executor.report import render_text, report
from desched.executor.resilience import (
    DEADLINE,
    EXIT_FAILED,
    CycleGuard,
    evict_with_retries,
    exit_status,
    list_with_retries,
    next_wait,
    seconds,
    sleep,
)
from desched.policy.model import Policy
from desched.runtime import jsontext
from desched.runtime.kube import KubeClient
from desched.version import __version__

EXIT_OK, EXIT_ERROR = 0, 2  # and EXIT_FAILED (1): desched.executor.resilience
REQUESTED_BY = "sigs.k8s.io/descheduler"
#: The API versions ``desched run`` reads each API group at, in order of preference (``policy/v1beta1``:
#: PodDisruptionBudgets on servers before Kubernetes 1.21).
VERSIONS = {"": ("v1",), "scheduling.k8s.io": ("scheduling.k8s.io/v1",), "policy": ("policy/v1", "policy/v1beta1")}
#: What each cycle lists, in order: the resources ``desched run``'s declaration lists
#: (:data:`desched.deployment.access.DESCHED_RUN`), with the versions to read them at.
LISTED = tuple((need.resource, VERSIONS[need.group]) for need in DESCHED_RUN if "list" in need.verbs)


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
        "--cycle-timeout",
        default="10m",
        metavar="DURATION",
        help="stop evicting when a cycle runs longer; the cycle counts as failed (default: 10m)",
    )
    parser.add_argument(
        "--request-timeout",
        default="30s",
        metavar="DURATION",
        help="bound of each API request attempt (default: 30s)",
    )
    add_serving_arguments(parser)
    add_leader_election_arguments(parser)
    parser.add_argument("--target-version", metavar="v0.NN", help="descheduler release the policy runs on")
    parser.epilog = (
        "Exit codes: 0 every eviction was carried out, refused by a PodDisruptionBudget (429) or found its pod gone "
        "(404), and always after SIGTERM with --interval; 1 some eviction failed otherwise (an unknown outcome after "
        "a timeout or 5xx included), a cycle ran past --cycle-timeout, or leadership was lost; 2 usage error, a "
        "policy with lint errors, or (one cycle) a cluster that cannot be reached or listed."
    )


def connect(kubeconfig: str | None, context: str | None, timeout: float = 30) -> KubeClient:
    """The cluster connection; a configuration problem is a usage error (exit 2)."""
    try:
        return KubeClient.connect(kubeconfig, context, timeout, warn=_warn)
    except KubeError as error:
        raise UsageError(str(error)) from None


def list_cluster(kube: KubeClient, checkpoint: Callable[[], None] = lambda: None) -> list[Json]:
    """Every object a cycle needs; KubeError when one kind cannot be listed (the cycle must not run half-blind).
    ``checkpoint`` runs before each kind (it may raise :class:`CycleHalted`)."""
    objects: list[Json] = []
    for name, versions in LISTED:
        checkpoint()
        resource = kube.find(name, versions)
        if resource is None:
            raise KubeError(f"the server serves no {name} (tried {', '.join(versions)})")
        objects.extend(kube.list(resource))
    return objects


class Evictions:
    """Evictions and Events through the API (see the module contract)."""

    def __init__(self, kube: KubeClient, policy: Policy, pause: Callable[[float], bool] = sleep) -> None:
        self.kube = kube
        self.grace = policy.grace_period_seconds
        self.notify_failures = policy.eviction_failure_event_notification
        self.pause = pause  # between attempts: CycleGuard.pause ends the retries when the cycle must stop

    def evict(self, pod: Json, profile: str, plugin: str) -> BackendError | None:
        """Evict ``pod``, retrying a 5xx or a timeout (:func:`desched.executor.resilience.evict_with_retries`)."""
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
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
        error = evict_with_retries(lambda: self.kube.request("POST", path, body=body), self.pause, random.random)
        if error is None:
            self._event(pod, "Normal", plugin or "NotSet", f"pod eviction from {node_of(pod)} node by {REQUESTED_BY}")
        elif self.notify_failures:
            self._event(
                pod,
                "Warning",
                "EvictionFailed",
                f"pod eviction from {node_of(pod)} node by {REQUESTED_BY} failed: {error.message}",
            )
        return error

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


class Driver(NamedTuple):
    """What the cycles of one ``desched run`` share."""

    kube: KubeClient
    policy: Policy
    args: argparse.Namespace
    metrics: ExecutorMetrics
    stop: threading.Event  # set by SIGTERM/SIGINT and when leadership is lost
    cycle_timeout: float
    elector: LeaderElector | None
    server: tuple[int, int, int] | None = None  # the API server's release (GET /version), for the PDB check
    release: ReleaseDecisions = NEWEST_DECISIONS  # the descheduler release whose decisions the cycles make


class CycleDone(NamedTuple):
    """What one cycle came to: whether listing the cluster failed, the failed evictions, why it stopped early."""

    list_failed: bool
    failures: list[EvictionFailure]
    halted: str | None


HALTED = CycleResult(False, 0, [], [], {})  # what a report shows of the plugins of a cycle that stopped early


def run(args: argparse.Namespace) -> int:
    """``desched run`` (see the module contract for the loop and the exit codes)."""
    policy, release = load_policy(args.policy, args.target_version)
    interval = seconds("--interval", args.interval) if args.interval else None
    cycle_timeout = seconds("--cycle-timeout", args.cycle_timeout)
    request_timeout = seconds("--request-timeout", args.request_timeout)
    lease = None
    if args.leader_elect and interval is None:
        raise UsageError("--leader-elect must be used with --interval")  # upstream's rule
    if args.leader_elect and args.dry_run:
        print("desched: warning: --dry-run: leader election is not used (as upstream)", file=sys.stderr)
    elif args.leader_elect:
        lease = lease_config(args)
    try:
        prepared = prepare_policy(policy)
    except UnrunnablePolicy as error:
        raise UsageError(str(error)) from None
    kube = connect(args.kubeconfig, args.context, request_timeout)
    metrics = ExecutorMetrics(__version__)
    server = start_server(metrics, args)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    elector = LeaderElector(kube, lease, identity(), on_lost=stop.set) if lease is not None else None
    try:
        if elector is not None and not elector.acquire(stop):
            return EXIT_OK  # stopped while waiting for the Lease
        driver = Driver(kube, prepared, args, metrics, stop, cycle_timeout, elector, _server_version(kube), release)
        return _loop(driver, interval)
    finally:
        if elector is not None:
            elector.release()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if server is not None:
            server.shutdown()
            server.server_close()


def _server_version(kube: KubeClient) -> tuple[int, int, int] | None:
    """The API server's release (``GET /version``), which decides how the Eviction API matches PDBs; ``None`` when
    it does not say (the newest release's behaviour is then assumed, as ``simulate`` does without one)."""
    try:
        return server_version(kube.request("GET", "/version").get("gitVersion"))
    except KubeError:
        return None


def _warn(message: str) -> None:
    print(f"desched: warning: {message}", file=sys.stderr)


def _loop(driver: Driver, interval: float | None) -> int:
    """One cycle, or cycles every ``interval`` seconds until ``driver.stop`` (see the module contract)."""
    list_failures = 0
    built = False  # a cycle built the profiles: a real run's informer keeps their indexers (a dry run lists anew)
    while True:
        started = time.monotonic()
        done = _cycle(driver, built and not driver.args.dry_run)
        built = built or not done.list_failed
        if interval is None:
            return EXIT_ERROR if done.list_failed else exit_status(done.failures, done.halted)
        list_failures = list_failures + 1 if done.list_failed else 0
        if driver.stop.wait(next_wait(interval, time.monotonic() - started, list_failures)):
            break
    return EXIT_FAILED if driver.elector is not None and driver.elector.lost.is_set() else EXIT_OK


def _cycle(driver: Driver, indexed: bool = False) -> CycleDone:
    """List the cluster and run one cycle on it, then print its summary; a failed listing, the cycle deadline and a
    stop are reported here and never raised. ``indexed``: earlier cycles of this process built the profiles
    (:func:`desched.executor.releases.skipped_profiles`)."""
    started = time.perf_counter()
    metrics, args = driver.metrics, driver.args
    guard = CycleGuard(driver.stop, driver.cycle_timeout, driver.elector.leading if driver.elector else None)
    kube = driver.kube.within(guard.deadline)  # no wait for a server's Retry-After past the cycle's deadline
    evictor: PodEvictor | None = None
    result = HALTED
    try:
        with bulk_load():
            listing = partial(list_cluster, kube, guard.check)
            if driver.args.interval is None:  # one cycle: retry within the deadline (the loop retries itself)
                listing = partial(list_with_retries, listing, guard, _warn)
            cluster = Cluster.from_objects(listing())
            cluster.server = driver.server
        backend = None if args.dry_run else Evictions(kube, driver.policy, guard.pause)
        evictor = PodEvictor(
            cluster,
            Limits.from_policy(driver.policy),
            backend,
            guard.check,
            SameCycle.DRY_RUN if args.dry_run else SameCycle.REAL,
            driver.policy.grace_period_seconds,
            lists_budgets=True,
        )

        def count(outcome: Outcome, pod: Json, profile: str, plugin: str) -> None:
            metrics.evicted(outcome.value, plugin, profile, key(pod)[0], node_of(pod))

        evictor.listeners.append(count)
        result = run_cycle(
            driver.policy,
            cluster,
            datetime.now(timezone.utc),
            evictor,
            observe=lambda profile, plugin, seconds: metrics.strategy_duration(profile, plugin, seconds),
            release=driver.release,
            indexed=indexed,
        )
    except KubeError as error:  # only listing raises it: the backend records its failures per pod
        print(f"desched: cannot list the cluster: {error}", file=sys.stderr)
        metrics.cycle_failed("list")
        return CycleDone(True, [], None)
    except CycleHalted as halted:
        print(f"desched: {halted}", file=sys.stderr)
        if guard.halted == DEADLINE:
            metrics.cycle_failed("deadline")
    except UnrunnablePolicy as error:
        raise UsageError(str(error)) from None
    if evictor is None:  # stopped while listing
        return CycleDone(False, [], guard.halted)
    metrics.loop_duration(time.perf_counter() - started)
    _print_summary(result, evictor, args, guard.halted)
    return CycleDone(False, evictor.failures, guard.halted)


def _print_summary(result: CycleResult, evictor: PodEvictor, args: argparse.Namespace, halted: str | None) -> None:
    """The cycle's summary on stdout (``simulate``'s, plus the failures, their outcomes and why it stopped early)
    and the plugins' errors on stderr."""
    document: dict[str, Any] = report(result, evictor.evictions, explain=False)
    document["failures"] = [failure._asdict() for failure in evictor.failures]
    outcomes = [failure.outcome for failure in evictor.failures]
    document["summary"]["failed"] = {kind.value: outcomes.count(kind.value) for kind in Failure}
    document["summary"]["halted"] = halted
    document["summary"]["dryRun"] = bool(args.dry_run)
    if args.format == "json":
        jsontext.write(document, sys.stdout)
        sys.stdout.write("\n")
    else:
        text = render_text(document, result.errors, evictor.failures)
        sys.stdout.write(text + (f"cycle stopped early: {halted}\n" if halted else ""))
    sys.stdout.flush()
    for problem in result.errors:
        print(f"desched: warning: {problem}", file=sys.stderr)

"""``desched run --leader-elect``: leader election on a ``coordination.k8s.io/v1`` Lease, as upstream does it with
client-go's ``leaderelection`` (``RunOrDie`` with ``ReleaseOnCancel``).

Contract:

* The flags and defaults are upstream's (component-base ``LeaderElectionConfiguration`` with the descheduler's
  defaults): ``--leader-elect``, ``--leader-elect-lease-duration`` 137s, ``--leader-elect-renew-deadline`` 107s,
  ``--leader-elect-retry-period`` 26s, ``--leader-elect-resource-lock`` ``leases`` (the only lock),
  ``--leader-elect-resource-name`` ``descheduler``, ``--leader-elect-resource-namespace`` ``kube-system``.
  :func:`lease_config` checks them as client-go does (lease duration > renew deadline > 1.2 x retry period > 0).
* :meth:`LeaderElector.acquire` tries at once, then every retry period (plus up to 1.2 retry periods of jitter), until
  this process holds the Lease (True) or ``stop`` is set (False). One try is client-go's ``tryAcquireOrRenew``: create
  the Lease when it is missing; take it when it has no holder or when its record has not changed for its
  ``leaseDurationSeconds`` as seen on this process's monotonic clock (the holder's ``renewTime`` is not trusted across
  clocks). Every write is a PUT carrying the ``resourceVersion`` last read, so of two candidates only one wins (the
  other gets 409). Taking the Lease over sets ``acquireTime`` and increments ``leaseTransitions``; renewing keeps both
  and moves ``renewTime``.
* While leading, a daemon thread renews every retry period. :meth:`LeaderElector.leading` is False from the moment no
  renewal has succeeded for the renew deadline (measured from when the last successful write was sent), whether or
  not the thread has noticed yet; leadership is then lost for good: :attr:`LeaderElector.lost` is set and ``on_lost``
  is called. The renew deadline is shorter than the lease duration, so a leader stops before a standby can take over.
* :meth:`LeaderElector.release` stops renewing and, when this process still holds the Lease, writes it with an empty
  holder and ``leaseDurationSeconds: 1`` (``ReleaseOnCancel``), so a standby takes over at its next try.
"""

from __future__ import annotations

import argparse
import random
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import NamedTuple

from desched.errors import KubeError, UsageError
from desched.executor.resilience import seconds
from desched.runtime.kube import KubeClient
from desched.tree import Json

JITTER_FACTOR = 1.2  # client-go's leaderelection.JitterFactor
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"


class LeaseConfig(NamedTuple):
    """Where the Lease lives and its timing, in seconds."""

    namespace: str
    name: str
    lease_duration: float
    renew_deadline: float
    retry_period: float


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Upstream's leader-election flags (see the module contract)."""
    group = parser.add_argument_group("leader election (upstream's flags and defaults; needs --interval)")
    group.add_argument(
        "--leader-elect",
        action="store_true",
        help="acquire the Lease before running cycles, so that of several replicas only one evicts",
    )
    group.add_argument(
        "--leader-elect-lease-duration",
        default="137s",
        metavar="DURATION",
        help="how long a standby waits after the last renewal it saw before taking over (default: 137s)",
    )
    group.add_argument(
        "--leader-elect-renew-deadline",
        default="107s",
        metavar="DURATION",
        help="how long the leader keeps trying to renew before it stops leading; less than the lease duration "
        "(default: 107s)",
    )
    group.add_argument(
        "--leader-elect-retry-period",
        default="26s",
        metavar="DURATION",
        help="the wait between tries to acquire or renew (default: 26s)",
    )
    group.add_argument(
        "--leader-elect-resource-lock", default="leases", metavar="KIND", help="the lock's kind: leases (the only one)"
    )
    group.add_argument(
        "--leader-elect-resource-name", default="descheduler", metavar="NAME", help="the Lease (default: descheduler)"
    )
    group.add_argument(
        "--leader-elect-resource-namespace",
        default="kube-system",
        metavar="NAMESPACE",
        help="the Lease's namespace (default: kube-system)",
    )


def lease_config(args: argparse.Namespace) -> LeaseConfig:
    """The checked configuration of the flags (see the module contract); :class:`UsageError` when one is wrong."""
    if args.leader_elect_resource_lock != "leases":
        raise UsageError(f"--leader-elect-resource-lock {args.leader_elect_resource_lock!r}: only leases is supported")
    if not args.leader_elect_resource_name or not args.leader_elect_resource_namespace:
        raise UsageError("--leader-elect-resource-name and --leader-elect-resource-namespace may not be empty")
    config = LeaseConfig(
        args.leader_elect_resource_namespace,
        args.leader_elect_resource_name,
        seconds("--leader-elect-lease-duration", args.leader_elect_lease_duration),
        seconds("--leader-elect-renew-deadline", args.leader_elect_renew_deadline),
        seconds("--leader-elect-retry-period", args.leader_elect_retry_period),
    )
    if config.lease_duration <= config.renew_deadline:
        raise UsageError("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline")
    if config.renew_deadline <= JITTER_FACTOR * config.retry_period:
        raise UsageError("--leader-elect-renew-deadline must be greater than 1.2 x --leader-elect-retry-period")
    if config.lease_duration < 1:
        raise UsageError("--leader-elect-lease-duration must be at least 1s (the Lease counts whole seconds)")
    return config


def identity() -> str:
    """Upstream's holder identity: the host name and a UUID, unique even for two processes on one host."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def _micro_time(moment: datetime) -> str:
    """A ``metav1.MicroTime`` as the API serializes it."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """One candidate for the Lease (see the module contract)."""

    def __init__(
        self,
        kube: KubeClient,
        config: LeaseConfig,
        holder: str,
        on_lost: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.config = config
        self.identity = holder
        self.on_lost = on_lost
        self.clock = clock
        self.path = f"{LEASES.format(namespace=config.namespace)}/{config.name}"
        self.lost = threading.Event()
        self._lease: Json = {}  # the Lease last read or written: its resourceVersion guards the next write
        self._observed: Json = {}  # the spec last seen, and when (monotonic) it was first seen
        self._observed_at = 0.0
        self._renewed_at: float | None = None  # when the last successful write was sent (monotonic)
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def describe(self) -> str:
        return f"{self.config.namespace}/{self.config.name}"

    def acquire(self, stop: threading.Event) -> bool:
        """Block until this process holds the Lease (True, renewing from then on) or ``stop`` is set (False)."""
        reported = ""
        while not stop.is_set():
            if self.try_acquire_or_renew():
                _log(f"became the leader (lease {self.describe}, identity {self.identity})")
                self._thread = threading.Thread(target=self._renew, name="lease-renewal", daemon=True)
                self._thread.start()
                return True
            holder = str(self._observed.get("holderIdentity") or "")
            if holder and holder != reported:
                _log(f"waiting for lease {self.describe}, held by {holder}")
                reported = holder
            period = self.config.retry_period
            stop.wait(period + random.random() * JITTER_FACTOR * period)
        return False

    def leading(self) -> bool:
        """Whether this process may act as the leader now (see the module contract)."""
        if self.lost.is_set():
            return False
        if self._renewed_at is not None and self.clock() - self._renewed_at < self.config.renew_deadline:
            return True
        if self._renewed_at is not None:  # it was leading: the renew deadline has passed
            self._lose()
        return False

    def release(self) -> None:
        """Stop renewing; give the Lease up when this process still holds it (see the module contract)."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._observed.get("holderIdentity") != self.identity:
            return
        try:
            lease = self.kube.get(self.path)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            now = _micro_time(datetime.now(timezone.utc))
            released = {
                "holderIdentity": "",
                "leaseDurationSeconds": 1,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": spec.get("leaseTransitions") or 0,
            }
            self.kube.request("PUT", self.path, body={**lease, "spec": released})
        except KubeError as error:
            _log(f"warning: cannot release lease {self.describe}: {error}")
            return
        _log(f"released lease {self.describe}")

    def try_acquire_or_renew(self) -> bool:
        """One try (client-go's ``tryAcquireOrRenew``): True when this process holds the Lease afterwards. While
        this process leads, no wait for a server's ``Retry-After`` runs past the renew deadline."""
        kube = self._bounded()
        sent = self.clock()
        now = _micro_time(datetime.now(timezone.utc))
        spec: Json = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.config.lease_duration),
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": self._observed.get("leaseTransitions") or 0,
        }
        if self._holds():  # the fast path: renew what this process wrote last
            spec["acquireTime"] = self._observed.get("acquireTime") or now
            if self._write(kube, "PUT", {**self._lease, "spec": spec}, sent):
                return True
        try:
            self._lease = kube.get(self.path)
        except KubeError as error:
            if error.status != 404:
                _log(f"warning: cannot read lease {self.describe}: {error}")
                return False
            metadata = {"name": self.config.name, "namespace": self.config.namespace}
            lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": spec}
            return self._write(kube, "POST", lease, sent)
        current = self._lease.get("spec") or {}
        if current != self._observed:
            self._observe(current)
        holder = current.get("holderIdentity") or ""
        if holder and holder != self.identity and self._valid():
            return False
        transitions = int(current.get("leaseTransitions") or 0)
        if holder == self.identity:
            spec.update(acquireTime=current.get("acquireTime") or now, leaseTransitions=transitions)
        else:
            spec["leaseTransitions"] = transitions + 1
        return self._write(kube, "PUT", {**self._lease, "spec": spec}, sent)

    def _bounded(self) -> KubeClient:
        """The client for one try: while this process leads, bound by the renew deadline (past it, leading is over
        whatever the server answers), else the client as given (its request timeout bounds each wait)."""
        if self._renewed_at is None:
            return self.kube
        left = self._renewed_at + self.config.renew_deadline - self.clock()
        return self.kube.within(time.monotonic() + max(0.0, left))

    def _write(self, kube: KubeClient, method: str, lease: Json, sent: float) -> bool:
        """Create (POST) or update (PUT, guarded by ``lease``'s resourceVersion) the Lease; True when it took."""
        path = self.path if method == "PUT" else LEASES.format(namespace=self.config.namespace)
        try:
            self._lease = kube.request(method, path, body=lease)
        except KubeError:
            return False
        self._observe(lease["spec"])
        self._renewed_at = sent
        return True

    def _observe(self, spec: Json) -> None:
        self._observed = dict(spec)
        self._observed_at = self.clock()

    def _valid(self) -> bool:
        """Whether the record last seen is younger than its lease duration (client-go's ``isLeaseValid``)."""
        return self.clock() < self._observed_at + float(self._observed.get("leaseDurationSeconds") or 0)

    def _holds(self) -> bool:
        return self._observed.get("holderIdentity") == self.identity and self._valid() and bool(self._lease)

    def _renew(self) -> None:
        """The renewal thread (see the module contract)."""
        while not self._done.wait(self.config.retry_period):
            while not self.try_acquire_or_renew():
                if not self.leading() or self._done.wait(self.config.retry_period):
                    return

    def _lose(self) -> None:
        if not self.lost.is_set():
            self.lost.set()
            _log(f"leadership lost: lease {self.describe} not renewed within {self.config.renew_deadline:g} s")
            self.on_lost()


def _log(message: str) -> None:
    print(f"desched: {message}", file=sys.stderr, flush=True)

"""The PodEvictor: per-cycle limits, the eviction call, and the record of what happened
(docs/executor-semantics.md#5-evicting).

Contract: :meth:`PodEvictor.evict` first calls the ``checkpoint`` it was given (which raises :class:`CycleHalted` when
the cycle must stop evicting), then checks the limits in upstream's order (total, node, namespace), then asks the
backend to evict. A limit refusal returns the matching :class:`Outcome` and counts only in :attr:`PodEvictor.refusals`.
A backend failure is recorded in :attr:`PodEvictor.failures` with its :class:`Failure`: refused (429, a PDB), gone
(404), error (anything else that certainly evicted nothing) return ``Outcome.FAILED`` and count toward no limit;
unknown (a timeout or 5xx after the request was sent: the API may have evicted the pod) returns ``Outcome.UNKNOWN`` and
is counted like a success (safety first). A success is counted per node, per namespace and in total, recorded in
:attr:`PodEvictor.evictions`. After a success or an unknown outcome the pod is, for the rest of the cycle, what its
:class:`SameCycle` view says (docs/executor-semantics.md#6-what-an-evicted-pod-is-for-the-rest-of-the-cycle): in a real
run it is terminating and still listed (:meth:`Cluster.terminate
<desched.executor.cluster.Cluster.terminate>`), in upstream's dry run it is gone (:meth:`Cluster.remove
<desched.executor.cluster.Cluster.remove>`). Counters reset with :meth:`PodEvictor.new_cycle`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from desched.executor.cluster import Cluster, Json
from desched.policy.model import Policy

TOTAL_LIMIT_TEXT = "maximum number of evicted pods per a descheduling cycle reached"
NODE_LIMIT_TEXT = "maximum number of evicted pods per node reached"
NAMESPACE_LIMIT_TEXT = "maximum number of evicted pods per namespace reached"


class Outcome(enum.Enum):
    SUCCESS = "success"
    TOTAL_LIMIT = TOTAL_LIMIT_TEXT
    NODE_LIMIT = NODE_LIMIT_TEXT
    NAMESPACE_LIMIT = NAMESPACE_LIMIT_TEXT
    FAILED = "error"
    UNKNOWN = "unknown"


class Failure(enum.Enum):
    """How a backend eviction failed (``EvictionFailure.outcome``)."""

    REFUSED = "refused"  # 429: a PodDisruptionBudget (upstream logs it "(ignoring)")
    GONE = "gone"  # 404: the pod no longer exists
    ERROR = "error"  # anything else that certainly evicted nothing
    UNKNOWN = "unknown"  # a timeout or 5xx after the request was sent: the pod may have been evicted


class SameCycle(enum.Enum):
    """What an evicted pod is for the rest of its cycle
    (docs/executor-semantics.md#6-what-an-evicted-pod-is-for-the-rest-of-the-cycle)."""

    #: a real run: the API server marks the pod terminating and the informer keeps it for its grace period, so
    #: ``minReplicas``, node usage, node fit and anti-affinity partners still count it; Filter refuses it. A pod the API
    #: deletes at once (terminal phase, or the policy's ``gracePeriodSeconds: 0``) is gone.
    REAL = "real"
    #: upstream's ``--dry-run``: its sandbox deletes the pod from a fake cluster, and every later listing misses it
    DRY_RUN = "dry-run"


class CycleHalted(BaseException):
    """The cycle must stop evicting at once (deadline, SIGTERM, leadership lost); the message says why. Like asyncio's
    ``CancelledError`` it is no ``Exception``, so it ends the cycle through every plugin's error handling."""


class Limits(NamedTuple):
    """The policy's top-level ``maxNoOfPodsToEvict*`` (``None``: unlimited; 0 blocks every eviction)."""

    per_node: int | None = None
    per_namespace: int | None = None
    total: int | None = None

    @classmethod
    def from_policy(cls, policy: Policy) -> Limits:
        return cls(
            policy.max_pods_to_evict_per_node,
            policy.max_pods_to_evict_per_namespace,
            policy.max_pods_to_evict_total,
        )


class Eviction(NamedTuple):
    namespace: str
    pod: str
    node: str
    profile: str
    plugin: str


class EvictionFailure(NamedTuple):
    namespace: str
    pod: str
    node: str
    profile: str
    plugin: str
    status: int | None
    message: str
    outcome: str  # a Failure value


class BackendError(NamedTuple):
    """Why a backend did not evict: the kind of failure, the HTTP status when the API answered, a one-line message."""

    failure: Failure
    status: int | None
    message: str


class Backend(Protocol):
    """How an eviction is carried out: ``None`` on success, else a :class:`BackendError`."""

    def evict(self, pod: Json, profile: str, plugin: str) -> BackendError | None: ...


class DryRun:
    """Every eviction of a pod still present succeeds: upstream's dry run (``run --dry-run``, ``simulate
    --ignore-pdbs``), where PodDisruptionBudgets are not consulted."""

    def evict(self, pod: Json, profile: str, plugin: str) -> BackendError | None:
        return None


Listener = Callable[[Outcome, Json, str, str], None]


class PodEvictor:
    """Shared by every profile and plugin of a cycle (see the module contract)."""

    def __init__(
        self,
        cluster: Cluster,
        limits: Limits,
        backend: Backend | None = None,
        checkpoint: Callable[[], None] | None = None,
        view: SameCycle = SameCycle.REAL,
        grace_period_seconds: int | None = None,
        lists_budgets: bool = False,
    ) -> None:
        """``grace_period_seconds`` is the policy's (``None``: each pod's own): with 0 the API deletes an evicted pod
        at once, so it is gone in a real run too. ``lists_budgets``: the cycle is desched's own run against the API
        server, whose listing always holds the PodDisruptionBudgets (it does not reproduce the start-up order that
        hides them from upstream's real runs of v0.35 and v0.36, row ``pdb-informer-registered``)."""
        self.cluster = cluster
        self.lists_budgets = lists_budgets
        self.limits = limits
        self.backend: Backend = backend or DryRun()
        self.checkpoint = checkpoint
        self.dry_run = view is SameCycle.DRY_RUN
        self.deleted_at_once = self.dry_run or grace_period_seconds == 0
        self.listeners: list[Listener] = []
        self.new_cycle()

    def new_cycle(self, cluster: Cluster | None = None) -> None:
        if cluster is not None:
            self.cluster = cluster
        self.by_node: dict[str, int] = {}
        self.by_namespace: dict[str, int] = {}
        self.total = 0
        self.evictions: list[Eviction] = []
        self.failures: list[EvictionFailure] = []
        self.refusals: dict[str, int] = {}

    def evict(self, pod: Json, profile: str, plugin: str) -> Outcome:
        """The outcome of evicting ``pod`` (see the module contract); :class:`CycleHalted` from the checkpoint or the
        backend propagates."""
        if self.checkpoint is not None:
            self.checkpoint()
        record = self.cluster.record(pod)
        namespace, name, node = record.namespace, record.name, record.node
        outcome = self._limit(namespace, node)
        if outcome is None:
            if self.cluster.present(pod):
                error = self.backend.evict(pod, profile, plugin)
            else:
                error = BackendError(Failure.GONE, 404, f'pods "{name}" not found')
            if error is None or error.failure is Failure.UNKNOWN:
                outcome = Outcome.SUCCESS if error is None else Outcome.UNKNOWN
                self.total += 1
                self.by_namespace[namespace] = self.by_namespace.get(namespace, 0) + 1
                if node:
                    self.by_node[node] = self.by_node.get(node, 0) + 1
                self._aftermath(pod, record.terminal)
            else:
                outcome = Outcome.FAILED
            if error is None:
                self.evictions.append(Eviction(namespace, name, node, profile, plugin))
            else:
                status, message, kind = error.status, error.message, error.failure.value
                self.failures.append(EvictionFailure(namespace, name, node, profile, plugin, status, message, kind))
        else:
            self.refusals[outcome.value] = self.refusals.get(outcome.value, 0) + 1
        for listener in self.listeners:
            listener(outcome, pod, profile, plugin)
        return outcome

    def _aftermath(self, pod: Json, terminal: bool) -> None:
        """What the evicted ``pod`` is for the rest of the cycle (:class:`SameCycle`)."""
        if self.deleted_at_once or terminal:  # kubernetes CheckGracefulDelete: a terminal pod has no grace
            self.cluster.remove(pod)
        else:
            self.cluster.terminate(pod)

    def _limit(self, namespace: str, node: str) -> Outcome | None:
        limits = self.limits
        if limits.total is not None and self.total + 1 > limits.total:
            return Outcome.TOTAL_LIMIT
        if node and limits.per_node is not None and self.by_node.get(node, 0) + 1 > limits.per_node:
            return Outcome.NODE_LIMIT
        if limits.per_namespace is not None and self.by_namespace.get(namespace, 0) + 1 > limits.per_namespace:
            return Outcome.NAMESPACE_LIMIT
        return None

    def node_limit_reached(self, node: str) -> bool:
        """Whether the next eviction from ``node`` would hit the per-node limit."""
        per_node = self.limits.per_node
        return per_node is not None and self.by_node.get(node, 0) + 1 > per_node


def summary(evictions: list[Eviction]) -> dict[str, Any]:
    """Counts by plugin, node and namespace, keys sorted."""

    def count(field: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for eviction in evictions:
            value = getattr(eviction, field)
            counts[value] = counts.get(value, 0) + 1
        return dict(sorted(counts.items()))

    return {
        "evicted": len(evictions),
        "byPlugin": count("plugin"),
        "byNode": count("node"),
        "byNamespace": count("namespace"),
    }

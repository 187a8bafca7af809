"""The Eviction API's PodDisruptionBudget check, for ``desched simulate`` to predict what ``desched run`` will meet
(docs/executor-semantics.md#5-evicting), following kubernetes/kubernetes ``pkg/registry/core/pod/storage/eviction.go``
of the server's release (:attr:`Cluster.server <desched.executor.cluster.Cluster.server>`; unknown: the newest).

Contract: :class:`BudgetCheck` is an eviction backend. For a pod in phase Succeeded, Failed or Pending, or already
terminating, the API does not look at budgets: it evicts. Otherwise the PDBs of the pod's namespace whose selector
matches the pod decide. An empty selector (``{}``) matches every pod from Kubernetes 1.29.0, 1.28.3 and 1.27.7 on
(kubernetes #119732 and its cherry-picks), none before; a nil one none; before 1.21 a pod without labels matches
none. No PDB: it evicts; more than one: the API answers a 500 and deletes nothing (a definite error, counted toward no
limit). One PDB:

* ``disruptionsAllowed`` is the PDB's ``status.disruptionsAllowed`` when the snapshot has it, else what the disruption
  controller computes: ``max(0, currentHealthy - desiredHealthy)``, where ``currentHealthy`` counts the matching pods
  that are Ready and not terminating, and ``desiredHealthy`` is ``minAvailable`` (an integer; a percentage of the
  expected count, rounded up) or the expected count less ``maxUnavailable`` (an integer, or a percentage rounded up).
  The expected count is the matching pods' count: a snapshot does not carry the controllers' scale, which the
  controller would use for percentages;
* a pod that is not Ready is evicted without using the budget when the PDB's ``unhealthyPodEvictionPolicy`` is
  ``AlwaysAllow`` (servers from 1.27, where the field is on by default), or when ``currentHealthy >= desiredHealthy``
  and ``desiredHealthy > 0`` (``IfHealthyBudget``, the default): with ``minAvailable: 0`` or ``maxUnavailable: 100%``
  a not-Ready pod spends the budget like any other;
* otherwise the budget is checked in the API's order: a PDB whose status the disruption controller has not caught
  up with (``status.observedGeneration < metadata.generation``) refuses every pod with a 429; a negative
  ``disruptionsAllowed`` is a 403 (an error); no disruption left is a 429 naming the budget; else the pod is evicted
  and the budget loses one disruption (and one healthy pod) for the rest of the cycle. A refused pod stays where it
  is, for the plugins that come later.

Budgets are computed from the pods as the check found them; :meth:`BudgetCheck.new_cycle` gives every budget back
what it spent (``simulate --samples`` runs several cycles on one cluster).

Refreshes (docs/executor-semantics.md#53-budgets-refreshed-during-the-cycle): the API only decrements
``disruptionsAllowed``; the disruption controller, when it catches up, recomputes the whole status from the pods as
they are (at 1.20 and at the newest alike: an evicted pod is terminating, so not healthy; the expected count is
unchanged). How often that happens inside a cycle depends on how fast the cycle runs against the controller, so the
two ends are modelled: ``BudgetCheck(cluster)`` never refreshes (the figures above), ``BudgetCheck(cluster,
refresh=True)`` refreshes every budget of an evicted pod right after the eviction: ``healthy`` becomes the matching
pods that are Ready and not evicted in this cycle, ``desired`` the controller's (the snapshot's ``desiredHealthy``
unless stale, else computed), ``allowed`` is ``max(0, healthy - desired)`` and the budget is no longer stale. The
two ends differ only where :meth:`BudgetCheck.may_refresh` says so: a budget whose ``desired`` is 0 with a matching
Running pod that is not Ready (the decrement spends a disruption on it, the refresh gives it back), or whose snapshot
status differs from what the controller computes from the pods (stale, or figures the pods no longer support,
which can flip ``IfHealthyBudget`` decisions). Elsewhere, evicting a healthy pod lowers ``allowed`` and ``healthy``
by one either way, and a budget with ``desired > 0`` never falls below it through evictions.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, NamedTuple

from desched.executor.cluster import Cluster, Json, key
from desched.executor.evictions import BackendError, Failure
from desched.executor.podutil import is_terminating
from desched.executor.records import LabelSet, PodRecord
from desched.workloads.selectors import Selector

__all__ = ["Budget", "BudgetCheck", "empty_selector_matches"]

_IGNORED_PHASES = ("Succeeded", "Failed", "Pending")


class Budget(NamedTuple):
    """One PDB as the Eviction API sees it during the cycle; ``stale``: its status is behind its spec."""

    name: str
    allowed: int
    healthy: int
    desired: int
    always_allow_unhealthy: bool
    stale: bool = False


#: Where the Eviction API matches an empty selector to every pod: 1.27.7 and 1.28.3 (cherry-picks), 1.29.0 on.
_EMPTY_SELECTOR_MATCHES = ((1, 27, 7), (1, 28, 3), (1, 29, 0))


def empty_selector_matches(server: tuple[int, int, int] | None) -> bool:
    """Whether the Eviction API of a ``server`` release (``None``: the newest) matches a PDB's empty selector to
    every pod of the namespace."""
    if server is None:
        return True
    same_minor = [first for first in _EMPTY_SELECTOR_MATCHES if first[:2] == server[:2]]
    return server >= same_minor[0] if same_minor else server >= _EMPTY_SELECTOR_MATCHES[-1]


def _healthy(record: PodRecord) -> bool:
    return record.ready and not is_terminating(record.obj)


def _scaled(value: Any, expected: int) -> int:
    """An int-or-percent PDB field against ``expected`` pods, rounded up as the disruption controller does."""
    if isinstance(value, str) and value.endswith("%"):
        try:
            percent = int(value[:-1])
        except ValueError:
            return 0
        return math.ceil(percent * expected / 100)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return 0
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


@lru_cache(maxsize=4096)
def _exhausted(name: str, desired: int, healthy: int) -> str:
    """The 429's message for a budget with no disruption left (one string for the many pods it refuses)."""
    return (
        f"Cannot evict pod as it would violate the pod's disruption budget {name} "
        f"(it needs {desired} healthy pods and has {healthy})"
    )


class BudgetCheck:
    """An eviction backend that applies the PDB check of the Eviction API (see the module contract)."""

    def __init__(self, cluster: Cluster, refresh: bool = False) -> None:
        """Made before the cycle evicts anything: budgets count the pods as the cycle found them; ``refresh``: the
        disruption controller recomputes a budget after every eviction of one of its pods (module contract)."""
        self.cluster = cluster
        self.refresh = refresh
        self._evicted: set[str] = set()  # uids evicted in this cycle, for refreshed budgets
        self._budgets: dict[tuple[str, str], Budget] = {}  # as spent in this cycle
        self._found: dict[tuple[str, str], Budget] = {}  # as computed before any eviction
        # namespace -> label set -> (the labels, the pods that carry them): a workload's pods share one
        self._pods: dict[str, dict[frozenset[tuple[str, str]], tuple[dict[str, str], list[PodRecord]]]] = {}
        for uid in cluster.pods:
            record = cluster.records[uid]
            namespace, label_set = record.label_set
            group = self._pods.setdefault(namespace, {}).setdefault(label_set, (record.labels, []))
            group[1].append(record)
        # pods of one workload share their labels: the PDBs that select a label set, found once
        self._selecting: dict[LabelSet, list[tuple[Json, Selector]]] = {}
        # namespace -> label pair -> the label sets (with their pods) that hold it, made on first use
        self._by_pair: dict[str, dict[tuple[str, str], list[tuple[dict[str, str], list[PodRecord]]]]] = {}

    def evict(self, pod: Json, profile: str, plugin: str) -> BackendError | None:
        del profile, plugin
        record = self.cluster.record(pod)
        error = self._decide(pod, record)
        if error is None and self.refresh:
            self._evicted.add(record.uid)
            for pdb, selector in self._matching(record.label_set, record.labels):
                self._budgets[key(pdb)] = self._computed(pdb, selector, refreshed=True)
        return error

    def _decide(self, pod: Json, record: PodRecord) -> BackendError | None:
        """The Eviction API's answer for ``pod`` (``None``: evicted), spending its budget."""
        if record.phase in _IGNORED_PHASES or is_terminating(pod):
            return None
        matching = self._matching(record.label_set, record.labels)
        if not matching:
            return None
        if len(matching) > 1:
            message = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
            return BackendError(Failure.ERROR, 500, message)
        pdb, selector = matching[0]
        budget = self._budget(pdb, selector)
        undisrupted = budget.healthy >= budget.desired and budget.desired > 0
        if not record.ready and (self._allows_unhealthy(budget) or undisrupted):
            return None  # an unhealthy pod of an undisrupted application: the budget is not used
        if budget.stale:
            message = (
                f"Cannot evict pod as it would violate the pod's disruption budget {budget.name}: it is still being "
                "processed by the server (status.observedGeneration < metadata.generation)"
            )
            return BackendError(Failure.REFUSED, 429, message)
        if budget.allowed < 0:
            return BackendError(Failure.ERROR, 403, f"disruption budget {budget.name}: disruptions allowed is negative")
        if budget.allowed == 0:
            return BackendError(Failure.REFUSED, 429, _exhausted(budget.name, budget.desired, budget.healthy))
        self._budgets[key(pdb)] = budget._replace(allowed=budget.allowed - 1, healthy=budget.healthy - _healthy(record))
        return None

    def _matching(self, label_set: LabelSet, labels: dict[str, str]) -> list[tuple[Json, Selector]]:
        """The PDBs of the namespace whose selector matches ``labels`` (``label_set``: the namespace and the
        frozenset of the labels' items), with their selectors."""
        found = self._selecting.get(label_set)
        if found is None:
            namespace = label_set[0]
            found = [
                (pdb, selector)
                for pdb, selector in self.cluster.pdbs.get(namespace, [])
                if self._selects(selector, labels)
            ]
            self._selecting[label_set] = found
        return found

    def _selects(self, selector: Selector, labels: dict[str, str]) -> bool:
        """Whether the Eviction API of the cluster's release matches a PDB's ``selector`` to a pod's ``labels``."""
        server = self.cluster.server
        if selector.kind == "empty":
            return empty_selector_matches(server)
        if server is not None and server < (1, 21, 0) and not labels:
            return False  # before policy/v1, a pod without labels had no PDB
        return selector.matches(labels)

    def new_cycle(self) -> None:
        """Every budget as found: what earlier cycles spent is forgotten."""
        self._budgets.clear()
        self._evicted.clear()

    def may_refresh(self) -> bool:
        """Whether a refresh can change some budget's answers (module contract): a budget whose ``desired`` is 0
        with a matching Running pod that is not Ready and would spend it, or whose snapshot status is not what the
        controller computes from the pods."""
        for pdbs in self.cluster.pdbs.values():
            for pdb, selector in pdbs:
                found, refreshed = self._computed(pdb, selector), self._computed(pdb, selector, refreshed=True)
                if found != refreshed:
                    return True
                if (
                    found.desired == 0
                    and not self._allows_unhealthy(found)
                    and any(self._spends_unready(pod) for pod in self._pods_of(pdb, selector))
                ):
                    return True
        return False

    def _allows_unhealthy(self, budget: Budget) -> bool:
        """Whether ``budget``'s ``unhealthyPodEvictionPolicy: AlwaysAllow`` lets its unhealthy pods go: the API honours
        it from Kubernetes 1.27 (assumed when the server's release is unknown)."""
        return budget.always_allow_unhealthy and (self.cluster.server or (1, 27, 0)) >= (1, 27, 0)

    def _budget(self, pdb: Json, selector: Selector) -> Budget:
        spent = self._budgets.get(key(pdb))
        if spent is None:
            found = self._found.get(key(pdb))
            if found is None:
                found = self._found[key(pdb)] = self._computed(pdb, selector)
            spent = self._budgets[key(pdb)] = found
        return spent

    def _candidates(self, namespace: str, selector: Selector) -> list[tuple[dict[str, str], list[PodRecord]]]:
        """The label sets of ``namespace`` (with their pods) that ``selector`` may match: those holding its first
        ``matchLabels`` pair when it has one, else all."""
        groups = self._pods.get(namespace, {})
        if selector.kind != "normal" or not selector.match_labels:
            return list(groups.values())
        index = self._by_pair.get(namespace)
        if index is None:
            index = self._by_pair[namespace] = {}
            for labels, group in groups.values():
                for pair in labels.items():
                    index.setdefault(pair, []).append((labels, group))
        return index.get(selector.match_labels[0], [])

    def _pods_of(self, pdb: Json, selector: Selector) -> list[PodRecord]:
        """The pods of the PDB's namespace that its ``selector`` matches."""
        namespace = key(pdb)[0]
        return [
            pod for labels, group in self._candidates(namespace, selector) if selector.matches(labels) for pod in group
        ]

    def _spends_unready(self, record: PodRecord) -> bool:
        """Whether ``record`` is a pod the API checks against a budget although it is not healthy."""
        return record.phase not in _IGNORED_PHASES and not is_terminating(record.obj) and not record.ready

    def _computed(self, pdb: Json, selector: Selector, refreshed: bool = False) -> Budget:
        """The budget as found (the snapshot's status figures where it has them), or, ``refreshed``, as the
        disruption controller recomputes it from the pods with those evicted in this cycle not healthy."""
        namespace, name = key(pdb)
        spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
        pods = self._pods_of(pdb, selector)
        evicted = self._evicted if refreshed else set()
        healthy = sum(1 for pod in pods if _healthy(pod) and pod.uid not in evicted)
        expected = len(pods)
        if spec.get("maxUnavailable") is not None:
            desired = max(0, expected - _scaled(spec["maxUnavailable"], expected))
        else:
            desired = _scaled(spec.get("minAvailable"), expected)
        generation, observed = (pdb.get("metadata") or {}).get("generation"), status.get("observedGeneration")
        stale = isinstance(generation, int) and isinstance(observed, int) and observed < generation
        by_controller = isinstance(status.get("disruptionsAllowed"), int)  # the snapshot has the controller's figures
        if refreshed:
            desired = _figure(status, "desiredHealthy", desired) if by_controller and not stale else desired
            allowed, stale = max(0, healthy - desired), False
        elif by_controller:
            allowed = status["disruptionsAllowed"]
            healthy, desired = _figure(status, "currentHealthy", healthy), _figure(status, "desiredHealthy", desired)
        else:
            allowed = max(0, healthy - desired)
        always = spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
        return Budget(f"{namespace}/{name}", allowed, healthy, desired, always, stale)


def _figure(status: Json, field: str, computed: int) -> int:
    """The PDB status's integer ``field`` when it has one, else ``computed``."""
    value = status.get(field)
    return value if isinstance(value, int) and not isinstance(value, bool) else computed

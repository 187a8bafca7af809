"""The cluster state one descheduling cycle works on: nodes, pods, namespaces, PDBs, PVCs and PriorityClasses.

Contract: :meth:`Cluster.from_objects` builds it from decoded objects (a snapshot's ``kind: List`` items, or what the
live driver listed), keeping the listing order of nodes and of each node's pods (upstream iterates informer order,
which the tests treat as unspecified). Pods without ``metadata.uid`` get ``<namespace>/<name>`` as their UID.
Each pod is read once into a typed :class:`~desched.executor.records.PodRecord` (:meth:`Cluster.record`), from which
the per-pod questions below are answered.
Listing primitives follow upstream (docs/executor-semantics.md#2-which-pods-each-plugin-looks-at):
:meth:`Cluster.pods_on_node` (every phase) and :meth:`Cluster.active_pods_on_node` (not Succeeded/Failed); pods without
``spec.nodeName`` are never listed. After an eviction, :meth:`Cluster.terminate` marks the pod terminating and keeps it
listed, as a real run's informer does; :meth:`Cluster.remove` makes it disappear for the rest of the cycle, as
upstream's dry-run sandbox (or the API, for a pod it deletes at once) does. Within :meth:`Cluster.trial` both are undone
afterwards, so one decoded cluster and its indexes serve several cycles.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from desched.executor.nodefit import FitIndex, NodeFit, ScanFit
from desched.executor.nodeutil import node_requested
from desched.executor.podutil import PriorityKey, pod_requests, priority_key
from desched.executor.records import PodRecord
from desched.runtime.collector import paused
from desched.tree import Json as Json
from desched.workloads.selectors import Selector, compile_selector


@contextlib.contextmanager
def bulk_load() -> Iterator[None]:
    """Around reading and indexing a cluster: the cyclic garbage collector is paused while the objects are made
    (:func:`desched.runtime.collector.paused`), and what was made is then left out of later collections
    (``gc.freeze``)."""
    with paused():
        try:
            yield
        finally:
            gc.freeze()


def key(obj: Json) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def node_of(pod: Json) -> str:
    """The node a pod is bound to (``""`` when it is not bound)."""
    return str((pod.get("spec") or {}).get("nodeName") or "")


@dataclass
class _Journal:
    """What a trial changed, to undo it: the pods marked terminating, and the listings as they were before the first
    removal (the whole pod map, and each touched node's)."""

    terminated: list[Json] = field(default_factory=list)
    removed: list[PodRecord] = field(default_factory=list)
    pods: dict[str, Json] | None = None
    by_node: dict[str, dict[str, Json]] = field(default_factory=dict)


class Cluster:
    """Objects of one cycle, indexed the ways the plugins and the DefaultEvictor look them up."""

    fit_strategy = "index"  # or "scan": how :meth:`fit` answers (both give the same answers)

    def __init__(self) -> None:
        self.nodes: list[Json] = []
        self.node_by_name: dict[str, Json] = {}
        self.pods: dict[str, Json] = {}  # uid -> pod, listing order
        self.records: dict[str, PodRecord] = {}  # uid -> the pod's record, kept once it leaves
        self._shared: dict[Any, Any] = {}  # what records share (:class:`PodRecord`)
        self._by_node: dict[str, dict[str, Json]] = {}
        self.namespaces: dict[str, Json] = {}
        self.priority_classes: dict[str, Json] = {}
        self.pvcs: dict[tuple[str, str], Json] = {}
        self.pdbs: dict[str, list[tuple[Json, Selector]]] = {}
        self._owner_counts: dict[str, int] = {}
        self._requested: dict[str, dict[str, int]] = {}
        self._request_sets: dict[tuple[tuple[str, int], ...], dict[str, int]] = {}  # one mapping per distinct one
        self._key_set: dict[PriorityKey, PriorityKey] = {}  # one tuple per distinct key
        self._active: dict[str, list[Json]] = {}  # node -> its non-terminal pods, until its pods change
        self.skipped: dict[str, int] = {}
        self.changes: list[str] = []  # the nodes whose pods changed, in order: fit indexes catch up from it
        self.additions = 0  # pods added so far: a cycle only removes pods once it runs
        self._fit: dict[bool, NodeFit] = {}  # anti_affinity -> its fit answers
        #: whether pod requests add native sidecars (:func:`~desched.executor.podutil.pod_requests`); set by
        #: :meth:`count_sidecars`
        self.sidecars = True
        self._journal: _Journal | None = None
        #: The API server's Kubernetes version (major, minor, patch): ``kubectl version -o json`` in a snapshot, or
        #: ``GET /version`` in ``desched run``; ``None`` when unknown (the newest release's behaviour is assumed)
        self.server: tuple[int, int, int] | None = None

    @classmethod
    def from_objects(cls, objects: Iterable[Json]) -> Cluster:
        cluster = cls()
        for obj in objects:
            cluster.add(obj)
        return cluster

    def add(self, obj: Json) -> None:
        """Index one object; kinds the executor does not use are counted in :attr:`skipped`."""
        kind = obj.get("kind")
        metadata = obj.get("metadata") or {}
        name = metadata.get("name")
        if kind is None and isinstance(obj.get("serverVersion"), dict):  # `kubectl version -o json|yaml`
            self.server = server_version(obj["serverVersion"].get("gitVersion"))
        elif kind == "Pod":
            self.add_pod(obj)
        elif kind == "Node" and isinstance(name, str):
            if name not in self.node_by_name:
                self.nodes.append(obj)
            self.node_by_name[name] = obj
        elif kind == "Namespace" and isinstance(name, str):
            self.namespaces[name] = obj
        elif kind == "PriorityClass" and isinstance(name, str):
            self.priority_classes[name] = obj
        elif kind == "PersistentVolumeClaim":
            self.pvcs[key(obj)] = obj
        elif kind == "PodDisruptionBudget":
            selector = (obj.get("spec") or {}).get("selector")
            # policy/v1: an empty selector selects every pod of the namespace; nil selects none
            # (docs/executor-semantics.md#32-filter, 11).
            # policy/v1beta1 (served alone by old API servers): an empty selector selects none.
            compiled = compile_selector(selector, nil_matches=False)
            if compiled.kind == "empty" and obj.get("apiVersion") == "policy/v1beta1":
                compiled = compile_selector(None, nil_matches=False)
            self.pdbs.setdefault(key(obj)[0], []).append((obj, compiled))
        else:
            self.skipped[str(kind)] = self.skipped.get(str(kind), 0) + 1

    def add_pod(self, pod: Json) -> None:
        metadata = pod.setdefault("metadata", {})
        if not metadata.get("uid"):
            metadata["uid"] = "/".join(key(pod))
        elif not isinstance(metadata["uid"], str):  # a YAML snapshot's number: uids are compared as text
            metadata["uid"] = str(metadata["uid"])
        uid = metadata["uid"]
        self.pods[uid] = pod
        record = self.records[uid] = PodRecord(pod, uid, self._shared)
        node = record.node
        if node:
            self._by_node.setdefault(node, {})[uid] = pod
            self._requested.pop(node, None)
            self._active.pop(node, None)
            self.changes.append(node)
        self.additions += 1
        for owner in record.owners:
            self._owner_counts[owner] = self._owner_counts.get(owner, 0) + 1

    def remove(self, pod: Json) -> bool:
        """Forget ``pod`` for the rest of the cycle; False when it was already gone."""
        uid = (pod.get("metadata") or {}).get("uid")
        if uid not in self.pods:
            return False
        journal = self._journal
        if journal is not None:
            if journal.pods is None:
                journal.pods = dict(self.pods)
            journal.removed.append(self.records[uid])
        del self.pods[uid]
        gone = self.records[uid]
        node = gone.node
        if node:
            if journal is not None and node not in journal.by_node:
                journal.by_node[node] = dict(self._by_node.get(node, {}))
            self._by_node.get(node, {}).pop(uid, None)
            self._active.pop(node, None)
            summed = self._requested.get(node)
            if summed is not None and not gone.terminal:  # what the node's pods request, less this pod
                less = dict(summed)
                for name, amount in self._requests_of(gone).items():
                    less[name] = less.get(name, 0) - amount
                less["pods"] -= 1
                self._requested[node] = less
            self.changes.append(node)
        for owner in gone.owners:
            self._owner_counts[owner] -= 1
        return True

    def terminate(self, pod: Json) -> None:
        """``pod`` as a real run sees it after its eviction: the API server has set ``metadata.deletionTimestamp``
        and the pod stays listed, requesting what it did, until its kubelet is done (past the cycle). Like an
        informer, the cluster replaces the object: ``pod`` itself is not changed, and a list taken before holds it."""
        metadata = pod.get("metadata") or {}
        uid = metadata.get("uid")
        if uid not in self.pods or metadata.get("deletionTimestamp") is not None:
            return
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        marked = {**pod, "metadata": {**metadata, "deletionTimestamp": stamp}}
        self.pods[uid] = marked  # same key: the listing order is kept
        node = node_of(pod)
        if node:
            self._by_node[node][uid] = marked
            self._active.pop(node, None)
        if self._journal is not None:
            self._journal.terminated.append(pod)

    @contextlib.contextmanager
    def trial(self) -> Iterator[None]:
        """Undo on exit what :meth:`remove` and :meth:`terminate` did inside the block: the same pod objects in the
        same listing order, owner counts and requested sums as before; node fit catches up from :attr:`changes`."""
        self._journal = journal = _Journal()
        try:
            yield
        finally:
            self._journal = None
            if journal.pods is not None:
                self.pods.clear()
                self.pods.update(journal.pods)
            for node, listed in journal.by_node.items():
                self._by_node[node] = listed
                self._requested.pop(node, None)
                self._active.pop(node, None)
                self.changes.append(node)
            for pod in journal.terminated:  # the objects as they were, in place of their terminating copies
                uid, node = pod["metadata"]["uid"], node_of(pod)
                self.pods[uid] = pod
                if node:
                    self._by_node[node][uid] = pod
                    self._active.pop(node, None)
            for record in journal.removed:
                for owner in record.owners:
                    self._owner_counts[owner] += 1
            # pods came back: fit answers may change, unless only terminal pods (which node fit ignores) did
            self.additions += sum(not record.terminal for record in journal.removed)

    def present(self, pod: Json) -> bool:
        return (pod.get("metadata") or {}).get("uid") in self.pods

    def pods_on_node(self, node: str) -> list[Json]:
        """Every pod bound to ``node``, whatever its phase, in listing order."""
        return list(self._by_node.get(node, {}).values())

    def active_pods_on_node(self, node: str) -> list[Json]:
        """The non-terminal pods bound to ``node`` (an empty phase counts as non-terminal), in a new list."""
        found = self._active.get(node)
        if found is None:
            records, listed = self.records, self._by_node.get(node, {})
            found = self._active[node] = [pod for uid, pod in listed.items() if not records[uid].terminal]
        return list(found)

    def requested(self, node: str) -> dict[str, int]:
        """Σ requests of the node's non-terminal pods plus their count (``pods``), as
        :func:`~desched.executor.nodeutil.node_requested` sums them; kept current as pods leave (a resource no pod
        requests any more may stay at 0)."""
        found = self._requested.get(node)
        if found is None:
            found = self._requested[node] = node_requested(self._by_node.get(node, {}).values(), self.pod_requests)
        return found

    def record(self, pod: Mapping[str, Any]) -> PodRecord:
        """The record of ``pod`` (or of the pod its terminating copy stands for); a pod the cluster never indexed
        gets a record of its own, kept nowhere."""
        uid = str((pod.get("metadata") or {}).get("uid"))
        found = self.records.get(uid)
        return PodRecord(pod, uid) if found is None else found

    def pod_requests(self, pod: Mapping[str, Any]) -> dict[str, int]:
        """:func:`desched.executor.podutil.pod_requests` of ``pod`` (:attr:`sidecars` as set), computed once per pod;
        pods that request the same share one mapping, which callers must not change."""
        return self._requests_of(self.record(pod))

    def _requests_of(self, record: PodRecord) -> dict[str, int]:
        found = record.requests
        if found is None:
            requests = pod_requests(record.obj, self.sidecars)
            found = record.requests = self._request_sets.setdefault(tuple(requests.items()), requests)
        return found

    def count_sidecars(self, sidecars: bool) -> None:
        """Compute pod requests as a release that does (True) or does not add native sidecars (release row
        ``native-sidecars``); a change drops every cached request, node sum and the fit index, which read them."""
        if sidecars == self.sidecars:
            return
        self.sidecars = sidecars
        for record in self.records.values():
            record.requests = None
            record.facts = None
        self._requested.clear()
        self._request_sets.clear()
        self._fit.clear()

    def priority_key(self, pod: Json) -> PriorityKey:
        """:func:`desched.executor.podutil.priority_key` of ``pod``, computed once per pod (its terminating copy
        sorts alike)."""
        record = self.record(pod)
        found = record.priority
        if found is None:
            computed = priority_key(record.obj)
            found = record.priority = self._key_set.setdefault(computed, computed)
        return found

    def fit(self, anti_affinity: bool = True) -> NodeFit:
        """Answers ``PodFitsAnyNode`` questions on this cluster as it changes (:mod:`desched.executor.nodefit`):
        an index built on first use, or the plain scan when :attr:`fit_strategy` says ``scan`` (the tests' oracle).
        ``anti_affinity`` says whether NodeFit checks the pod's anti-affinity (releases from v0.30 on): one index
        per answer, each kept current."""
        found = self._fit.get(anti_affinity)
        if found is None:
            build = ScanFit if self.fit_strategy == "scan" else FitIndex
            found = self._fit[anti_affinity] = build(self, anti_affinity)
        return found

    def release(self) -> None:
        """Drop the node fit index, which refers back to the cluster: once its holders let it go, the cluster and
        its objects are freed at once, without waiting for the cyclic collector (which never looks at them after
        :func:`bulk_load`)."""
        self._fit.clear()

    def owner_count(self, owner_uid: str) -> int:
        """How many pods of the cluster (any phase, node or namespace) list ``owner_uid`` among their owners."""
        return self._owner_counts.get(owner_uid, 0)

    def has_pdb(self, pod: Json) -> bool:
        """Whether some PDB of the pod's namespace selects the pod (budgets are not evaluated)."""
        record = self.record(pod)
        budgets = self.pdbs.get(record.namespace)
        return any(selector.matches(record.labels) for _, selector in budgets or ())


def server_version(text: Any) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a Kubernetes ``gitVersion`` (``v1.28.3``, ``v1.20.5+k3s1``, ``v1.27.7-eks-4f4795d``);
    ``None`` when it names none."""
    found = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", text) if isinstance(text, str) else None
    return (int(found[1]), int(found[2]), int(found[3] or 0)) if found else None

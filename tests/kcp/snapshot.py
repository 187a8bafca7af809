"""Load a cluster snapshot into the test API server, so one snapshot file drives both offline simulation and live runs.

Contract: :func:`read` turns snapshot files (``kubectl get ... -A -o yaml`` output: a ``kind: List``, multi-document
YAML, or JSON) into objects. :func:`load` creates them on the server in dependency order, each stage concurrently:
namespaces and cluster-scoped objects, then Nodes (through the fake kubelet, so they are Ready), then workload
controllers, then everything else namespaced (PVCs, PDBs, ...), then Pods with the status the snapshot recorded
(``Running``/``Ready`` when it recorded none). Server-set metadata is dropped; ``ownerReferences`` are rewritten to the
new UIDs. Controllers that own pods but are missing from the snapshot are synthesized as inert objects when they are
ReplicaSets, StatefulSets or ReplicationControllers, because the disruption controller needs their scale to compute
``maxUnavailable`` budgets. PDBs are created at the server's preferred policy version. Any failed object makes
:class:`LoadError` list what failed; what was created stays (the test namespace or control plane owns the cleanup).
"""

from __future__ import annotations

import copy
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import yaml

from tests.kcp.api import Api, ApiError, Json
from tests.kcp.kubelet import FakeKubelet, running_status

SERVER_FIELDS = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "selfLink",
    "managedFields",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
CONTROLLER_KINDS = ("Deployment", "CronJob", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController")
SYNTHESIZED = {"ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "ReplicationController": "v1"}
CLUSTER_FIRST = ("Namespace", "PriorityClass", "StorageClass")


class LoadError(Exception):
    """Some objects could not be created; the message lists them with the server's answers."""


class LoadReport(NamedTuple):
    created: Counter[str]
    synthesized: int
    seconds: float


def read(paths: Iterable[str | Path]) -> list[Json]:
    """The objects in the snapshot files (``kind: List`` flattened, empty documents skipped)."""
    objects: list[Json] = []
    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        is_json = text.lstrip().startswith("{")
        documents = [json.loads(text)] if is_json else yaml.load_all(text, Loader=yaml.CSafeLoader)
        for document in documents:
            if isinstance(document, dict) and document.get("kind", "").endswith("List") and "items" in document:
                objects += [item for item in document["items"] or [] if isinstance(item, dict)]
            elif isinstance(document, dict):
                objects.append(document)
    return objects


def load(api: Api, kubelet: FakeKubelet, objects: Iterable[Json], workers: int = 16) -> LoadReport:
    """Create ``objects`` on the server (see the module contract)."""
    started = time.perf_counter()
    loader = _Loader(api, kubelet, [copy.deepcopy(obj) for obj in objects], workers)
    try:
        loader.run()
    finally:
        loader.pool.shutdown()
    if loader.failures:
        shown = "\n".join(f"  {failure}" for failure in loader.failures[:10])
        more = f"\n  ... and {len(loader.failures) - 10} more" if len(loader.failures) > 10 else ""
        raise LoadError(f"{len(loader.failures)} objects could not be created:\n{shown}{more}")
    return LoadReport(loader.created, loader.synthesized, time.perf_counter() - started)


def _key(obj: Json) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    return f"{obj.get('kind')} {namespace + '/' if namespace else ''}{metadata.get('name')}"


class _Loader:
    def __init__(self, api: Api, kubelet: FakeKubelet, objects: list[Json], workers: int) -> None:
        self.api = api
        self.kubelet = kubelet
        self.objects = objects
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="snapshot-load")
        self.uids: dict[str, str] = {}
        self.created: Counter[str] = Counter()
        self.failures: list[str] = []
        self.synthesized = 0

    def run(self) -> None:
        by_kind: dict[str, list[Json]] = {}
        for obj in self.objects:
            by_kind.setdefault(obj.get("kind", ""), []).append(obj)
        pods = by_kind.pop("Pod", [])
        nodes = by_kind.pop("Node", [])
        namespaces = {obj["metadata"]["name"] for obj in by_kind.get("Namespace", [])}
        implied = sorted(
            {
                obj["metadata"]["namespace"]
                for obj in self.objects
                if obj.get("metadata", {}).get("namespace") and obj["metadata"]["namespace"] not in namespaces
            }
        )
        by_kind.setdefault("Namespace", []).extend(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}} for name in implied
        )
        self._stage([obj for kind in CLUSTER_FIRST for obj in by_kind.pop(kind, [])], self._create, exists_ok=True)
        if nodes:
            self.kubelet.add_nodes(nodes)
            self.created["Node"] += len(nodes)
        controllers = [obj for kind in CONTROLLER_KINDS for obj in by_kind.pop(kind, [])]
        controllers += self._synthesize(pods, controllers)
        for level in _by_depth(controllers):
            self._stage(level, self._create)
        pdb_version = self.api.pdb_version()
        for pdb in by_kind.get("PodDisruptionBudget", []):
            pdb["apiVersion"] = pdb_version
        self._stage([obj for objects in by_kind.values() for obj in objects], self._create)
        self.kubelet.leave_status((pod["metadata"]["namespace"], pod["metadata"]["name"]) for pod in pods)
        self._stage(pods, self._create_pod)

    def _stage(self, objects: list[Json], action: Callable[[Json], None], exists_ok: bool = False) -> None:
        def run(obj: Json) -> None:
            try:
                action(obj)
            except ApiError as error:
                if not (exists_ok and error.status == 409):
                    self.failures.append(f"{_key(obj)}: {error}")
            except OSError as error:
                self.failures.append(f"{_key(obj)}: {error}")

        list(self.pool.map(run, objects))

    def _prepared(self, obj: Json) -> tuple[Json, str | None]:
        metadata = obj.setdefault("metadata", {})
        old_uid = metadata.get("uid")
        for name in SERVER_FIELDS:
            metadata.pop(name, None)
        for reference in metadata.get("ownerReferences") or []:
            reference["uid"] = self.uids.get(reference.get("uid", ""), reference.get("uid", ""))
        return obj, old_uid

    def _create(self, obj: Json) -> None:
        prepared, old_uid = self._prepared(obj)
        prepared.pop("status", None)
        created = self.api.create(prepared)
        if old_uid:
            self.uids[old_uid] = created["metadata"]["uid"]
        self.created[prepared["kind"]] += 1

    def _create_pod(self, pod: Json) -> None:
        prepared, _ = self._prepared(pod)
        status = prepared.pop("status", None) or {}
        spec = prepared.setdefault("spec", {})
        for computed in ("priority", "preemptionPolicy"):  # the Priority admission plugin sets them from the class
            spec.pop(computed, None)
        created = self.api.create(prepared)
        wanted = status if status.get("phase") else running_status(created)
        metadata = created["metadata"]
        self.api.patch("v1", "Pod", metadata["name"], {"status": wanted}, metadata["namespace"], subresource="status")
        self.created["Pod"] += 1

    def _synthesize(self, pods: list[Json], present: list[Json]) -> list[Json]:
        """Inert stand-ins for the scale-bearing controllers that own ``pods`` but are not in the snapshot."""
        known = {(obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]) for obj in present}
        owned: dict[tuple[str, str, str, str], list[Json]] = {}
        for pod in pods:
            for reference in pod["metadata"].get("ownerReferences") or []:
                kind = reference.get("kind")
                key = (kind, pod["metadata"]["namespace"], reference.get("name"))
                if reference.get("controller") and kind in SYNTHESIZED and key not in known and reference.get("uid"):
                    owned.setdefault((*key, reference["uid"]), []).append(pod)
        stand_ins = []
        for (kind, namespace, name, uid), members in owned.items():
            labels = dict(set.intersection(*(set((m["metadata"].get("labels") or {}).items()) for m in members)))
            if not labels:
                continue  # no selector can pick exactly these pods; the reference stays dangling
            stand_ins.append(_controller(kind, namespace, name, uid, labels, members))
        self.synthesized = len(stand_ins)
        return stand_ins


def _controller(kind: str, namespace: str, name: str, uid: str, labels: dict[str, str], pods: list[Json]) -> Json:
    containers = [
        {"name": container["name"], "image": container.get("image") or "registry.k8s.io/pause:3.9"}
        for container in pods[0]["spec"].get("containers") or []
    ]
    spec: Json = {
        "replicas": len(pods),
        "selector": labels if kind == "ReplicationController" else {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}},
    }
    if kind == "StatefulSet":
        spec["serviceName"] = name
    metadata = {"name": name, "namespace": namespace, "uid": uid, "labels": labels}
    return {"apiVersion": SYNTHESIZED[kind], "kind": kind, "metadata": metadata, "spec": spec}


def _by_depth(controllers: list[Json]) -> list[list[Json]]:
    """``controllers`` in creation levels: owners before the objects they own (ownership cycles are cut)."""
    by_uid = {obj["metadata"]["uid"]: obj for obj in controllers if obj["metadata"].get("uid")}
    depth: dict[int, int] = {}

    def level(obj: Json, trail: frozenset[str]) -> int:
        if id(obj) not in depth:
            trail = trail | {obj["metadata"].get("uid", "")}
            parents = [
                by_uid[reference["uid"]]
                for reference in obj["metadata"].get("ownerReferences") or []
                if reference.get("uid") in by_uid and reference["uid"] not in trail
            ]
            depth[id(obj)] = 1 + max((level(parent, trail) for parent in parents), default=-1)
        return depth[id(obj)]

    levels: dict[int, list[Json]] = {}
    for obj in controllers:
        levels.setdefault(level(obj, frozenset()), []).append(obj)
    return [levels[index] for index in sorted(levels)]


def isolate(objects: Iterable[Json], suffix: str) -> list[Json]:
    """Copies of ``objects`` with every namespace and node name suffixed, so several tests can load one snapshot."""
    renamed = []
    for obj in objects:
        copied = copy.deepcopy(obj)
        metadata = copied.setdefault("metadata", {})
        if metadata.get("namespace"):
            metadata["namespace"] += suffix
        if copied.get("kind") in ("Namespace", "Node"):
            metadata["name"] += suffix
        if copied.get("kind") == "Node" and "kubernetes.io/hostname" in (metadata.get("labels") or {}):
            metadata["labels"]["kubernetes.io/hostname"] = metadata["name"]
        spec = copied.get("spec") or {}
        if copied.get("kind") == "Pod" and spec.get("nodeName"):
            spec["nodeName"] += suffix
        renamed.append(copied)
    return renamed

"""The cluster view behind the workload checks: the active policy and a cache of workloads and PDBs (an informer).

Contract: :class:`ClusterCache` lists, then watches, every kind the workload-safety rules read (workloads, PDBs at the
version the server serves, HPAs, Namespaces, PriorityClasses, PVCs, StorageClasses) and the one policy ConfigMap
named ``namespace/name``, each in a daemon thread that re-lists after a broken or expired watch. Admission requests
read only the cache (never an API call per request). :meth:`ClusterCache.policy` is the active policy linted once per
change (``None`` while there is none); :meth:`ClusterCache.synced` is true once every kind was listed once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from desched.errors import KubeError
from desched.kube import Json, KubeClient
from desched.linter.engine import FileResult, Settings
from desched.webhook.review import configmap_policies
from desched.workloads.live import KINDS as LIVE_KINDS

LOG = logging.getLogger("desched.webhook")
# What the scope model reads (desched.workloads.live.KINDS) but Pods: the checks judge templates, and caching every
# pod of the cluster would cost memory for nothing.
KINDS = tuple(entry for entry in LIVE_KINDS if entry[0] != "Pod")
WATCH_SECONDS = 240


class ClusterCache:
    """See the module contract."""

    def __init__(self, kube: KubeClient, policy_configmap: tuple[str, str] | None, settings: Settings | None = None):
        self.kube = kube
        self.policy_ref = policy_configmap
        self.settings = settings or Settings()
        self._lock = threading.Lock()
        self._objects: dict[tuple[str, str, str], Json] = {}
        self._policy: FileResult | None = None
        self._listed: set[str] = set()
        self._expected: set[str] = set()
        self._stop = threading.Event()

    def start(self) -> None:
        for kind, versions in KINDS:
            self._expected.add(kind)
            threading.Thread(target=self._run, args=(kind, versions), name=f"cache-{kind}", daemon=True).start()
        if self.policy_ref is not None:
            self._expected.add("policy")
            threading.Thread(target=self._run_policy, name="cache-policy", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def synced(self) -> bool:
        with self._lock:
            return self._expected <= self._listed

    # -- ClusterView ---------------------------------------------------------------------------------------------

    def policy(self) -> FileResult | None:
        with self._lock:
            return self._policy

    def objects(self) -> list[Json]:
        with self._lock:
            return list(self._objects.values())

    def is_active_policy(self, namespace: str, name: str) -> bool:
        return self.policy_ref == (namespace, name)

    # -- informers -----------------------------------------------------------------------------------------------

    def _run(self, kind: str, versions: tuple[str, ...]) -> None:
        while not self._stop.is_set():
            try:
                resource = self.kube.find(kind, versions)
                if resource is None:
                    self._mark_listed(kind)  # not served here: nothing to cache
                    return
                self._inform(kind, resource.api_version, resource.path, {}, self._store(kind))
            except KubeError as error:
                if error.status in (401, 403):
                    LOG.warning("cache %s: %s; not cached (the workload checks go without it)", kind, error)
                    self._mark_listed(kind)
                    return
                LOG.warning("cache %s: %s; retrying", kind, error)
                self._stop.wait(5)

    def _run_policy(self) -> None:
        assert self.policy_ref is not None
        namespace, name = self.policy_ref
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        while not self._stop.is_set():
            try:
                self._inform("policy", "v1", path, {"fieldSelector": f"metadata.name={name}"}, self._store_policy)
            except KubeError as error:
                LOG.warning("cache policy %s/%s: %s; retrying", namespace, name, error)
                self._stop.wait(5)

    def _inform(
        self, label: str, version: str, path: str, params: dict[str, Any], store: Callable[[str, Json], None]
    ) -> None:
        """List then watch ``path`` until the watch breaks or expires (the caller loops)."""
        listing = self.kube.get(path, params)
        with self._lock:  # a relist replaces what the broken watch may have missed
            for key in [key for key in self._objects if key[0] == label]:
                del self._objects[key]
        for item in listing.get("items") or []:
            store("ADDED", {"apiVersion": version, **item})
        self._mark_listed(label)
        resource_version = (listing.get("metadata") or {}).get("resourceVersion", "")
        for event in self.kube.watch(
            path,
            {
                **params,
                "resourceVersion": resource_version,
                "timeoutSeconds": WATCH_SECONDS,
                "allowWatchBookmarks": "true",
            },
        ):
            if self._stop.is_set():
                return
            kind, obj = event.get("type"), event.get("object")
            if kind == "ERROR" or not isinstance(obj, dict):
                return  # expired resourceVersion: list again
            if kind != "BOOKMARK":
                store(str(kind), {"apiVersion": version, **obj})

    def _mark_listed(self, label: str) -> None:
        with self._lock:
            self._listed.add(label)

    def _store(self, kind: str) -> Callable[[str, Json], None]:
        def store(event: str, obj: Json) -> None:
            metadata = obj.get("metadata") or {}
            key = (kind, str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))
            with self._lock:
                if event == "DELETED":
                    self._objects.pop(key, None)
                else:
                    self._objects[key] = {**obj, "kind": kind}

        return store

    def _store_policy(self, event: str, obj: Json) -> None:
        if event == "DELETED":
            result = None
        else:
            result = configmap_policies(obj, self.settings)
            if result is not None and not result.policies:
                result = None
        with self._lock:
            self._policy = result

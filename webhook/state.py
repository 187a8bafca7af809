"""The cluster view behind the workload checks: the active policy and a cache of workloads and PDBs (an informer).

Contract: :class:`ClusterCache` lists, then watches, every kind the workload-safety rules read (workloads, PDBs at the
version the server serves, HPAs, Namespaces, PriorityClasses, PVCs, StorageClasses) and the one policy ConfigMap
named ``namespace/name``, each in a daemon thread that watches on from the last version seen and lists again only
after a broken or expired watch (a listing replaces the objects it holds in place and forgets the others; what it
listed is frozen out of the cyclic garbage collector). Admission requests read only the cache (never an API call per
request). :meth:`ClusterCache.policy` is the active policy linted once per
change (``None`` while there is none); :meth:`ClusterCache.synced` is true once every kind was listed once. Every
event (:meth:`ClusterCache.apply`) also updates the cache's :class:`~desched.webhook.workloads.ClusterIndex`
(:meth:`ClusterCache.indexed`), so a request reads the few objects it needs instead of them all. Objects are keyed
by kind, namespace (``default`` when absent) and name.
"""

from __future__ import annotations

import functools
import gc
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from desched.errors import KubeError
from desched.linter.engine import FileResult, Settings
from desched.runtime.kube import Json, KubeClient
from desched.tree import mapping_or_empty
from desched.webhook.review import configmap_policies
from desched.webhook.workloads import ClusterIndex, object_key
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
        self._index = ClusterIndex()
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

    @contextmanager
    def indexed(self) -> Iterator[ClusterIndex]:
        """The index of the cached objects, held still (no event applied) until the block ends."""
        with self._lock:
            yield self._index

    def apply(self, kind: str, event: str, obj: Json) -> None:
        """A watch event (``ADDED``, ``MODIFIED``, ``DELETED``) about an object of ``kind``, one of :data:`KINDS`."""
        obj = {**obj, "kind": kind}
        key = object_key(obj)
        with self._lock:
            if event == "DELETED":
                self._objects.pop(key, None)
                self._index.store.remove(key)
            else:
                self._objects[key] = obj
                self._index.store.put(key, obj)

    def apply_policy(self, event: str, obj: Json) -> None:
        """A watch event about the active policy ConfigMap."""
        if event == "DELETED":
            result = None
        else:
            result = configmap_policies(obj, self.settings)
            if result is not None and not result.policies:
                result = None
        with self._lock:
            self._policy = result

    # -- informers -----------------------------------------------------------------------------------------------

    def _run(self, kind: str, versions: tuple[str, ...]) -> None:
        while not self._stop.is_set():
            try:
                resource = self.kube.find(kind, versions)
                if resource is None:
                    self._mark_listed(kind)  # not served here: nothing to cache
                    return
                self._inform(kind, resource.api_version, resource.path, {}, functools.partial(self.apply, kind))
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
                self._inform("policy", "v1", path, {"fieldSelector": f"metadata.name={name}"}, self.apply_policy)
            except KubeError as error:
                LOG.warning("cache policy %s/%s: %s; retrying", namespace, name, error)
                self._stop.wait(5)

    def _inform(
        self, label: str, version: str, path: str, params: dict[str, Any], store: Callable[[str, Json], None]
    ) -> None:
        """List ``path``, then watch it from there, each watch from the last version seen, until a watch breaks
        (:class:`KubeError`) or its version expired (the caller lists again)."""
        listing = self.kube.get(path, params)
        items = [{"apiVersion": version, **item} for item in listing.get("items") or [] if isinstance(item, dict)]
        self._replace(label, items, store)
        self._mark_listed(label)
        # The listed objects live until they change: kept out of the cyclic collector, whose full collections would
        # otherwise walk every cached object (0.2 s at 10,000 workloads) while no request is answered.
        gc.freeze()
        resource_version: str | None = str(mapping_or_empty(listing.get("metadata")).get("resourceVersion") or "")
        while resource_version is not None and not self._stop.is_set():
            resource_version = self._watch(path, params, resource_version, version, store)

    def _watch(
        self, path: str, params: dict[str, Any], since: str, version: str, store: Callable[[str, Json], None]
    ) -> str | None:
        """One watch from version ``since`` until the server ends it: the last version seen, or None when it
        expired (or the cache stops)."""
        watch = {**params, "resourceVersion": since, "timeoutSeconds": WATCH_SECONDS, "allowWatchBookmarks": "true"}
        for event in self.kube.watch(path, watch):
            kind, obj = event.get("type"), event.get("object")
            if self._stop.is_set() or kind == "ERROR" or not isinstance(obj, dict):
                return None  # an expired resourceVersion: list again
            since = str(mapping_or_empty(obj.get("metadata")).get("resourceVersion") or since)
            if kind != "BOOKMARK":
                store(str(kind), {"apiVersion": version, **obj})
        return since

    def _replace(self, label: str, items: list[Json], store: Callable[[str, Json], None]) -> None:
        """A listing of ``label``: each object stored (a known one replaced in place), then those no longer listed
        forgotten (the policy ConfigMap when it is not listed)."""
        for item in items:
            store("ADDED", item)
        if label == "policy":
            if not items:
                store("DELETED", {})
            return
        listed = {object_key({**item, "kind": label}) for item in items}
        with self._lock:
            stale = [key for key in self._index.store.keys(label) if key not in listed]
        for _, namespace, name in stale:
            store("DELETED", {"metadata": {"namespace": namespace, "name": name}})

    def _mark_listed(self, label: str) -> None:
        with self._lock:
            self._listed.add(label)

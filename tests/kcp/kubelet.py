"""A fake kubelet: the part of a node agent that the API server's clients can observe.

Contract:
* :meth:`FakeKubelet.add_nodes` creates Nodes with the given capacity/allocatable, labels and taints, sets their
  ``Ready`` condition and removes the ``node.kubernetes.io/not-ready`` taint that admission adds to new Nodes.
* While started, a watch on pods bound to this kubelet's nodes marks ``Pending`` pods ``Running`` and ``Ready`` (unless
  :meth:`FakeKubelet.leave_status` was told that someone else sets their status) and force-deletes pods that carry a
  ``deletionTimestamp`` (evicted or deleted pods), as a kubelet does once the containers are gone: at once, or, for a
  pod annotated ``desched.test/stop: grace-period``, when its ``deletionTimestamp`` comes (the time the API server
  gave its containers to stop, as for a container that ignores SIGTERM), so that it stays listed as terminating.
* :meth:`FakeKubelet.settle` waits until every event seen so far has been acted on.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any

import urllib3

from tests.kcp.api import Api, ApiError, Json

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
#: a pod with this annotation set to ``grace-period`` is deleted only when its deletionTimestamp comes
STOP_ANNOTATION = "desched.test/stop"
DEFAULT_ALLOCATABLE = {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_object(node: Json) -> tuple[Json, Json]:
    """The creatable Node (metadata and spec only) and the status patch for ``node`` (maybe from a snapshot)."""
    metadata = node.get("metadata") or {}
    spec = copy.deepcopy(node.get("spec") or {})
    spec["taints"] = [taint for taint in spec.get("taints") or [] if taint.get("key") != NOT_READY_TAINT] or None
    spec.pop("providerID", None)
    created: Json = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {key: metadata[key] for key in ("name", "labels", "annotations") if key in metadata},
        "spec": {key: value for key, value in spec.items() if value is not None},
    }
    labels = created["metadata"].setdefault("labels", {})
    labels.setdefault("kubernetes.io/hostname", metadata["name"])
    given = node.get("status") or {}
    allocatable = given.get("allocatable") or given.get("capacity") or DEFAULT_ALLOCATABLE
    stamp = now()
    status = {
        "capacity": given.get("capacity") or allocatable,
        "allocatable": allocatable,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "fake kubelet is posting ready",
                "lastHeartbeatTime": stamp,
                "lastTransitionTime": stamp,
            },
        ],
        "addresses": given.get("addresses") or [{"type": "Hostname", "address": metadata["name"]}],
    }
    return created, {"status": status}


def running_status(pod: Json) -> Json:
    """The status a kubelet reports once every container of ``pod`` runs and passes readiness."""
    stamp = now()
    containers = (pod.get("spec") or {}).get("containers") or []
    conditions = [
        {"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp}
        for kind in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
    ]
    return {
        "phase": "Running",
        "conditions": conditions,
        "startTime": stamp,
        "hostIP": "127.0.0.1",
        "podIP": "127.0.0.1",
        "containerStatuses": [
            {
                "name": container["name"],
                "image": container.get("image", ""),
                "imageID": "",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": stamp}},
            }
            for container in containers
        ],
    }


class FakeKubelet:
    """Plays the kubelet for the nodes it created (see the module contract)."""

    def __init__(self, api: Api, workers: int = 8) -> None:
        self._api = api
        self._nodes: set[str] = set()
        self._external: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="fake-kubelet")
        self._pending: set[Future[None]] = set()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._synced = threading.Event()
        self._stopping_pods: set[str] = set()  # uids whose deletion waits for their deletionTimestamp
        self.errors: list[str] = []

    # -- nodes ---------------------------------------------------------------------------------------------------

    def add_nodes(self, nodes: Iterable[Json]) -> list[str]:
        """Create ``nodes`` (concurrently) and make them Ready; returns their names."""
        wanted = list(nodes)
        with self._lock:
            self._nodes.update(node["metadata"]["name"] for node in wanted)
        list(self._pool.map(self._create_node, wanted))
        return [node["metadata"]["name"] for node in wanted]

    def _create_node(self, node: Json) -> None:
        created, status = node_object(node)
        name = created["metadata"]["name"]
        self._api.create(created)
        self._api.patch("v1", "Node", name, status, subresource="status")
        # TaintNodesByCondition admission added the not-ready taint at creation; a kubelet's node controller clears it.
        self._api.patch("v1", "Node", name, {"spec": {"taints": created["spec"].get("taints")}})

    def remove_nodes(self, names: Iterable[str]) -> None:
        for name in names:
            with contextlib.suppress(ApiError):
                self._api.delete("v1", "Node", name)
            with self._lock:
                self._nodes.discard(name)

    # -- pods ----------------------------------------------------------------------------------------------------

    def leave_status(self, keys: Iterable[tuple[str, str]]) -> None:
        """Do not mark these (namespace, name) pods Running: their creator sets their status."""
        with self._lock:
            self._external.update(keys)

    def start(self, timeout: float = 10.0) -> None:
        self._thread = threading.Thread(target=self._watch_loop, name="fake-kubelet-watch", daemon=True)
        self._thread.start()
        if not self._synced.wait(timeout):
            raise TimeoutError("the fake kubelet's pod watch did not start")

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._pool.shutdown(wait=True, cancel_futures=True)

    def settle(self, timeout: float = 30.0) -> None:
        """Wait until the actions for every event received so far are done."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                pending = [future for future in self._pending if not future.done()]
            if not pending:
                return
            time.sleep(0.02)
        raise TimeoutError("the fake kubelet did not settle")

    def _watch_loop(self) -> None:
        selector = {"fieldSelector": "spec.nodeName!="}
        version = ""
        while not self._stopping.is_set():
            try:
                if not version:
                    listing = self._api.request("GET", "/api/v1/pods", params=selector)
                    for pod in listing.get("items") or []:
                        self._handle(pod)
                    version = listing["metadata"]["resourceVersion"]
                    self._synced.set()
                params = {**selector, "resourceVersion": version, "timeoutSeconds": 2, "allowWatchBookmarks": "true"}
                for event in self._api.stream("/api/v1/pods", params):
                    if event.get("type") == "ERROR":
                        version = ""  # 410 Gone: the version is too old; list again
                        break
                    version = event["object"]["metadata"]["resourceVersion"]
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self._handle(event["object"])
                    if self._stopping.is_set():
                        break
            except (ApiError, OSError, ValueError, KeyError, urllib3.exceptions.HTTPError) as error:
                self.errors.append(f"watch: {error!r}")
                version = ""
                self._stopping.wait(0.5)

    def _handle(self, pod: Json) -> None:
        metadata = pod["metadata"]
        with self._lock:
            if pod["spec"].get("nodeName") not in self._nodes:
                return
            external = (metadata["namespace"], metadata["name"]) in self._external
        if metadata.get("deletionTimestamp"):
            if (metadata.get("annotations") or {}).get(STOP_ANNOTATION) == "grace-period":
                self._delete_when_due(pod)
            else:
                self._submit(self._force_delete, pod)
        elif not external and (pod.get("status") or {}).get("phase", "Pending") == "Pending":
            self._submit(self._mark_running, pod)

    def _submit(self, action: Any, pod: Json) -> None:
        future = self._pool.submit(action, pod)
        with self._lock:
            self._pending = {pending for pending in self._pending if not pending.done()}
            self._pending.add(future)

    def _delete_when_due(self, pod: Json) -> None:
        """Force-delete ``pod`` once its deletionTimestamp has passed (one timer per pod)."""
        metadata = pod["metadata"]
        with self._lock:
            if metadata["uid"] in self._stopping_pods:
                return
            self._stopping_pods.add(metadata["uid"])
        due = datetime.strptime(metadata["deletionTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        delay = max(0.0, (due - datetime.now(timezone.utc)).total_seconds())
        timer = threading.Timer(
            delay, lambda: None if self._stopping.is_set() else self._submit(self._force_delete, pod)
        )
        timer.daemon = True
        timer.start()

    def _force_delete(self, pod: Json) -> None:
        metadata = pod["metadata"]
        try:
            self._api.delete(
                "v1",
                "Pod",
                metadata["name"],
                metadata["namespace"],
                gracePeriodSeconds=0,
                preconditions={"uid": metadata["uid"]},
            )
        except ApiError as error:
            if error.status not in (404, 409):
                self.errors.append(f"delete {metadata['namespace']}/{metadata['name']}: {error}")
        with self._lock:
            self._external.discard((metadata["namespace"], metadata["name"]))

    def _mark_running(self, pod: Json) -> None:
        metadata = pod["metadata"]
        patch = {"metadata": {"resourceVersion": metadata["resourceVersion"]}, "status": running_status(pod)}
        try:
            self._api.patch("v1", "Pod", metadata["name"], patch, metadata["namespace"], subresource="status")
        except ApiError as error:
            if error.status not in (404, 409):  # 409: changed meanwhile; the next event decides again
                self.errors.append(f"status {metadata['namespace']}/{metadata['name']}: {error}")

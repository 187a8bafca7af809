"""The live driver's pieces that need no cluster: the Eviction and Event bodies, error classification, metrics."""

from __future__ import annotations

import urllib.request
from typing import Any

import pytest

from desched.errors import KubeError
from desched.executor.cluster import Cluster
from desched.executor.evictions import BackendError, Failure, Limits, Outcome, PodEvictor
from desched.executor.live import Evictions, list_cluster
from desched.executor.metrics import ExecutorMetrics, serve
from desched.policy.model import decode
from desched.runtime.kube import KubeClient
from tests.executor.builders import build_node, build_pod, set_rs_owner


class RecordingKube:
    """Records requests; answers each eviction with the next scripted error (None: success)."""

    def __init__(self, *errors: KubeError | None) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.errors = list(errors)

    def request(self, method: str, path: str, params: Any = None, body: Any = None) -> dict[str, Any]:
        self.requests.append((method, path, body))
        if path.endswith("/eviction") and self.errors:
            error = self.errors.pop(0)
            if error is not None:
                raise error
        return {}


class ServingKube(KubeClient):
    """A server whose discovery and collections are ``documents`` by path (anything else: 404); records the GETs."""

    def __init__(self, documents: dict[str, dict[str, Any]]) -> None:
        self._discovery = {}
        self.documents = documents
        self.paths: list[str] = []

    def get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.paths.append(path)
        if path not in self.documents:
            raise KubeError(f"GET {path}: 404", 404)
        return self.documents[path]


def _served(*resources: tuple[str, str]) -> dict[str, Any]:
    return {"resources": [{"name": name, "kind": kind, "namespaced": True} for name, kind in resources]}


def test_a_cycle_lists_what_the_declaration_lists_in_order_with_pdbs_at_v1beta1_on_an_old_server() -> None:
    from desched.deployment.access import DESCHED_RUN

    kube = ServingKube(
        {
            "/api/v1": _served(("nodes", "Node"), ("namespaces", "Namespace"), ("pods", "Pod"),
                               ("persistentvolumeclaims", "PersistentVolumeClaim"), ("pods/eviction", "Eviction")),
            "/apis/scheduling.k8s.io/v1": _served(("priorityclasses", "PriorityClass")),
            "/apis/policy/v1beta1": _served(("poddisruptionbudgets", "PodDisruptionBudget")),
            **{path: {"items": [{"metadata": {"name": path}}]} for path in (
                "/api/v1/nodes", "/api/v1/namespaces", "/apis/scheduling.k8s.io/v1/priorityclasses",
                "/api/v1/persistentvolumeclaims", "/apis/policy/v1beta1/poddisruptionbudgets", "/api/v1/pods")},
        }
    )  # fmt: skip
    listed = [obj["kind"] for obj in list_cluster(kube)]
    assert listed == ["Node", "Namespace", "PriorityClass", "PersistentVolumeClaim", "PodDisruptionBudget", "Pod"]
    collections = [path for path in kube.paths if "items" in kube.documents.get(path, {})]
    assert [path.rpartition("/")[2] for path in collections] == [
        need.resource for need in DESCHED_RUN if "list" in need.verbs
    ]


def _pod() -> dict[str, Any]:
    return set_rs_owner(build_pod("web-1", 100, 0, "n1"))


def test_an_eviction_has_no_api_version_and_carries_upstreams_annotations_and_grace_period() -> None:
    kube = RecordingKube(None)
    backend = Evictions(kube, decode({"gracePeriodSeconds": 5}))  # type: ignore[arg-type]
    assert backend.evict(_pod(), "prof", "RemovePodsViolatingNodeTaints") is None
    (method, path, body), (event_method, event_path, event) = kube.requests
    assert (method, path) == ("POST", "/api/v1/namespaces/default/pods/web-1/eviction")
    assert body == {
        "metadata": {
            "name": "web-1",
            "namespace": "default",
            "annotations": {
                "reason": "triggered by prof/RemovePodsViolatingNodeTaints: ",
                "requested-by": "sigs.k8s.io/descheduler",
            },
        },
        "deleteOptions": {"gracePeriodSeconds": 5},
    }
    assert (event_method, event_path) == ("POST", "/apis/events.k8s.io/v1/namespaces/default/events")
    assert event["type"] == "Normal" and event["reason"] == "RemovePodsViolatingNodeTaints"
    assert event["action"] == "Descheduled"
    assert event["note"] == "pod eviction from n1 node by sigs.k8s.io/descheduler"
    assert event["regarding"]["name"] == "web-1" and event["metadata"]["name"].startswith("web-1.")


def test_without_grace_period_the_pods_own_applies() -> None:
    kube = RecordingKube(None)
    Evictions(kube, decode({})).evict(_pod(), "p", "x")  # type: ignore[arg-type]
    assert "deleteOptions" not in kube.requests[0][2]


def test_refusals_are_reported_per_pod_and_failure_events_only_when_asked() -> None:
    refused = KubeError("POST ...: 429 Cannot evict pod as it would violate the pod's disruption budget.", 429)
    kube = RecordingKube(refused, KubeError("POST ...: 404 not found", 404))
    backend = Evictions(kube, decode({}))  # type: ignore[arg-type]
    error = backend.evict(_pod(), "p", "x")
    assert error is not None and (error.failure, error.status) == (Failure.REFUSED, 429)
    assert error.message.endswith("(ignoring)")
    assert backend.evict(_pod(), "p", "x") == BackendError(Failure.GONE, 404, "POST ...: 404 not found")
    assert [path for _, path, _ in kube.requests if "events" in path] == []

    kube = RecordingKube(refused)
    Evictions(kube, decode({"evictionFailureEventNotification": True})).evict(_pod(), "p", "x")  # type: ignore[arg-type]
    assert kube.requests[-1][2]["type"] == "Warning" and kube.requests[-1][2]["reason"] == "EvictionFailed"


def test_a_failed_eviction_counts_toward_no_limit() -> None:
    pods = [_pod(), set_rs_owner(build_pod("web-2", 100, 0, "n1"))]
    cluster = Cluster.from_objects([build_node("n1", 1000, 1000, 10), *pods])
    kube = RecordingKube(KubeError("429", 429), None)
    evictor = PodEvictor(cluster, Limits(per_node=1), Evictions(kube, decode({})))  # type: ignore[arg-type]
    assert evictor.evict(pods[0], "p", "x") is Outcome.FAILED
    assert evictor.evict(pods[1], "p", "x") is Outcome.SUCCESS
    assert [failure.status for failure in evictor.failures] == [429]


def test_metrics_use_upstreams_names_and_are_served() -> None:
    metrics = ExecutorMetrics("0.1.0")
    metrics.evicted("success", "PodLifeTime", "default", "shop", "n1")
    metrics.evicted("success", "PodLifeTime", "default", "shop", "n1")
    metrics.evicted("maximum number of evicted pods per node reached", "PodLifeTime", "default", "shop", "n1")
    metrics.loop_duration(0.2)
    metrics.strategy_duration("default", "PodLifeTime", 0.03)
    text = metrics.exposition()
    assert (
        'descheduler_pods_evicted_total{result="success",strategy="PodLifeTime",profile="default",'
        'namespace="shop",node="n1"} 2' in text
    )
    assert 'descheduler_pods_evicted{result="maximum number of evicted pods per node reached",' in text
    assert 'descheduler_loop_duration_seconds_bucket{le="0.5"} 1' in text
    assert 'descheduler_loop_duration_seconds_bucket{le="0.1"} 0' in text
    assert "descheduler_descheduler_loop_duration_seconds_count 1" in text
    assert 'descheduler_strategy_duration_seconds_count{strategy="PodLifeTime",profile="default"} 1' in text
    assert "# TYPE descheduler_build_info gauge" in text
    server = serve(metrics, "127.0.0.1:0")
    try:
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            assert answer.read().decode() == metrics.exposition()
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=5)
        assert missing.value.code == 404
        missing.value.close()
    finally:
        server.shutdown()
        server.server_close()

"""The fake kubelet does what a node agent's clients can observe."""

from __future__ import annotations

from typing import Any

import pytest

from tests.kcp.api import Api, ApiError
from tests.kcp.kubelet import FakeKubelet
from tests.kcp.objects import pod, wait_for

pytestmark = pytest.mark.cluster


def test_nodes_are_ready_untainted_and_sized(kube: Api, nodes: Any) -> None:
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    (name,) = nodes(1, allocatable={"cpu": "8", "memory": "32Gi", "pods": "50"}, labels={"zone": "z1"}, taints=[taint])
    node = kube.get("v1", "Node", name)
    assert node["metadata"]["labels"]["zone"] == "z1"
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == name
    assert node["spec"]["taints"] == [taint]  # the not-ready taint admission added is gone
    assert node["status"]["allocatable"] == {"cpu": "8", "memory": "32Gi", "pods": "50"}
    assert [(c["type"], c["status"]) for c in node["status"]["conditions"]] == [("Ready", "True")]


def test_bound_pods_run_and_unbound_pods_wait(kube: Api, kubelet: FakeKubelet, namespace: str, nodes: Any) -> None:
    (node,) = nodes(1)
    kube.create(pod("bound", namespace, node))
    kube.create(pod("unbound", namespace))

    def phase(name: str) -> str:
        return str(kube.get("v1", "Pod", name, namespace)["status"].get("phase"))

    wait_for(lambda: phase("bound") == "Running", what="the bound pod to run")
    status = kube.get("v1", "Pod", "bound", namespace)["status"]
    assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "True"
    assert status["containerStatuses"][0]["ready"] is True
    kubelet.settle()
    assert phase("unbound") == "Pending"


def test_deleted_bound_pods_are_removed(kube: Api, kubelet: FakeKubelet, namespace: str, nodes: Any) -> None:
    (node,) = nodes(1)
    kube.create(pod("doomed", namespace, node))
    wait_for(lambda: kube.get("v1", "Pod", "doomed", namespace)["status"].get("phase") == "Running", what="running")
    kube.delete("v1", "Pod", "doomed", namespace)  # the default 30 s grace period: a real kubelet would finish it

    def gone() -> bool:
        try:
            kube.get("v1", "Pod", "doomed", namespace)
        except ApiError as error:
            return error.status == 404
        return False

    wait_for(gone, timeout=10, what="the fake kubelet to force-delete the terminating pod")
    assert not kubelet.errors

"""Loading a cluster snapshot into the real API server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.kcp.api import Api, Json
from tests.kcp.objects import wait_for
from tests.kcp.snapshot import LoadError, LoadReport, read

pytestmark = pytest.mark.cluster
SMALL = Path(__file__).parent.parent / "fixtures" / "snapshots" / "small.yaml"
Loader = Callable[[list[Json]], tuple[str, LoadReport]]


def test_a_snapshot_loads_with_statuses_owners_and_budgets(kube: Api, load_snapshot: Loader) -> None:
    suffix, report = load_snapshot(read([SMALL]))
    namespace = "shop" + suffix
    created = {kind: count for kind, count in report.created.items() if kind != "PriorityClass"}  # shared, cluster-wide
    assert created == {
        "Namespace": 1,
        "Node": 2,
        "Pod": 5,
        "ReplicaSet": 1,
        "PodDisruptionBudget": 1,
        "PersistentVolumeClaim": 1,
    }
    assert report.synthesized == 1

    pods = {item["metadata"]["name"]: item for item in kube.list("v1", "Pod", namespace)}
    assert sorted(pods) == ["agent-x1", "batch-oom", "web-7d9f-a", "web-7d9f-b", "web-7d9f-c"]
    assert pods["web-7d9f-a"]["spec"]["priority"] == 1000  # set by the Priority admission plugin from the class
    assert pods["web-7d9f-a"]["spec"]["nodeName"] == "n1" + suffix
    assert pods["web-7d9f-b"]["status"]["containerStatuses"][0]["restartCount"] == 7
    assert pods["batch-oom"]["status"]["phase"] == "Failed"
    assert pods["batch-oom"]["status"]["reason"] == "Evicted"
    assert pods["web-7d9f-c"]["status"]["phase"] == "Running"  # no status recorded: Running and Ready
    assert {c["type"]: c["status"] for c in pods["web-7d9f-c"]["status"]["conditions"]}["Ready"] == "True"

    replica_set = kube.get("apps/v1", "ReplicaSet", "web-7d9f", namespace)
    assert replica_set["spec"]["replicas"] == 3
    owner_uids = {pods[name]["metadata"]["ownerReferences"][0]["uid"] for name in pods if name.startswith("web")}
    assert owner_uids == {replica_set["metadata"]["uid"]}
    assert pods["agent-x1"]["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"  # kept, although dangling

    version = kube.pdb_version()

    def allowed() -> int | None:
        status = kube.get(version, "PodDisruptionBudget", "web", namespace).get("status") or {}
        return status.get("disruptionsAllowed") if status.get("expectedPods") == 3 else None

    assert wait_for(allowed, what="the disruption controller to use the synthesized ReplicaSet's scale") == 1

    nodes = {name: kube.get("v1", "Node", name + suffix) for name in ("n1", "n2")}
    assert nodes["n1"]["status"]["allocatable"]["cpu"] == "2"
    assert [t["key"] for t in nodes["n2"]["spec"]["taints"]] == ["dedicated"]
    assert all(
        {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"] == "True" for node in nodes.values()
    )


def test_objects_the_server_rejects_are_listed(load_snapshot: Loader) -> None:
    broken = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bad"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "no-containers", "namespace": "bad"}, "spec": {}},
        {"apiVersion": "v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "bad"}},
    ]
    with pytest.raises(LoadError) as error:
        load_snapshot(broken)
    message = str(error.value)
    assert message.startswith("2 objects could not be created:")
    assert "Pod bad-" in message and "no-containers: 422" in message
    assert "Widget bad-" in message and "the server serves no Widget in v1" in message

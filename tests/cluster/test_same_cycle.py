"""What a real run sees of a pod it evicted earlier in the same cycle, on the real API server (issue 28, item 2;
docs/executor-semantics.md#6-what-an-evicted-pod-is-for-the-rest-of-the-cycle).

The pods here take their grace period to stop (the fake kubelet deletes them when their ``deletionTimestamp`` comes),
as a container that ignores SIGTERM does: after the eviction the API keeps them, terminating, which is what upstream's
informer holds for the rest of the cycle. In each case ``desched run`` evicts exactly what ``desched simulate``
predicted from a snapshot of the same objects, which is not what ``simulate --dry-run`` (upstream's dry run, where the
pod is gone) predicts; afterwards the evicted pods are still listed with their ``deletionTimestamp``, and a second
cycle evicts nothing more (Filter refuses terminating pods).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.test_eviction_corners import _desched, _snapshot
from tests.cluster.test_run_resilience import RUN_LABEL
from tests.executor.test_same_cycle import SPREAD, TAINT, TAINTS, policy
from tests.kcp.api import Api, Json
from tests.kcp.controlplane import ControlPlane
from tests.kcp.kubelet import STOP_ANNOTATION
from tests.kcp.snapshot import LoadReport

pytestmark = pytest.mark.cluster
Loader = Callable[[list[Json]], tuple[str, LoadReport]]


def _node(name: str, run: str, tainted: bool = False, **labels: str) -> Json:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {RUN_LABEL: run, "kubernetes.io/hostname": name, **labels}},
        "spec": {"taints": [TAINT] if tainted else []},
    }


def _pod(name: str, node: str, owner: str, **spec: Any) -> Json:
    """A pod of ReplicaSet ``owner`` that takes its 30 s grace period to stop."""
    reference = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": f"uid-{owner}"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "cycle",
            "labels": {"app": owner},
            "annotations": {STOP_ANNOTATION: "grace-period"},
            "ownerReferences": [reference],
        },
        "spec": {
            "nodeName": node,
            "terminationGracePeriodSeconds": 30,
            "containers": [{"name": "c", "image": f"{owner}:1"}],
            **spec,
        },
    }


def _three_ways(
    control_plane: ControlPlane,
    kube: Api,
    load_snapshot: Loader,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    objects: tuple[list[Json], list[Json]],
    plugins: tuple[tuple[str, str, Json], ...],
) -> tuple[list[str], list[str], list[str], str]:
    """Load ``objects`` (nodes, pods), then: what simulate predicts, what simulate --dry-run predicts, what run did
    (``plugin/pod`` in eviction order), and the namespace."""
    run = secrets.token_hex(3)
    nodes, pods = objects
    for node in nodes:
        node["metadata"]["labels"][RUN_LABEL] = run
    suffix, _ = load_snapshot([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cycle"}}, *nodes, *pods])
    namespace = "cycle" + suffix
    the_policy = policy(*plugins, evictor={"minReplicas": 3}, nodeSelector=f"{RUN_LABEL}={run}")
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(the_policy), encoding="utf-8")
    snapshot = _snapshot(kube, tmp_path, namespace, run)
    common = ("--policy", str(policy_file))
    predicted = _desched(capsys, "simulate", *common, "--cluster", snapshot)
    dry = _desched(capsys, "simulate", *common, "--cluster", snapshot, "--dry-run")
    done = _desched(capsys, "run", *common, "--kubeconfig", control_plane.kubeconfig)
    assert done["failures"] == [], done["failures"]
    again = _desched(capsys, "run", *common, "--kubeconfig", control_plane.kubeconfig)
    assert again["evictions"] == [], "a second cycle meets the evicted pods terminating: Filter refuses them"

    def evicted(document: Json) -> list[str]:
        return [f"{eviction['plugin']}/{eviction['pod']}" for eviction in document["evictions"]]

    return evicted(predicted), evicted(dry), evicted(done), namespace


def _terminating(kube: Api, namespace: str) -> list[str]:
    """The pods of ``namespace`` the API still lists with a deletionTimestamp."""
    return sorted(
        pod["metadata"]["name"] for pod in kube.list("v1", "Pod", namespace) if pod["metadata"].get("deletionTimestamp")
    )


def test_an_owner_at_exactly_min_replicas_loses_every_pod_to_a_real_run(
    control_plane: ControlPlane, kube: Api, load_snapshot: Loader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """3 pods of one owner on 3 tainted nodes, minReplicas 3: the owner index still counts the terminating pods."""
    nodes = [_node("a", ""), *(_node(f"b{i}", "", tainted=True) for i in range(3))]
    pods = [_pod(f"web-{i}", f"b{i}", "web") for i in range(3)]
    predicted, dry, done, namespace = _three_ways(
        control_plane, kube, load_snapshot, tmp_path, capsys, (nodes, pods), (TAINTS,)
    )
    every = [f"RemovePodsViolatingNodeTaints/web-{i}" for i in range(3)]
    assert sorted(done) == sorted(predicted) == every
    assert len(dry) == 1
    assert _terminating(kube, namespace) == ["web-0", "web-1", "web-2"]


@pytest.mark.parametrize(
    ("balance", "placement", "spec"),
    [
        # dup-0 goes to NodeTaints; the owner keeps 3 pods for minReplicas, so RemoveDuplicates takes a duplicate on a
        pytest.param("RemoveDuplicates", ("", "", ""), {}, id="duplicates"),
        # s-0 goes to NodeTaints; zone z1 then holds 2 counted pods against none in z2, and the owner still has 3 for
        # minReplicas, so one pod moves
        pytest.param(
            "RemovePodsViolatingTopologySpreadConstraint",
            ("z1", "z1", "z2"),
            {"topologySpreadConstraints": [SPREAD]},
            id="spread",
        ),
    ],
)
def test_a_balance_plugin_still_counts_an_owner_pod_evicted_earlier_in_the_cycle(
    control_plane: ControlPlane,
    kube: Api,
    load_snapshot: Loader,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    balance: str,
    placement: tuple[str, str, str],
    spec: Json,
) -> None:
    """Nodes a, b (tainted) and c in zones ``placement``; pod 0 of the owner on b, pods 1 and 2 on a."""
    zones = [{"zone": zone} if zone else {} for zone in placement]
    nodes = [_node(name, "", tainted=name == "b", **labels) for name, labels in zip("abc", zones, strict=True)]
    pods = [_pod(f"own-{i}", on, "own", **spec) for i, on in enumerate("baa")]
    plugins = (TAINTS, ("balance", balance, {}))
    predicted, dry, done, namespace = _three_ways(
        control_plane, kube, load_snapshot, tmp_path, capsys, (nodes, pods), plugins
    )
    assert done == predicted and [name.split("/")[0] for name in done] == ["RemovePodsViolatingNodeTaints", balance]
    assert dry == ["RemovePodsViolatingNodeTaints/own-0"]
    assert _terminating(kube, namespace) == sorted(name.split("/")[1] for name in done)

"""What an evicted pod is for the rest of its cycle
(docs/executor-semantics.md#6-what-an-evicted-pod-is-for-the-rest-of-the-cycle).

Each case is a whole policy through ``desched simulate``: by default a real run (the pod stays listed as terminating:
``minReplicas``, node usage, node fit and anti-affinity partners still count it, ``Filter`` refuses it), and with
``--dry-run`` upstream's dry run (the pod is gone). The expected numbers come from upstream's code as the document
cites it; tests/cluster/test_same_cycle.py proves the real-run column on a real API server.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.cli import main
from tests.executor.builders import build_node, build_pod, set_rs_owner

Json = dict[str, Any]
TAINT = {"key": "maintenance", "value": "yes", "effect": "NoSchedule"}
TOLERATION = {"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}
#: spreads the pods of owner ``own`` over the ``zone`` label
SPREAD = {
    "maxSkew": 1,
    "topologyKey": "zone",
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "own"}},
}


def node(name: str, tainted: bool = False, **labels: str) -> Json:
    built = build_node(name, 4000, 8 * 2**30, 110)
    built["metadata"]["labels"] = {"kubernetes.io/hostname": name, **labels}
    if tainted:
        built["spec"]["taints"] = [TAINT]
    return built


def pod(name: str, on: str, owner: str, **spec: Any) -> Json:
    built = set_rs_owner(build_pod(name, 100, 2**20, on), owner, f"uid-{owner}")
    built["metadata"]["labels"] = {"app": owner}
    built["spec"].update(spec)
    return built


def policy(*plugins: tuple[str, str, Json], evictor: Json | None = None, **top: Any) -> Json:
    """A one-profile policy: ``plugins`` are (extension point, name, args), in order."""
    points: dict[str, list[str]] = {}
    for point, name, _ in plugins:
        points.setdefault(point, []).append(name)
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        **top,
        "profiles": [
            {
                "name": "p",
                "pluginConfig": [{"name": "DefaultEvictor", "args": evictor or {}}]
                + [{"name": name, "args": args} for _, name, args in plugins],
                "plugins": {point: {"enabled": names} for point, names in points.items()},
            }
        ],
    }


def simulate(tmp_path: Path, the_policy: Json, objects: list[Json], *options: str) -> Json:
    """``desched simulate --format json`` on ``objects`` (``--jobs 1``)."""
    policy_file, snapshot = tmp_path / "policy.yaml", tmp_path / "snapshot.json"
    policy_file.write_text(yaml.safe_dump(the_policy), encoding="utf-8")
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}), encoding="utf-8")
    argv = ["simulate", "--policy", str(policy_file), "--cluster", str(snapshot), "--format", "json", "--jobs", "1"]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main([*argv, *options, "--now", "2026-11-01T00:00:00Z"]) == 0
    document: Json = json.loads(buffer.getvalue())
    return document


def evicted(document: Json) -> list[tuple[str, str]]:
    return [(eviction["plugin"], eviction["pod"]) for eviction in document["evictions"]]


TAINTS = ("deschedule", "RemovePodsViolatingNodeTaints", {})


def test_an_owner_at_exactly_min_replicas_loses_every_pod_in_a_real_run_and_one_in_a_dry_run(tmp_path: Path) -> None:
    """minReplicas counts the owner's pods in the informer's owner index: a terminating pod still counts."""
    objects = [node("a"), *(node(f"b{i}", tainted=True) for i in range(3))]
    objects += [pod(f"web-{i}", f"b{i}", "web") for i in range(3)]
    strict = policy(TAINTS, evictor={"minReplicas": 3})
    real = [("RemovePodsViolatingNodeTaints", f"web-{i}") for i in range(3)]
    assert evicted(simulate(tmp_path, strict, objects)) == real
    assert evicted(simulate(tmp_path, strict, objects, "--dry-run")) == real[:1]
    # gracePeriodSeconds 0: the API deletes the pod at once, in a real run too
    at_once = policy(TAINTS, evictor={"minReplicas": 3}, gracePeriodSeconds=0)
    assert evicted(simulate(tmp_path, at_once, objects)) == real[:1]


def test_remove_duplicates_after_an_earlier_eviction_of_the_same_owner(tmp_path: Path) -> None:
    """dup-0 goes to NodeTaints; in a real run the owner still has 3 pods, so RemoveDuplicates may take dup-2."""
    objects = [node("a"), node("b", tainted=True), node("c")]
    objects += [pod("dup-0", "b", "dup"), pod("dup-1", "a", "dup"), pod("dup-2", "a", "dup")]
    the_policy = policy(TAINTS, ("balance", "RemoveDuplicates", {}), evictor={"minReplicas": 3})
    first = ("RemovePodsViolatingNodeTaints", "dup-0")
    assert evicted(simulate(tmp_path, the_policy, objects)) == [first, ("RemoveDuplicates", "dup-2")]
    assert evicted(simulate(tmp_path, the_policy, objects, "--dry-run")) == [first]


def test_topology_spread_after_an_earlier_eviction_of_the_same_owner(tmp_path: Path) -> None:
    """s-0 goes to NodeTaints; both views leave the terminating pod out of zone z1's size (2 against 0), and only in
    a real run does minReplicas still let one pod move."""
    objects = [node("a", zone="z1"), node("b", tainted=True, zone="z1"), node("c", zone="z2")]
    objects += [pod(f"s-{i}", on, "own", topologySpreadConstraints=[SPREAD]) for i, on in enumerate("baa")]
    balance = ("balance", "RemovePodsViolatingTopologySpreadConstraint", {})
    the_policy = policy(TAINTS, balance, evictor={"minReplicas": 3})
    first = ("RemovePodsViolatingNodeTaints", "s-0")
    real = evicted(simulate(tmp_path, the_policy, objects))
    assert real[0] == first and [plugin for plugin, _ in real[1:]] == ["RemovePodsViolatingTopologySpreadConstraint"]
    assert evicted(simulate(tmp_path, the_policy, objects, "--dry-run")) == [first]


def test_a_terminating_pod_is_still_an_anti_affinity_partner(tmp_path: Path) -> None:
    """InterPodAntiAffinity lists pods without Filter: p, evicted by NodeTaints, still repels q in a real run."""
    away_from_p = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "p"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    objects = [node("a"), node("b", tainted=True)]
    objects += [pod("p", "b", "p"), pod("q", "b", "q", tolerations=[TOLERATION], affinity=away_from_p)]
    the_policy = policy(TAINTS, ("deschedule", "RemovePodsViolatingInterPodAntiAffinity", {}))
    first = ("RemovePodsViolatingNodeTaints", "p")
    assert evicted(simulate(tmp_path, the_policy, objects)) == [first, ("RemovePodsViolatingInterPodAntiAffinity", "q")]
    assert evicted(simulate(tmp_path, the_policy, objects, "--dry-run")) == [first]


def test_a_pod_with_the_evict_annotation_is_evicted_again_by_a_later_plugin(tmp_path: Path) -> None:
    """The evict annotation passes Filter before the terminating check, and the API evicts a terminating pod again."""
    restarting = pod("r", "b", "r")
    restarting["metadata"]["annotations"] = {"descheduler.alpha.kubernetes.io/evict": "true"}
    restarting["status"] = {"phase": "Running", "containerStatuses": [{"name": "", "restartCount": 50}]}
    objects = [node("a"), node("b", tainted=True), restarting]
    restarts = ("deschedule", "RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 10})
    the_policy = policy(TAINTS, restarts)
    first = ("RemovePodsViolatingNodeTaints", "r")
    real = simulate(tmp_path, the_policy, objects)
    assert evicted(real) == [first, ("RemovePodsHavingTooManyRestarts", "r")]
    assert real["summary"]["evicted"] == 2  # counted twice toward the limits, as upstream's PodEvictor counts
    assert evicted(simulate(tmp_path, the_policy, objects, "--dry-run")) == [first]


@pytest.mark.parametrize("view", [(), ("--dry-run",)])
def test_a_failed_pod_is_gone_at_once_in_both_views(tmp_path: Path, view: tuple[str, ...]) -> None:
    """A Failed pod has no grace: the API deletes it, so minReplicas counts it no more in either view."""
    failed = [pod(f"f-{i}", f"b{i}", "f") for i in range(2)]
    for each in failed:
        each["status"] = {"phase": "Failed"}
    objects = [node("b0"), node("b1"), *failed]
    the_policy = policy(("deschedule", "RemoveFailedPods", {}), evictor={"minReplicas": 2})
    assert evicted(simulate(tmp_path, the_policy, objects, *view)) == [("RemoveFailedPods", "f-0")]

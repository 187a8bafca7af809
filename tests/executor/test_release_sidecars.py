"""The ``native-sidecars`` release row (:mod:`desched.executor.releases`): requests as v0.27-v0.34 compute them
(``pkg/utils/pod.go`` at v0.34.0: ``PodRequestsAndLimits``) next to v0.35's ``resourcehelper.PodRequests`` (06cab8e).

Upstream has no request table of its own at v0.34.0 (``pkg/utils`` tests only predicates); 06cab8e added the sidecar
and overhead cases to ``TestNodeFit`` (``pkg/descheduler/node/node_test.go``), ported here and run at both sides:
their sidecars alone exceed the node, so both computations agree. The cases after them differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from desched.cli import main
from desched.executor.cluster import Cluster
from desched.executor.evictions import Limits, PodEvictor
from desched.executor.framework import prepare_policy, run_cycle
from desched.executor.nodefit import node_set
from desched.executor.podutil import pod_requests, usage_requests_before_sidecars
from desched.executor.releases import NATIVE_SIDECARS, ReleaseDecisions
from desched.policy.model import decode
from tests.executor.builders import NOW, build_node, build_pod, one_plugin_policy, set_rs_owner
from tests.executor.test_podutil import REQUESTS, container, pod_with, sidecar

Json = dict[str, Any]
V34, V35 = ReleaseDecisions(34), ReleaseDecisions(35)


def resources(cpu_milli: int, memory: int) -> Json:
    """Upstream's ``createResourceList(cpu, memory, 0)``."""
    return {"cpu": f"{cpu_milli}m", "memory": str(memory), "ephemeral-storage": "0"}


def upstream_pod(init: Json | None = None, overhead: Json | None = None) -> Json:
    """``test.BuildTestPod("p1", 1, 100, "", ...)`` with a native sidecar of ``init`` or an ``overhead``."""
    pod = build_pod("p1", 1, 100)
    if init is not None:
        pod["spec"]["initContainers"] = [sidecar(init)]
    if overhead is not None:
        pod["spec"]["overhead"] = overhead
    return pod


class FitCase(NamedTuple):
    description: str
    pod: Json
    fits_v34: bool
    fits_v35: bool


FIT_CASES = [
    FitCase(
        "Pod with native sidecars with too much cpu does not fit on node",
        upstream_pod(resources(100000, 100 * 1000 * 1000)),
        False,
        False,
    ),
    FitCase(
        "Pod with native sidecars with too much memory does not fit on node",
        upstream_pod(resources(100, 1000 * 1000 * 1000 * 1000)),
        False,
        False,
    ),
    FitCase("Pod with small native sidecars fits on node", upstream_pod(resources(100, 100 * 1000 * 1000)), True, True),
    FitCase(
        "Pod with large overhead does not fit on node",
        upstream_pod(overhead=resources(100000, 100 * 1000 * 1000)),
        False,
        False,
    ),
    FitCase("Pod with small overhead fits on node", upstream_pod(overhead=resources(1, 1000 * 1000)), True, True),
    # desched's: the containers and the sidecar fit alone, not together (v0.34 takes the larger of the two)
    FitCase("containers and sidecar fit only apart", upstream_pod(resources(64000, 0)), True, False),
]


@pytest.mark.parametrize("strategy", ["index", "scan"])
@pytest.mark.parametrize("case", FIT_CASES, ids=lambda case: case.description)
def test_node_fit_counts_sidecars_from_v0_35(case: FitCase, strategy: str) -> None:
    for release, expected in ((V34, case.fits_v34), (V35, case.fits_v35)):
        cluster = Cluster.from_objects([build_node("node", 64000, 128 * 1000 * 1000 * 1000, 2), case.pod])
        cluster.fit_strategy = strategy
        cluster.count_sidecars(not release.older(NATIVE_SIDECARS))
        assert cluster.fit().fits_any(case.pod, node_set(cluster.nodes), skip_own=False) is expected, release


OLDER_REQUESTS = [
    (
        "a sidecar competes alone with the containers",
        pod_with([container({"cpu": "500m"})], init=[sidecar({"cpu": "300m"}), container({"cpu": "600m"})]),
        {"cpu": 600},
        {"cpu": 900},
    ),
    (
        "a sidecar is not added to the sum",
        pod_with([container({"cpu": "500m", "memory": "1"})], init=[sidecar({"cpu": "200m"})]),
        {"cpu": 500, "memory": 1},
        {"cpu": 700, "memory": 1},
    ),
    (
        "pod-level requests are ignored",
        pod_with([container({"cpu": "500m"})], resources={"requests": {"cpu": "1", "memory": "1Gi"}}),
        {"cpu": 500},
        {"cpu": 1000, "memory": 2**30},
    ),
    (
        "overhead is added to every key, named before or not",
        pod_with([container({"cpu": "500m"})], init=[sidecar({"cpu": "1"})], overhead={"memory": "10"}),
        {"cpu": 1000, "memory": 10},
        {"cpu": 1500, "memory": 10},
    ),
]


@pytest.mark.parametrize(
    ("pod", "older", "newer"), [case[1:] for case in OLDER_REQUESTS], ids=[case[0] for case in OLDER_REQUESTS]
)
def test_requests_before_and_after_v0_35(pod: Json, older: Json, newer: Json) -> None:
    assert pod_requests(pod, sidecars=False) == older
    assert pod_requests(pod) == pod_requests(pod, sidecars=True) == newer


def plain(pod: Json) -> bool:
    """No native sidecar and no pod-level resources: the two computations agree."""
    spec = pod.get("spec") or {}
    return "resources" not in spec and all(
        init.get("restartPolicy") != "Always" for init in spec.get("initContainers") or ()
    )


PLAIN_REQUESTS = [case for case in REQUESTS if plain(case[1])]


@pytest.mark.parametrize(
    ("pod", "expected"), [case[1:] for case in PLAIN_REQUESTS], ids=[case[0] for case in PLAIN_REQUESTS]
)
def test_requests_agree_without_sidecars_and_pod_level_requests(pod: Json, expected: Json) -> None:
    assert pod_requests(pod, sidecars=False) == expected


def test_the_cluster_drops_cached_requests_when_the_computation_changes() -> None:
    pod = upstream_pod(resources(1000, 0))
    pod["spec"]["nodeName"] = "node"
    cluster = Cluster.from_objects([build_node("node", 64000, 10**9, 2), pod])
    assert cluster.pod_requests(pod)["cpu"] == cluster.requested("node")["cpu"] == 1001
    cluster.count_sidecars(False)
    assert cluster.pod_requests(pod)["cpu"] == cluster.requested("node")["cpu"] == 1000
    cluster.count_sidecars(True)
    assert cluster.pod_requests(pod)["cpu"] == 1001


def sidecar_cluster() -> list[Json]:
    """Two 4-core nodes; n1 runs four replicas of 500m with a 500m native sidecar each: 100 % of its cpu counting the
    sidecars (v0.35 on), 50 % without (v0.34)."""
    pods = []
    for index in range(4):
        pod = set_rs_owner(build_pod(f"web-{index}", 500, 0, "n1"))
        pod["spec"]["initContainers"] = [sidecar({"cpu": "500m"})]
        pods.append(pod)
    return [build_node("n1", 4000, 8 * 2**30, 110), build_node("n2", 4000, 8 * 2**30, 110), *pods]


THRESHOLDS = {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}}
POLICY = one_plugin_policy("LowNodeUtilization", "balance", THRESHOLDS)


def evictions(objects: list[Json], release: ReleaseDecisions) -> int:
    """How many pods a cycle of :data:`POLICY` evicts."""
    cluster = Cluster.from_objects(objects)
    evictor = PodEvictor(cluster, Limits())
    run_cycle(prepare_policy(decode(POLICY)), cluster, NOW, evictor, release=release)
    return len(evictor.evictions)


@pytest.mark.parametrize(("release", "evicted"), [(V34, 0), (V35, 2), (ReleaseDecisions(), 2)])
def test_low_node_utilization_counts_sidecars_from_v0_35(release: ReleaseDecisions, evicted: int) -> None:
    assert evictions(sidecar_cluster(), release) == evicted


def overhead_cluster() -> list[Json]:
    """n1 runs four replicas that request no cpu and run with 600m of cpu overhead: 60 % of its cpu."""
    pods = []
    for index in range(4):
        pod = set_rs_owner(build_pod(f"vm-{index}", -1, 1, "n1"))
        pod["spec"]["overhead"] = {"cpu": "600m"}
        pods.append(pod)
    return [build_node("n1", 4000, 8 * 2**30, 110), build_node("n2", 4000, 8 * 2**30, 110), *pods]


def test_usage_before_sidecars_adds_overhead_only_to_requested_resources() -> None:
    pod = overhead_cluster()[2]
    assert pod_requests(pod, sidecars=False) == {"cpu": 600, "memory": 1}
    assert usage_requests_before_sidecars(pod) == {"memory": 1}
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1m"
    assert usage_requests_before_sidecars(pod) == {"cpu": 601, "memory": 1}


@pytest.mark.parametrize(("release", "evicted"), [(V34, 4), (V35, 1)])
def test_low_node_utilization_takes_overhead_off_an_evicted_pod_from_v0_35(
    release: ReleaseDecisions, evicted: int
) -> None:
    """Up to v0.34 an evicted pod's cpu overhead is not taken off n1 (its containers request no cpu): n1 stays above
    the target and every replica goes."""
    assert evictions(overhead_cluster(), release) == evicted


@pytest.mark.parametrize("samples", [[], ["--samples", "4", "--jobs", "1"]])
@pytest.mark.parametrize(("target", "evicted"), [("v0.34", 0), ("v0.36", 2)])
def test_simulate_counts_sidecars_from_v0_35(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, evicted: int, samples: list[str]
) -> None:
    policy_file, snapshot_file = tmp_path / "policy.json", tmp_path / "snapshot.json"
    policy_file.write_text(json.dumps(POLICY))
    snapshot_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": sidecar_cluster()}))
    arguments = ["simulate", "--policy", str(policy_file), "--cluster", str(snapshot_file), "--format", "json"]
    assert main([*arguments, "--now", NOW.isoformat(), "--target-version", target, *samples]) == 0
    document = json.loads(capsys.readouterr().out)
    assert len(document["evictions"]) == evicted

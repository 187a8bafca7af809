"""Decisions per release of PodLifeTime, RemovePodsHavingTooManyRestarts and RemoveFailedPods
(:mod:`desched.executor.releases`).

Modelled: ``restarts-states-init-containers`` (97c0044, first in v0.30.0): up to v0.29 the ``states`` of
RemovePodsHavingTooManyRestarts never match an init container's waiting reason. Upstream's
``toomanyrestarts_test.go`` at v0.29.0 is the v0.36 table without the two init container cases that commit added, and
with the two CPU consumers bare; it runs here at v0.29, and the two added cases on both sides of v0.30.

The unmodelled rows rest on facts the tests check: a pod created in the future is never evicted by
``maxPodLifeTimeSeconds`` on any release, and no state an older release accepts is a reason the newer matching adds.
RemoveFailedPods made the same decisions at every tag from v0.27.0 to v0.36.0 (its only change, ``exitCodes``, came
with the argument), so it has no row.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from desched.cli import main
from desched.executor.releases import CHANGES, RESTARTS_INIT_STATES, ReleaseDecisions
from desched.validation.vocab import podlifetime_states, too_many_restarts_states
from tests.executor import test_toomanyrestarts as restarts
from tests.executor.builders import NOW, build_node, build_pod, one_plugin_policy, run_plugin, set_rs_owner

Json = dict[str, Any]
V29, V30 = ReleaseDecisions(29), ReleaseDecisions(30)
INIT_STATES_CASES = [case for case in restarts.UPSTREAM_CASES if "initContainer with states" in case.description]


def bare_cpu_consumers(pods: list[Json]) -> list[Json]:
    """A copy of ``pods`` as v0.29.0's ``initPods`` builds them: the two CPU consumers without an owner."""
    copied = copy.deepcopy(pods)
    for pod in copied:
        if pod["metadata"]["name"].startswith("CPU-consumer"):
            pod["metadata"].pop("ownerReferences", None)
    return copied


def run_restarts(case: restarts.Case, release: ReleaseDecisions) -> list[str]:
    return run_plugin(
        restarts.NAME,
        case.args,
        case.nodes,
        bare_cpu_consumers(case.pods),
        evictor={"nodeFit": case.node_fit},
        limits=case.limits,
        release=release,
    )


@pytest.mark.parametrize(
    "case",
    [case for case in restarts.UPSTREAM_CASES if case not in INIT_STATES_CASES],
    ids=lambda case: case.description,
)
def test_too_many_restarts_upstream_table_at_v0_29(case: restarts.Case) -> None:
    evicted = run_restarts(case, V29)
    assert len(evicted) == case.expected, evicted  # upstream asserts counts; which pods depends on the order


def test_the_init_state_cases_are_the_two_97c0044_added() -> None:
    assert [case.expected for case in INIT_STATES_CASES] == [3, 0]
    assert [case.args["includingInitContainers"] for case in INIT_STATES_CASES] == [True, False]


@pytest.mark.parametrize(("release", "expected"), [(V29, [0, 0]), (V30, [3, 0]), (ReleaseDecisions(), [3, 0])])
def test_too_many_restarts_matches_init_container_states_from_v0_30(
    release: ReleaseDecisions, expected: list[int]
) -> None:
    """97c0044's two cases: with ``includingInitContainers`` an init container in CrashLoopBackOff matches
    ``states`` from v0.30 on; without the flag it never does."""
    assert [len(run_restarts(case, release)) for case in INIT_STATES_CASES] == expected


def pending_pod(name: str, init_reason: str, container_reason: str) -> Json:
    """A pod of node1 stuck before its containers start: its init container waits in ``init_reason`` after 4
    restarts, its container waits in ``container_reason``."""
    pod = set_rs_owner(build_pod(name, 100, 0, "node1"))
    pod["status"] = {
        "phase": "Pending",
        "initContainerStatuses": [{"restartCount": 4, "state": {"waiting": {"reason": init_reason}}}],
        "containerStatuses": [{"restartCount": 0, "state": {"waiting": {"reason": container_reason}}}],
    }
    return pod


def crash_looping_pods() -> list[Json]:
    return [
        pending_pod("init-crashes", "CrashLoopBackOff", "PodInitializing"),
        pending_pod("container-crashes", "PodInitializing", "CrashLoopBackOff"),
    ]


ARGS = {"podRestartThreshold": 3, "includingInitContainers": True, "states": ["CrashLoopBackOff"]}


@pytest.mark.parametrize(
    ("release", "evicted"), [(V29, ["container-crashes"]), (V30, ["init-crashes", "container-crashes"])]
)
def test_init_container_crash_loop_from_v0_30(release: ReleaseDecisions, evicted: list[str]) -> None:
    """Both pods count their init container's 4 restarts on every release; only v0.30 on also match the init
    container's CrashLoopBackOff against ``states``."""
    assert run_plugin(restarts.NAME, ARGS, [restarts.node("node1")], crash_looping_pods(), release=release) == evicted


@pytest.mark.parametrize("release", [V29, V30], ids=repr)
def test_without_the_flag_no_release_matches_init_containers(release: ReleaseDecisions) -> None:
    pods = crash_looping_pods()
    for pod in pods:
        pod["status"]["containerStatuses"][0]["restartCount"] = 4
    args = {**ARGS, "includingInitContainers": False}
    assert run_plugin(restarts.NAME, args, [restarts.node("node1")], pods, release=release) == ["container-crashes"]


def test_the_row_spans_the_releases_with_states() -> None:
    row = next(change for change in CHANGES if change.key == RESTARTS_INIT_STATES)
    assert (row.first, row.last) == (28, 29)
    assert not too_many_restarts_states(row.first - 1) and "CrashLoopBackOff" in too_many_restarts_states(row.first)
    assert [ReleaseDecisions(minor).older(RESTARTS_INIT_STATES) for minor in range(27, 37)] == (
        [False, True, True] + [False] * 7
    )


POLICY = one_plugin_policy("RemovePodsHavingTooManyRestarts", "deschedule", ARGS)


@pytest.mark.parametrize(
    ("target", "evicted"), [("v0.29", ["container-crashes"]), ("v0.30", ["container-crashes", "init-crashes"])]
)
def test_simulate_matches_init_container_states_from_v0_30(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, evicted: list[str]
) -> None:
    policy_file, snapshot_file = tmp_path / "policy.json", tmp_path / "snapshot.json"
    policy_file.write_text(json.dumps(POLICY))
    items = [build_node("node1", 2000, 3000, 10), build_node("node2", 2000, 3000, 10), *crash_looping_pods()]
    snapshot_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    arguments = ["simulate", "--policy", str(policy_file), "--cluster", str(snapshot_file), "--format", "json"]
    assert main([*arguments, "--now", NOW.isoformat(), "--target-version", target]) == 0
    document = json.loads(capsys.readouterr().out)
    assert sorted(eviction["pod"] for eviction in document["evictions"]) == evicted


# --- the unmodelled PodLifeTime rows ----------------------------------------------------------------------------


@pytest.mark.parametrize("minor", [27, 29, 30, 36])
@pytest.mark.parametrize("ahead", [timedelta(milliseconds=500), timedelta(seconds=5), timedelta(days=3)], ids=str)
def test_a_pod_created_in_the_future_is_never_too_old(minor: int, ahead: timedelta) -> None:
    """``podlifetime-future-age``: desched keeps the newer (and arm64's) decision on every release."""
    future = set_rs_owner(build_pod("future", 100, 0, "node1"))
    future["metadata"]["creationTimestamp"] = (NOW + ahead).isoformat()
    old = set_rs_owner(build_pod("old", 100, 0, "node1"))
    old["metadata"]["creationTimestamp"] = (NOW - timedelta(seconds=1)).isoformat()
    nodes = [build_node("node1", 2000, 3000, 10)]
    release = ReleaseDecisions(minor)
    assert run_plugin("PodLifeTime", {"maxPodLifeTimeSeconds": 0}, nodes, [future, old], release=release) == ["old"]


# Reasons the kubelet and the node controller set on a pod (``status.reason``) and on a terminated container.
POD_REASONS = {
    "Evicted", "NodeAffinity", "NodeLost", "Shutdown", "UnexpectedAdmissionError", "Terminated", "DeadlineExceeded",
    "OutOfcpu", "OutOfmemory", "OutOfpods",
}  # fmt: skip
TERMINATED_REASONS = {"Completed", "Error", "OOMKilled", "ContainerCannotRun", "DeadlineExceeded", "StartError"}


@pytest.mark.parametrize(
    ("key", "reasons"),
    [("podlifetime-states-pod-reason", POD_REASONS), ("podlifetime-states-terminated", TERMINATED_REASONS)],
)
def test_no_state_the_older_releases_accept_is_a_reason_the_newer_matching_adds(key: str, reasons: set[str]) -> None:
    row = next(change for change in CHANGES if change.key == key)
    assert row.unmodelled
    for minor in range(row.first, row.last + 1):
        assert reasons.isdisjoint(podlifetime_states(minor)), minor

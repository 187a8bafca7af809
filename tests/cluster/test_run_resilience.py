"""``desched run`` against the real API server through a fault-injecting proxy (tests/cluster/faultproxy.py): the
interval loop survives 500s and timeouts, a 504 after a carried-out eviction counts toward the limits as ``unknown``,
a PDB's 429 is ``refused``, the cycle deadline, the exit statuses; and leader election on a real Lease."""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml

from desched.cli import main
from desched.executor.leaderelection import LeaderElector, LeaseConfig
from desched.runtime.kube import KubeClient
from tests.cluster.faultproxy import FaultProxy, ForwardThen, Hang, Reply
from tests.kcp.api import Api, ApiError, Json
from tests.kcp.controlplane import ControlPlane
from tests.kcp.kubelet import FakeKubelet
from tests.kcp.objects import pdb, wait_for
from tests.kcp.snapshot import LoadReport

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]
RUN_LABEL = "desched.test/run"
LIST_PODS = r"^/api/v1/pods\?"
EVICTION = r"/pods/[^/]+/eviction$"
LEASE_FLAGS = (
    "--leader-elect",
    "--leader-elect-lease-duration",
    "3s",
    "--leader-elect-renew-deadline",
    "2s",
    "--leader-elect-retry-period",
    "0.5s",
)


class Setup(NamedTuple):
    run: str  # the nodes' RUN_LABEL value
    namespaces: list[str]
    tainted_node: str


def _objects(run: str, pods: dict[str, int]) -> list[Json]:
    """Two nodes, ``b`` tainted; ``pods[namespace]`` pods of a ReplicaSet on ``b`` in each namespace."""

    def node(name: str, taints: list[Json]) -> Json:
        labels = {RUN_LABEL: run, "kubernetes.io/hostname": name}
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {"taints": taints},
        }

    def pod(namespace: str, index: int) -> Json:
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": f"uid-web-{namespace}"}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"web-{index}",
                "namespace": namespace,
                "labels": {"app": "web"},
                "ownerReferences": [{**owner, "controller": True}],
            },
            "spec": {"nodeName": "b", "containers": [{"name": "c", "image": "web:1"}]},
        }

    taint = {"key": "maintenance", "value": "yes", "effect": "NoSchedule"}
    return [
        node("a", []),
        node("b", [taint]),
        *({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}} for namespace in pods),
        *(pod(namespace, index) for namespace, count in pods.items() for index in range(count)),
    ]


@pytest.fixture
def cluster(load_snapshot: Callable[[list[Json]], tuple[str, LoadReport]]) -> Callable[..., Setup]:
    """``cluster(apps=6, ...)`` loads two nodes and that many pods per namespace on the tainted one."""

    def make(**pods: int) -> Setup:
        run = secrets.token_hex(3)
        suffix, _ = load_snapshot(_objects(run, pods))
        return Setup(run, [f"{namespace}{suffix}" for namespace in pods], f"b{suffix}")

    return make


@pytest.fixture
def proxy(control_plane: ControlPlane) -> Iterator[FaultProxy]:
    with FaultProxy(control_plane) as running:
        yield running


def _policy(tmp_path: Path, setup: Setup, namespace: str, limits: str = "") -> str:
    path = tmp_path / f"policy-{namespace}.yaml"
    path.write_text(
        f"""apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
nodeSelector: "{RUN_LABEL}={setup.run}"
{limits}profiles:
- name: live
  pluginConfig:
  - name: DefaultEvictor
  - name: RemovePodsViolatingNodeTaints
    args: {{namespaces: {{include: [{namespace}]}}}}
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints]
"""
    )
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """``desched run ... --format json`` in this process: exit status, the JSON summary (or the text), stderr."""
    code = main(["run", "--format", "json", *args])
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out), err
    except ValueError:
        return code, out, err


def _start(*args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "desched", "run", "--format", "json", *args]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen[str], sig: int = signal.SIGTERM) -> tuple[int, str, str]:
    """Send ``sig`` if ``process`` still runs, then its exit status, stdout and stderr."""
    if process.poll() is None:
        process.send_signal(sig)
    try:
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out, err


def _pods(kube: Api, namespace: str) -> set[str]:
    return {pod["metadata"]["name"] for pod in kube.list("v1", "Pod", namespace)}


def test_the_interval_loop_survives_a_500_and_timeouts_on_list_and_evicts_on_the_next_cycle(
    kube: Api, cluster: Callable[..., Setup], proxy: FaultProxy, tmp_path: Path
) -> None:
    setup = cluster(apps=3)
    (namespace,) = setup.namespaces
    proxy.inject("GET", LIST_PODS, Reply(500))
    proxy.inject("GET", LIST_PODS, Hang(5), uses=2)  # the client retries a timed-out GET once
    runner = _start(
        "--policy",
        _policy(tmp_path, setup, namespace),
        "--kubeconfig",
        proxy.kubeconfig(tmp_path / "kubeconfig"),
        "--interval",
        "1s",
        "--request-timeout",
        "1s",
    )
    try:
        wait_for(lambda: not _pods(kube, namespace), timeout=30, what="the third cycle to evict the pods")
    finally:
        code, out, err = _finish(runner)
    assert code == 0, err
    failures = [line for line in err.splitlines() if "cannot list the cluster" in line]
    assert len(failures) == 2, err
    assert "500" in failures[0] and "timed out" in failures[1].lower(), failures
    assert [entry.status for entry in proxy.requests("GET", LIST_PODS)][:4] == [500, None, None, 200]
    first, _ = json.JSONDecoder().raw_decode(out)  # failed cycles print no summary
    assert sorted(e["pod"] for e in first["evictions"]) == ["web-0", "web-1", "web-2"]


def test_a_504_after_a_carried_out_eviction_counts_toward_the_node_limit_and_is_unknown(
    kube: Api,
    kubelet: FakeKubelet,
    cluster: Callable[..., Setup],
    proxy: FaultProxy,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    setup = cluster(apps=6)
    (namespace,) = setup.namespaces
    proxy.inject("POST", EVICTION, ForwardThen(504), uses=None)
    code, done, err = _run(
        capsys,
        "--policy",
        _policy(tmp_path, setup, namespace, "maxNoOfPodsToEvictPerNode: 2\n"),
        "--kubeconfig",
        proxy.kubeconfig(tmp_path / "kubeconfig"),
    )
    assert code == 1, err
    assert done["evictions"] == [] and done["summary"]["evicted"] == 0
    assert [(f["outcome"], f["status"]) for f in done["failures"]] == [("unknown", 504), ("unknown", 504)]
    assert all("may have been evicted" in f["message"] for f in done["failures"])
    assert done["summary"]["failed"] == {"refused": 0, "gone": 0, "error": 0, "unknown": 2}
    kubelet.settle()
    assert len(_pods(kube, namespace)) == 4  # the API evicted two, and the per-node limit stopped the third
    posted = {entry.path for entry in proxy.requests("POST", EVICTION)}
    assert len(posted) == 2 and len(proxy.requests("POST", EVICTION)) == 6  # three attempts each


def test_a_pdb_refusal_is_refused_once_not_retried_and_exits_0(
    kube: Api, cluster: Callable[..., Setup], proxy: FaultProxy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = cluster(apps=2)
    (namespace,) = setup.namespaces
    kube.create(pdb(kube, "web", namespace, {"app": "web"}, min_available=2))

    def settled() -> bool:
        status = kube.get(kube.pdb_version(), "PodDisruptionBudget", "web", namespace).get("status") or {}
        return bool(status.get("observedGeneration")) and status.get("disruptionsAllowed") == 0

    wait_for(settled, what="the disruption controller")
    code, done, err = _run(
        capsys,
        "--policy",
        _policy(tmp_path, setup, namespace),
        "--kubeconfig",
        proxy.kubeconfig(tmp_path / "kubeconfig"),
    )
    assert code == 0, err
    assert [(f["pod"], f["status"], f["outcome"]) for f in done["failures"]] == [
        ("web-0", 429, "refused"),
        ("web-1", 429, "refused"),
    ]
    assert all(f["message"].endswith("(ignoring)") for f in done["failures"])
    assert len(proxy.requests("POST", EVICTION)) == 2
    assert _pods(kube, namespace) == {"web-0", "web-1"}


def test_a_5xx_before_the_server_acted_is_retried_and_the_eviction_succeeds(
    kube: Api,
    kubelet: FakeKubelet,
    cluster: Callable[..., Setup],
    proxy: FaultProxy,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    setup = cluster(apps=1)
    (namespace,) = setup.namespaces
    proxy.inject("POST", EVICTION, Reply(503))
    code, done, err = _run(
        capsys, "--policy", _policy(tmp_path, setup, namespace), "--kubeconfig", proxy.kubeconfig(tmp_path / "k")
    )
    assert code == 0, err
    assert [e["pod"] for e in done["evictions"]] == ["web-0"] and done["failures"] == []
    assert [entry.status for entry in proxy.requests("POST", EVICTION)] == [503, 201]
    kubelet.settle()
    assert _pods(kube, namespace) == set()


def test_one_run_that_cannot_list_the_cluster_exits_2(
    cluster: Callable[..., Setup], proxy: FaultProxy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = cluster(apps=1)
    proxy.inject("GET", LIST_PODS, Reply(500), uses=None)
    code, out, err = _run(
        capsys,
        "--policy",
        _policy(tmp_path, setup, setup.namespaces[0]),
        "--kubeconfig",
        proxy.kubeconfig(tmp_path / "k"),
        "--cycle-timeout",
        "4s",
    )
    assert code == 2 and out == ""
    assert "desched: cannot list the cluster: GET /api/v1/pods: 500 injected by the fault proxy" in err
    assert err.count("trying again") >= 2  # retried within the deadline (1 s, 2 s, ...) before giving up
    assert proxy.requests("POST", EVICTION) == []


def test_one_run_lists_again_after_a_500_and_evicts(
    kube: Api, cluster: Callable[..., Setup], proxy: FaultProxy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = cluster(apps=2)
    (namespace,) = setup.namespaces
    proxy.inject("GET", LIST_PODS, Reply(500))  # once: a Job's run no longer ends on it
    code, done, err = _run(
        capsys, "--policy", _policy(tmp_path, setup, namespace), "--kubeconfig", proxy.kubeconfig(tmp_path / "k")
    )
    assert code == 0, err
    assert "trying again" in err
    assert sorted(e["pod"] for e in done["evictions"]) == ["web-0", "web-1"]
    assert [entry.status for entry in proxy.requests("GET", LIST_PODS)][:2] == [500, 200]


def test_past_the_cycle_deadline_the_cycle_stops_evicting_and_the_run_fails(
    cluster: Callable[..., Setup], proxy: FaultProxy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = cluster(apps=4)
    (namespace,) = setup.namespaces
    proxy.inject("POST", EVICTION, Hang(10), uses=None)
    started = time.monotonic()
    code, done, err = _run(
        capsys,
        "--policy",
        _policy(tmp_path, setup, namespace),
        "--kubeconfig",
        proxy.kubeconfig(tmp_path / "k"),
        "--request-timeout",
        "1s",
        "--cycle-timeout",
        "2s",
    )
    assert time.monotonic() - started < 8
    assert code == 1, err
    assert done["summary"]["halted"] == "deadline"
    assert [(f["pod"], f["outcome"]) for f in done["failures"]] == [("web-0", "unknown")]
    assert {entry.path for entry in proxy.requests("POST", EVICTION)} == {
        f"/api/v1/namespaces/{namespace}/pods/web-0/eviction"
    }
    assert "deadline (2 s): the cycle stopped evicting" in err


def _lease(kube: Api, namespace: str, name: str) -> Json:
    try:
        return dict(kube.get("coordination.k8s.io/v1", "Lease", name, namespace).get("spec") or {})
    except ApiError:
        return {}


def test_only_the_leader_evicts_and_a_standby_takes_over_within_the_lease_duration(
    kube: Api, namespace: str, cluster: Callable[..., Setup], control_plane: ControlPlane, tmp_path: Path
) -> None:
    setup = cluster(first=2, second=2)
    lease = f"desched-{secrets.token_hex(3)}"
    common = ("--kubeconfig", control_plane.kubeconfig, "--interval", "1s", *LEASE_FLAGS)
    where = ("--leader-elect-resource-namespace", namespace, "--leader-elect-resource-name", lease)
    first, second = (_policy(tmp_path, setup, name) for name in setup.namespaces)
    leader = _start("--policy", first, *common, *where)
    standby: subprocess.Popen[str] | None = None
    try:
        held = wait_for(lambda: _lease(kube, namespace, lease).get("holderIdentity"), what="the first leader")
        standby = _start("--policy", second, *common, *where)
        wait_for(lambda: not _pods(kube, setup.namespaces[0]), what="the leader's evictions")
        time.sleep(3)  # several cycles of the leader, and as many tries of the standby
        assert _pods(kube, setup.namespaces[1]) == {"web-0", "web-1"}  # the standby evicted nothing
        assert _lease(kube, namespace, lease)["holderIdentity"] == held
        leader.kill()  # no release: the standby must wait for the lease to expire
        killed = time.monotonic()
        spec = wait_for(
            lambda: (found := _lease(kube, namespace, lease)).get("holderIdentity") not in (None, held) and found,
            timeout=15,
            what="the standby to take over",
        )
        took = time.monotonic() - killed
        assert took <= 3 + 2.2 * 0.5 + 1.0, took  # lease duration + the retry period's jitter + slack
        assert spec["leaseTransitions"] == 1 and spec["leaseDurationSeconds"] == 3
        wait_for(lambda: not _pods(kube, setup.namespaces[1]), what="the new leader's evictions")
        code, out, err = _finish(standby)
        assert code == 0, err
        first_cycle, _ = json.JSONDecoder().raw_decode(out)  # it ran no cycle before it led
        assert sorted(e["pod"] for e in first_cycle["evictions"]) == ["web-0", "web-1"]
        assert f"became the leader (lease {namespace}/{lease}" in err and f"released lease {namespace}/{lease}" in err
        released = _lease(kube, namespace, lease)
        assert (released["holderIdentity"], released["leaseDurationSeconds"]) == ("", 1)
    finally:
        _finish(leader, signal.SIGKILL)
        if standby is not None:
            _finish(standby, signal.SIGKILL)


def test_a_leader_that_loses_its_lease_stops_and_exits_1(
    kube: Api, namespace: str, cluster: Callable[..., Setup], control_plane: ControlPlane, tmp_path: Path
) -> None:
    setup = cluster(apps=1)
    lease = "descheduler"
    runner = _start(
        "--policy",
        _policy(tmp_path, setup, setup.namespaces[0]),
        "--kubeconfig",
        control_plane.kubeconfig,
        "--interval",
        "1s",
        *LEASE_FLAGS,
        "--leader-elect-resource-namespace",
        namespace,
    )
    try:
        wait_for(lambda: _lease(kube, namespace, lease).get("holderIdentity"), what="the leader")
        taken = kube.get("coordination.k8s.io/v1", "Lease", lease, namespace)
        taken["spec"].update(holderIdentity="someone-else", leaseDurationSeconds=60)
        kube.request("PUT", kube.resource("coordination.k8s.io/v1", "Lease").path(namespace, lease), taken)
        stolen = time.monotonic()
        runner.wait(timeout=15)
        assert time.monotonic() - stolen < 2 + 0.5 + 1.5  # renew deadline + a retry period + slack
    finally:
        code, _, err = _finish(runner, signal.SIGKILL)
    assert code == 1, err
    assert f"leadership lost: lease {namespace}/{lease} not renewed within 2 s" in err
    assert _lease(kube, namespace, lease)["holderIdentity"] == "someone-else"


def test_the_deploy_role_lets_the_executor_keep_its_lease_and_no_other(
    kube: Api, namespace: str, control_plane: ControlPlane
) -> None:
    rbac = [
        doc for doc in yaml.safe_load_all((ROOT / "deploy/executor/deployment/leader-election.yaml").read_text()) if doc
    ]
    role = next(doc for doc in rbac if doc["kind"] == "Role")
    binding = next(doc for doc in rbac if doc["kind"] == "RoleBinding")
    for doc in (role, binding):
        doc["metadata"]["namespace"] = namespace
    binding["subjects"] = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "executor"}]
    kube.create(role)
    kube.create(binding)
    executor = KubeClient(control_plane.kubeconfig, "executor")
    elector = LeaderElector(executor, LeaseConfig(namespace, "descheduler", 3, 2, 0.5), "executor-1")
    assert wait_for(elector.try_acquire_or_renew, what="RBAC") and elector.try_acquire_or_renew()
    elector.release()
    assert _lease(kube, namespace, "descheduler")["holderIdentity"] == ""
    other = LeaderElector(executor, LeaseConfig(namespace, "other", 3, 2, 0.5), "executor-1")
    assert not other.try_acquire_or_renew()  # reading any Lease but "descheduler" is forbidden
    assert _lease(kube, namespace, "other") == {}

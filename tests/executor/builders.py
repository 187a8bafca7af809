"""Builders in the spirit of upstream's test utilities (docs/executor-semantics.md#11-porting-upstreams-tests), and a
runner for one plugin.

``build_pod(name, cpu_milli, memory, node)`` mirrors ``BuildTestPod``: namespace ``default``, a UID, one container
whose requests hold ``cpu``/``memory`` when the argument is >= 0, no owner, phase, priority or timestamps.
Every ``run_plugin`` case that a policy file can express (at least two Ready nodes, args that defaulting leaves
unchanged, a policy that lints clean) is also run through ``desched simulate`` (a snapshot file, a policy file, the
JSON output), which must evict the same pods in the same order: the ported upstream tables hold for the product's
front door, not only for the plugin classes.
``build_node(name, cpu_milli, memory, pods)`` mirrors ``BuildTestNode``: capacity = allocatable, Ready. The
owner helpers match ``SetRSOwnerRef`` and friends. ``run_plugin`` runs one plugin of one profile the way upstream's
plugin tests do: args exactly as given (no defaulting unless asked), a DefaultEvictor built from ``evictor`` args,
the PodEvictor limits, and returns the evicted pods' names in eviction order. An evicted pod stays listed as
terminating (a real run, as upstream's plugin tests keep it in their fake client) unless ``view`` is
``SameCycle.DRY_RUN`` (then ``desched simulate --dry-run`` must agree).
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import json
import os
import tempfile
from datetime import datetime, timezone
from typing import Any

from desched.cli import main
from desched.executor import nodeutil
from desched.executor.cluster import Cluster
from desched.executor.defaultevictor import DefaultEvictor
from desched.executor.evictions import Limits, Outcome, PodEvictor, SameCycle
from desched.executor.framework import Handle
from desched.executor.plugins import module_for
from desched.executor.releases import NEWEST_DECISIONS, ReleaseDecisions
from desched.plugins import REGISTRY
from desched.plugins.defaultevictor import DefaultEvictorArgs

Json = dict[str, Any]
NOW = datetime(2026, 11, 1, 12, 0, 0, tzinfo=timezone.utc)
_uids = itertools.count(1)


def build_pod(name: str, cpu_milli: int = 0, memory: int = 0, node: str = "") -> Json:
    requests: Json = {}
    if cpu_milli >= 0:
        requests["cpu"] = f"{cpu_milli}m"
    if memory >= 0:
        requests["memory"] = str(memory)
    pod: Json = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{next(_uids)}"},
        "spec": {"containers": [{"name": "", "resources": {"requests": requests}}]},
        "status": {},
    }
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def build_node(name: str, cpu_milli: int = 0, memory: int = 0, pods: int = 0) -> Json:
    resources = {"cpu": f"{cpu_milli}m", "memory": str(memory), "pods": str(pods)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {}},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def set_rs_owner(pod: Json, name: str = "replicaset-1", uid: str = "rs-uid-1") -> Json:
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name, "uid": uid, "controller": True}
    ]
    return pod


def set_ss_owner(pod: Json) -> Json:
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "statefulset-1", "uid": "ss-uid-1", "controller": True}
    ]
    return pod


def set_ds_owner(pod: Json) -> Json:
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "", "uid": "", "controller": True}
    ]
    return pod


def set_normal_owner(pod: Json) -> Json:
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "", "uid": "", "controller": True}
    ]
    return pod


def set_mirror(pod: Json) -> Json:
    pod["metadata"].setdefault("annotations", {}).update(
        {
            "kubernetes.io/config.mirror": "mirror",
            "kubernetes.io/config.source": "api",
            "kubernetes.io/created-by": "{}",
        }
    )
    return pod


def set_critical(pod: Json) -> Json:
    pod["spec"]["priority"] = 2000000000
    pod["metadata"]["namespace"] = "kube-system"
    return pod


def set_local_storage(pod: Json) -> Json:
    pod["spec"]["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {"sizeLimit": "1"}}]
    return pod


def defaulted(plugin: str, args: Json) -> Any:
    """``plugin``'s typed args of ``args`` as written, after upstream's ``SetDefaults``."""
    registered = REGISTRY[plugin]
    return registered.defaults(registered.decode(args))


def evictor_from(
    args: Json, cluster: Cluster, now: datetime = NOW, target: int = NEWEST_DECISIONS.minor
) -> DefaultEvictor:
    """The DefaultEvictor of ``args`` as written (decoded as the policy model decodes them) for release ``target``."""
    return DefaultEvictor(DefaultEvictorArgs.decode(args), cluster, now, target)


def run_plugin(
    plugin: str,
    args: Json,
    nodes: list[Json],
    pods: list[Json],
    evictor: Json | None = None,
    limits: Limits | None = None,
    now: datetime = NOW,
    extra: list[Json] | None = None,
    defaults: bool = False,
    point: str | None = None,
    record: list[PodEvictor] | None = None,
    outcomes: list[Outcome] | None = None,
    view: SameCycle = SameCycle.REAL,
    release: ReleaseDecisions = NEWEST_DECISIONS,
) -> list[str]:
    """Names of the pods ``plugin`` evicts, in order (see the module docstring), with ``release``'s decisions; the
    PodEvictor is appended to ``record`` and every eviction outcome (limit refusals included) to ``outcomes`` when
    given."""
    module = module_for(plugin)
    assert module is not None, plugin
    cluster = Cluster.from_objects(copy.deepcopy([*nodes, *pods, *(extra or [])]))
    pod_evictor = PodEvictor(cluster, limits or Limits(), view=view)
    if record is not None:
        record.append(pod_evictor)
    if outcomes is not None:
        pod_evictor.listeners.append(lambda outcome, *_: outcomes.append(outcome))
    default_evictor = evictor_from(evictor or {}, cluster, now, release.minor)
    handle = Handle(cluster, now, "test-profile", default_evictor, pod_evictor, release=release)
    registered = REGISTRY[plugin]
    plugin_args = copy.deepcopy(args)
    typed = registered.decode(plugin_args)
    typed = registered.defaults(typed) if defaults else typed
    instance = module.Implementation(typed, handle)
    chosen = point or registered.extension_points[0]
    getattr(instance, chosen)([cluster.node_by_name[node["metadata"]["name"]] for node in nodes])
    evicted = [(eviction.namespace, eviction.pod) for eviction in pod_evictor.evictions]
    if registered.defaults(typed) == typed and chosen in registered.extension_points:
        simulated = through_simulate(
            plugin,
            chosen,
            plugin_args,
            nodes,
            [*pods, *(extra or [])],
            evictor or {},
            limits or Limits(),
            now,
            view,
            release,
        )
        assert simulated is None or simulated == evicted, f"desched simulate evicted {simulated}, not {evicted}"
    return [name for _, name in evicted]


def one_plugin_policy(plugin: str, point: str, args: Json, evictor: Json | None = None, profile: str = "p") -> Json:
    """A v1alpha2 policy of one profile that enables ``plugin`` at ``point`` with ``args`` (and the DefaultEvictor's
    ``evictor`` args)."""
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "profiles": [
            {
                "name": profile,
                "pluginConfig": [{"name": "DefaultEvictor", "args": evictor or {}}, {"name": plugin, "args": args}],
                "plugins": {point: {"enabled": [plugin]}},
            }
        ],
    }


def through_simulate(
    plugin: str,
    point: str,
    args: Json,
    nodes: list[Json],
    objects: list[Json],
    evictor: Json,
    limits: Limits,
    now: datetime,
    view: SameCycle = SameCycle.REAL,
    release: ReleaseDecisions = NEWEST_DECISIONS,
) -> list[tuple[str, str]] | None:
    """``(namespace, pod)`` evicted by ``desched simulate`` on the same case; ``None`` when a policy file cannot
    express it (fewer than two Ready nodes, which skips the cycle, or a policy the lint gate refuses)."""
    if len(nodes) < 2 or not all(nodeutil.is_ready(node) for node in nodes):
        return None
    policy = one_plugin_policy(plugin, point, args, evictor, profile="test-profile")
    for field, value in (
        ("maxNoOfPodsToEvictPerNode", limits.per_node),
        ("maxNoOfPodsToEvictPerNamespace", limits.per_namespace),
        ("maxNoOfPodsToEvictTotal", limits.total),
    ):
        if value is not None:
            policy[field] = value
    with tempfile.TemporaryDirectory() as work:
        policy_file, snapshot_file = os.path.join(work, "policy.json"), os.path.join(work, "snapshot.json")
        with open(policy_file, "w", encoding="utf-8") as handle:
            json.dump(policy, handle)
        with open(snapshot_file, "w", encoding="utf-8") as handle:
            json.dump({"apiVersion": "v1", "kind": "List", "items": [*nodes, *objects]}, handle, default=str)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(
                [
                    "simulate",
                    "--policy",
                    policy_file,
                    "--cluster",
                    snapshot_file,
                    "--format",
                    "json",
                    "--now",
                    now.isoformat(),
                    *(["--dry-run"] if view is SameCycle.DRY_RUN else []),
                    *(["--target-version", f"v0.{release.minor}"] if release is not NEWEST_DECISIONS else []),
                ]
            )
    if code == 2 and "lint errors" in err.getvalue():
        return None
    assert code == 0, err.getvalue()
    return [(item["namespace"], item["pod"]) for item in json.loads(out.getvalue())["evictions"]]

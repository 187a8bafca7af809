"""Eviction scope verdicts: one passing and one failing case per check, in upstream order."""

from __future__ import annotations

from typing import Any

import pytest

from desched.plugins.defaultevictor import DefaultEvictorArgs
from desched.policy.model import Policy, decode
from desched.workloads.eviction import active_protections
from desched.workloads.model import collect
from desched.workloads.scope import evaluate, summarize

BALANCE = (
    "RemoveDuplicates",
    "LowNodeUtilization",
    "HighNodeUtilization",
    "RemovePodsViolatingTopologySpreadConstraint",
)


def workload(
    kind="Deployment", name="web", namespace="shop", labels=None, annotations=None, spec=None, replicas=3, claims=None
):
    template = {"metadata": {"labels": {"app": "web"} if labels is None else labels}, "spec": spec or {}}
    if annotations:
        template["metadata"]["annotations"] = annotations
    if kind == "Pod":
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, **template["metadata"]},
            "spec": template["spec"],
        }
    doc = {"kind": kind, "metadata": {"name": name, "namespace": namespace}, "spec": {"template": template}}
    if kind == "CronJob":
        doc["spec"] = {"jobTemplate": {"spec": {"template": template}}}
    if kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        doc["spec"]["replicas"] = replicas
    if claims:
        doc["spec"]["volumeClaimTemplates"] = claims
    return doc


def model(tree: Any) -> Policy:
    """The typed policy of a tree as written, as the engine hands it to the scope model (no profiles for a tree that
    is not a mapping: the engine finds no policy there)."""
    return decode(tree) if isinstance(tree, dict) else Policy(())


def policy(plugin="PodLifeTime", args=None, evictor=None):
    point = "balance" if plugin in BALANCE else "deschedule"
    configs = [{"name": plugin, "args": args or {}}]
    if evictor is not None:
        configs.insert(0, {"name": "DefaultEvictor", "args": evictor})
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "profiles": [{"name": "p", "pluginConfig": configs, "plugins": {point: {"enabled": [plugin]}}}],
    }


def ns(name, **labels):
    return {"kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def pdb(selector, namespace="shop", api="policy/v1"):
    return {
        "apiVersion": api,
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": namespace},
        "spec": {"selector": selector, "maxUnavailable": 1},
    }


def pc(name, value):
    return {"kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def pvc(name, storage_class=None, namespace="shop"):
    spec = {} if storage_class is None else {"storageClassName": storage_class}
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def sc(name, default=False):
    annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else {}
    return {"kind": "StorageClass", "metadata": {"name": name, "annotations": annotations}}


EMPTY_DIR = {"volumes": [{"name": "cache", "emptyDir": {}}]}
HOST_PATH = {"volumes": [{"name": "logs", "hostPath": {"path": "/var/log"}}]}
PVC_VOL = {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}
CRITICAL = {"priorityClassName": "system-cluster-critical"}
PVC_ON = {"podProtections": {"extraEnabled": ["PodsWithPVC"]}}
PVC_CLASSES = {
    "podProtections": {
        "extraEnabled": ["PodsWithPVC"],
        "config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": "fast"}]}},
    }
}
LS = {"matchLabels": {"app": "web"}}
LS_OTHER = {"matchLabels": {"app": "db"}}

# (id, workload doc, evictor args, plugin, plugin args, extra docs, evictable, reason substring or None)
CASES = [
    ("plain deployment", workload(), None, "PodLifeTime", None, [], True, None),
    # 1. evict annotation overrides protections
    (
        "evict annotation overrides local storage",
        workload(spec=EMPTY_DIR, annotations={"descheduler.alpha.kubernetes.io/evict": ""}),
        None,
        "PodLifeTime",
        None,
        [],
        True,
        "overrides the DefaultEvictor",
    ),
    (
        "evict annotation beats Mandatory",
        workload(
            annotations={
                "descheduler.alpha.kubernetes.io/evict": "x",
                "descheduler.alpha.kubernetes.io/prefer-no-eviction": "",
            }
        ),
        {"noEvictionPolicy": "Mandatory"},
        "PodLifeTime",
        None,
        [],
        True,
        "overrides",
    ),
    (
        "evict annotation does not bypass plugin namespaces",
        workload(annotations={"descheduler.alpha.kubernetes.io/evict": ""}),
        None,
        "PodLifeTime",
        {"namespaces": {"exclude": ["shop"]}},
        [],
        False,
        "namespace shop excluded by PodLifeTime namespaces.exclude",
    ),
    (
        "evict annotation does not bypass namespaceLabelSelector",
        workload(annotations={"descheduler.alpha.kubernetes.io/evict": ""}),
        {"namespaceLabelSelector": {"matchLabels": {"team": "b"}}},
        "PodLifeTime",
        None,
        [ns("shop", team="a")],
        False,
        "namespace shop labels do not match DefaultEvictor namespaceLabelSelector",
    ),
    # 2. noEvictionPolicy
    (
        "Mandatory + prefer-no-eviction",
        workload(annotations={"descheduler.alpha.kubernetes.io/prefer-no-eviction": ""}),
        {"noEvictionPolicy": "Mandatory"},
        "PodLifeTime",
        None,
        [],
        False,
        "noEvictionPolicy Mandatory",
    ),
    (
        "Preferred + prefer-no-eviction",
        workload(annotations={"descheduler.alpha.kubernetes.io/prefer-no-eviction": ""}),
        {"noEvictionPolicy": "Preferred"},
        "PodLifeTime",
        None,
        [],
        True,
        None,
    ),
    # 6a. system-critical
    (
        "system-cluster-critical",
        workload(spec=CRITICAL),
        None,
        "PodLifeTime",
        None,
        [],
        False,
        "protected: SystemCriticalPods (priority 2000000000 from class system-cluster-critical)",
    ),
    (
        "system-node-critical",
        workload(spec={"priorityClassName": "system-node-critical"}),
        None,
        "PodLifeTime",
        None,
        [],
        False,
        "SystemCriticalPods (priority 2000001000",
    ),
    (
        "system-critical with evictSystemCriticalPods",
        workload(spec=CRITICAL),
        {"evictSystemCriticalPods": True},
        "PodLifeTime",
        None,
        [],
        True,
        None,
    ),
    (
        "system-critical with defaultDisabled",
        workload(spec=CRITICAL),
        {"podProtections": {"defaultDisabled": ["SystemCriticalPods"]}},
        "PodLifeTime",
        None,
        [],
        True,
        None,
    ),
    (
        "unknown class is not critical",
        workload(spec={"priorityClassName": "mystery"}),
        None,
        "PodLifeTime",
        None,
        [],
        True,
        "priority of class mystery unknown",
    ),
    # 6b. priority threshold
    (
        "threshold value reached",
        workload(spec={"priorityClassName": "high"}),
        {"priorityThreshold": {"value": 1000}},
        "PodLifeTime",
        None,
        [pc("high", 1000)],
        False,
        "protected: priority 1000 (class high) >= priorityThreshold 1000",
    ),
    (
        "threshold value not reached",
        workload(spec={"priorityClassName": "high"}),
        {"priorityThreshold": {"value": 1001}},
        "PodLifeTime",
        None,
        [pc("high", 1000)],
        True,
        None,
    ),
    (
        "threshold by name",
        workload(spec={"priorityClassName": "high"}),
        {"priorityThreshold": {"name": "mid"}},
        "PodLifeTime",
        None,
        [pc("high", 1000), pc("mid", 500)],
        False,
        "priorityThreshold 500",
    ),
    (
        "threshold name unresolved",
        workload(),
        {"priorityThreshold": {"name": "ghost"}},
        "PodLifeTime",
        None,
        [],
        False,
        "priorityThreshold.name ghost is not among the PriorityClasses given",
    ),
    (
        "threshold ignored without SystemCriticalPods",
        workload(spec={"priorityClassName": "high"}),
        {"priorityThreshold": {"value": 10}, "evictSystemCriticalPods": True},
        "PodLifeTime",
        None,
        [pc("high", 1000)],
        True,
        None,
    ),
    (
        "globalDefault class counts for pods without a class",
        workload(),
        {"priorityThreshold": {"value": 100}},
        "PodLifeTime",
        None,
        [{**pc("def", 200), "globalDefault": True}],
        False,
        "(the globalDefault PriorityClass)",
    ),
    # 7. bare pods
    (
        "bare pod protected",
        workload(kind="Pod"),
        None,
        "PodLifeTime",
        None,
        [],
        False,
        "protected: FailedBarePods (bare pod without an owner)",
    ),
    (
        "bare pod with FailedBarePods off",
        workload(kind="Pod"),
        {"evictFailedBarePods": True},
        "PodLifeTime",
        None,
        [],
        False,
        "evictable only once Failed",
    ),
    # 8. local storage
    (
        "emptyDir",
        workload(spec=EMPTY_DIR),
        None,
        "PodLifeTime",
        None,
        [],
        False,
        "protected: PodsWithLocalStorage (emptyDir volume cache)",
    ),
    ("hostPath", workload(spec=HOST_PATH), None, "PodLifeTime", None, [], False, "(hostPath volume logs)"),
    (
        "null emptyDir is no volume source",
        workload(spec={"volumes": [{"name": "x", "emptyDir": None}]}),
        None,
        "PodLifeTime",
        None,
        [],
        True,
        None,
    ),
    (
        "local storage with evictLocalStoragePods",
        workload(spec=EMPTY_DIR),
        {"evictLocalStoragePods": True},
        "PodLifeTime",
        None,
        [],
        True,
        None,
    ),
    # 9. DaemonSet
    (
        "DaemonSet protected",
        workload(kind="DaemonSet"),
        None,
        "PodLifeTime",
        None,
        [],
        False,
        "protected: DaemonSetPods",
    ),
    (
        "DaemonSet with evictDaemonSetPods",
        workload(kind="DaemonSet"),
        {"evictDaemonSetPods": True},
        "PodLifeTime",
        None,
        [],
        True,
        None,
    ),
    # 10. PVC
    ("PVC without protection", workload(spec=PVC_VOL), None, "PodLifeTime", None, [], True, None),
    (
        "PVC with ignorePvcPods",
        workload(spec=PVC_VOL),
        {"ignorePvcPods": True},
        "PodLifeTime",
        None,
        [],
        False,
        "protected: PodsWithPVC (claim data)",
    ),
    (
        "StatefulSet claim templates count as PVCs",
        workload(kind="StatefulSet", claims=[{"metadata": {"name": "d"}}]),
        PVC_ON,
        "PodLifeTime",
        None,
        [],
        False,
        "protected: PodsWithPVC (claim d)",
    ),
    (
        "protected class matches",
        workload(spec=PVC_VOL),
        PVC_CLASSES,
        "PodLifeTime",
        None,
        [pvc("data", "fast")],
        False,
        "uses protected storage class fast",
    ),
    ("unprotected class", workload(spec=PVC_VOL), PVC_CLASSES, "PodLifeTime", None, [pvc("data", "slow")], True, None),
    (
        "unknown claim protects",
        workload(spec=PVC_VOL),
        PVC_CLASSES,
        "PodLifeTime",
        None,
        [],
        False,
        "claim data not among the inputs",
    ),
    (
        "claim without class protects",
        workload(spec=PVC_VOL),
        PVC_CLASSES,
        "PodLifeTime",
        None,
        [pvc("data", "")],
        False,
        "claim data has no storage class",
    ),
    (
        "claim without class gets the default class",
        workload(spec=PVC_VOL),
        PVC_CLASSES,
        "PodLifeTime",
        None,
        [pvc("data"), sc("fast", default=True)],
        False,
        "uses protected storage class fast",
    ),
    # 11. PDB
    (
        "no PDB protected",
        workload(),
        {"ignorePodsWithoutPDB": True},
        "PodLifeTime",
        None,
        [],
        False,
        "protected: PodsWithoutPDB",
    ),
    ("matching PDB", workload(), {"ignorePodsWithoutPDB": True}, "PodLifeTime", None, [pdb(LS)], True, None),
    (
        "PDB in another namespace",
        workload(),
        {"podProtections": {"extraEnabled": ["PodsWithoutPDB"]}},
        "PodLifeTime",
        None,
        [pdb(LS, namespace="prod")],
        False,
        "PodsWithoutPDB",
    ),
    (
        "v1beta1 empty PDB selector",
        workload(),
        {"ignorePodsWithoutPDB": True},
        "PodLifeTime",
        None,
        [pdb({}, api="policy/v1beta1")],
        False,
        "PodsWithoutPDB",
    ),
    # 12. resource claims
    (
        "resource claims protected",
        workload(spec={"resourceClaims": [{"name": "gpu"}]}),
        {"podProtections": {"extraEnabled": ["PodsWithResourceClaims"]}},
        "PodLifeTime",
        None,
        [],
        False,
        "protected: PodsWithResourceClaims",
    ),
    (
        "resource claims not protected by default",
        workload(spec={"resourceClaims": [{"name": "gpu"}]}),
        None,
        "PodLifeTime",
        None,
        [],
        True,
        None,
    ),
    # 13. DefaultEvictor labelSelector
    ("evictor labelSelector matches", workload(), {"labelSelector": LS}, "PodLifeTime", None, [], True, None),
    (
        "evictor labelSelector misses",
        workload(),
        {"labelSelector": LS_OTHER},
        "PodLifeTime",
        None,
        [],
        False,
        "labels do not match DefaultEvictor labelSelector",
    ),
    # 14. minReplicas
    ("minReplicas met", workload(replicas=3), {"minReplicas": 3}, "PodLifeTime", None, [], True, None),
    (
        "minReplicas not met",
        workload(replicas=2),
        {"minReplicas": 3},
        "PodLifeTime",
        None,
        [],
        False,
        "DefaultEvictor minReplicas 3 > 2 replicas",
    ),
    (
        "minReplicas and HPA minReplicas",
        workload(replicas=1),
        {"minReplicas": 3},
        "PodLifeTime",
        None,
        [
            {
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "h", "namespace": "shop"},
                "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 3},
            }
        ],
        True,
        None,
    ),
    (
        "minReplicas with unknown pod count",
        workload(kind="Job"),
        {"minReplicas": 2},
        "PodLifeTime",
        None,
        [],
        False,
        "the pod count of a Job is unknown",
    ),
    # PreEvictionFilter: namespaceLabelSelector
    (
        "namespaceLabelSelector matches",
        workload(),
        {"namespaceLabelSelector": {"matchLabels": {"team": "a"}}},
        "PodLifeTime",
        None,
        [ns("shop", team="a")],
        True,
        None,
    ),
    (
        "namespaceLabelSelector with unknown namespace",
        workload(),
        {"namespaceLabelSelector": {"matchLabels": {"team": "a"}}},
        "PodLifeTime",
        None,
        [],
        False,
        "namespace shop not among the inputs",
    ),
    (
        "empty namespaceLabelSelector is ignored",
        workload(),
        {"namespaceLabelSelector": {}},
        "PodLifeTime",
        None,
        [],
        True,
        None,
    ),
    # plugin namespaces
    (
        "namespace excluded",
        workload(namespace="kube-system"),
        None,
        "RemoveDuplicates",
        {"namespaces": {"exclude": ["kube-system"]}},
        [],
        False,
        "namespace kube-system excluded by RemoveDuplicates namespaces.exclude",
    ),
    (
        "namespace not included",
        workload(),
        None,
        "RemovePodsViolatingNodeTaints",
        {"namespaces": {"include": ["prod"]}},
        [],
        False,
        "namespace shop not in RemovePodsViolatingNodeTaints",
    ),
    (
        "namespace included",
        workload(),
        None,
        "RemovePodsViolatingNodeTaints",
        {"namespaces": {"include": ["shop"]}},
        [],
        True,
        None,
    ),
    (
        "evictableNamespaces.exclude",
        workload(),
        None,
        "LowNodeUtilization",
        {"evictableNamespaces": {"exclude": ["shop"]}, "thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}},
        [],
        False,
        "namespace shop excluded by LowNodeUtilization evictableNamespaces.exclude",
    ),
    # plugin labelSelector
    (
        "plugin labelSelector matches",
        workload(),
        None,
        "RemovePodsHavingTooManyRestarts",
        {"labelSelector": LS},
        [],
        True,
        None,
    ),
    (
        "plugin labelSelector misses",
        workload(),
        None,
        "RemovePodsHavingTooManyRestarts",
        {"labelSelector": LS_OTHER},
        [],
        False,
        "labels do not match RemovePodsHavingTooManyRestarts labelSelector",
    ),
    # excludeOwnerKinds
    (
        "RemoveDuplicates excludes ReplicaSet",
        workload(),
        None,
        "RemoveDuplicates",
        {"excludeOwnerKinds": ["ReplicaSet"]},
        [],
        False,
        "owner kind ReplicaSet excluded by RemoveDuplicates",
    ),
    (
        "RemoveDuplicates other owner kind",
        workload(kind="StatefulSet"),
        None,
        "RemoveDuplicates",
        {"excludeOwnerKinds": ["ReplicaSet"]},
        [],
        True,
        None,
    ),
    (
        "RemoveDuplicates skips bare pods",
        workload(kind="Pod"),
        {"evictFailedBarePods": True},
        "RemoveDuplicates",
        None,
        [],
        False,
        "RemoveDuplicates skips pods without an owner",
    ),
    (
        "RemoveFailedPods excludes Job (CronJob pods)",
        workload(kind="CronJob"),
        None,
        "RemoveFailedPods",
        {"excludeOwnerKinds": ["Job"]},
        [],
        False,
        "owner kind Job excluded by RemoveFailedPods excludeOwnerKinds",
    ),
    # PodLifeTime ownerKinds
    (
        "ownerKinds.include hit",
        workload(kind="StatefulSet"),
        None,
        "PodLifeTime",
        {"ownerKinds": {"include": ["StatefulSet"]}},
        [],
        True,
        None,
    ),
    (
        "ownerKinds.include miss",
        workload(),
        None,
        "PodLifeTime",
        {"ownerKinds": {"include": ["StatefulSet"]}},
        [],
        False,
        "owner kind ReplicaSet not in PodLifeTime ownerKinds.include",
    ),
    (
        "ownerKinds.exclude",
        workload(),
        None,
        "PodLifeTime",
        {"ownerKinds": {"exclude": ["ReplicaSet"]}},
        [],
        False,
        "owner kind ReplicaSet excluded by PodLifeTime ownerKinds.exclude",
    ),
    # RemoveFailedPods note
    (
        "RemoveFailedPods only failed pods",
        workload(),
        None,
        "RemoveFailedPods",
        None,
        [],
        True,
        "RemoveFailedPods evicts only failed pods",
    ),
]


@pytest.mark.parametrize(
    ("doc", "evictor", "plugin", "args", "extra", "evictable", "reason"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_verdicts(doc, evictor, plugin, args, extra, evictable, reason):
    inventory = collect(("m.yaml", d) for d in [doc, *extra])
    verdicts = evaluate(model(policy(plugin, args, evictor)), inventory, 36)
    assert len(verdicts) == 1
    verdict = verdicts[0]
    assert (verdict.profile, verdict.plugin) == ("p", plugin)
    assert verdict.evictable is evictable, verdict.reasons
    if reason is None:
        assert not [r for r in verdict.reasons if not r.startswith("RemoveFailedPods")], verdict.reasons
    else:
        assert any(reason in r for r in verdict.reasons), verdict.reasons


def test_all_failures_are_reported():
    doc = workload(kind="DaemonSet", spec=EMPTY_DIR, labels={"app": "x"})
    verdict = evaluate(model(policy("PodLifeTime", None, {"labelSelector": LS})), collect([("f", doc)]))[0]
    assert verdict.reasons == [
        "protected: PodsWithLocalStorage (emptyDir volume cache)",
        "protected: DaemonSetPods (owned by a DaemonSet)",
        "labels do not match DefaultEvictor labelSelector",
    ]


def test_protection_sets():
    def active(args: dict[str, Any], target: int = 36) -> frozenset[str]:
        return active_protections(DefaultEvictorArgs.decode(args), target)

    defaults = {"PodsWithLocalStorage", "SystemCriticalPods", "FailedBarePods", "DaemonSetPods"}
    assert active({}) == defaults
    assert active({"ignorePvcPods": True, "evictDaemonSetPods": True}) == defaults - {"DaemonSetPods"} | {"PodsWithPVC"}
    new = {"podProtections": {"defaultDisabled": ["FailedBarePods"], "extraEnabled": ["PodsWithoutPDB", "Bogus"]}}
    assert active(new) == defaults - {"FailedBarePods"} | {"PodsWithoutPDB"}
    assert active(new, target=33) == defaults  # podProtections unknown before v0.34
    assert active({"evictDaemonSetPods": True}, target=29) == defaults


def test_release_gates():
    doc = workload(replicas=1, annotations={"descheduler.alpha.kubernetes.io/prefer-no-eviction": ""})
    inv = collect([("f", doc)])
    assert evaluate(model(policy("PodLifeTime", None, {"noEvictionPolicy": "Mandatory"})), inv, 33)[0].evictable
    assert evaluate(model(policy("PodLifeTime", None, {"minReplicas": 2})), inv, 29)[0].evictable
    owner = policy("PodLifeTime", {"ownerKinds": {"include": ["Job"]}})
    assert evaluate(model(owner), inv, 35)[0].evictable
    assert not evaluate(model(owner), inv, 36)[0].evictable


def test_plugins_profiles_and_first_plugin_config():
    pol = {
        "profiles": [
            {
                "name": "a",
                "pluginConfig": [
                    {"name": "RemoveDuplicates", "args": {"namespaces": {"exclude": ["shop"]}}},
                    {"name": "RemoveDuplicates", "args": {}},
                ],
                "plugins": {
                    "balance": {"enabled": ["RemoveDuplicates", "PodLifeTime", "Unknown"]},
                    "deschedule": {"enabled": ["RemoveFailedPods"]},
                    "filter": {"enabled": ["DefaultEvictor"]},
                },
            },
            {"plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}, "pluginConfig": [{"name": "PodLifeTime"}]},
            "junk",
            {"name": "empty"},
        ]
    }
    inv = collect([("f", workload())])
    verdicts = evaluate(model(pol), inv)
    assert [(v.profile, v.plugin, v.evictable) for v in verdicts] == [
        ("a", "RemoveFailedPods", True),
        ("a", "RemoveDuplicates", False),
        ("profiles[1]", "PodLifeTime", True),
    ]
    summary = summarize(verdicts)
    entry = summary["Deployment/shop/web"]
    assert entry.evictable
    assert entry.targeted_by == ["a/RemoveFailedPods", "profiles[1]/PodLifeTime"]
    assert entry.reasons == ["a/RemoveDuplicates: namespace shop excluded by RemoveDuplicates namespaces.exclude"]


def test_summary_of_protected_workload():
    inv = collect([("f", workload(kind="DaemonSet"))])
    summary = summarize(evaluate(model(policy("PodLifeTime")), inv))
    assert summary["DaemonSet/shop/web"] == (
        False,
        [],
        ["p/PodLifeTime: protected: DaemonSetPods (owned by a DaemonSet)"],
    )


@pytest.mark.parametrize("bad", [None, "x", [], {"profiles": "x"}, {"strategies": {}}, {"profiles": [{"plugins": []}]}])
def test_malformed_policies_give_no_verdicts(bad):
    assert evaluate(model(bad), collect([("f", workload())])) == []

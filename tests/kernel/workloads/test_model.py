"""collect(): every input kind, HPA effect, ``kind: List``, positions, and tolerance of malformed documents."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from desched.reading.yamlsrc import load_all
from desched.workloads.model import collect

MANIFESTS = textwrap.dedent(
    """\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: shop}
    spec:
      replicas: 2
      template:
        metadata:
          labels: {app: web}
          annotations: {descheduler.alpha.kubernetes.io/evict: "true"}
        spec:
          priorityClassName: high
          volumes: [{name: cache, emptyDir: {}}]
    ---
    apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: db, namespace: shop}
    spec:
      template: {metadata: {labels: {app: db}}, spec: {}}
      volumeClaimTemplates:
      - metadata: {name: data}
        spec: {storageClassName: fast}
      - metadata: {name: logs}
        spec: {}
    ---
    apiVersion: apps/v1
    kind: ReplicaSet
    metadata: {name: rs}
    spec: {replicas: 3, template: {metadata: {labels: {app: rs}}}}
    ---
    apiVersion: v1
    kind: ReplicationController
    metadata: {name: rc}
    spec: {template: {metadata: {labels: {app: rc}}}}
    ---
    apiVersion: batch/v1
    kind: Job
    metadata: {name: job}
    spec: {template: {metadata: {labels: {app: job}}, spec: {restartPolicy: Never}}}
    ---
    apiVersion: batch/v1
    kind: CronJob
    metadata: {name: cron}
    spec:
      schedule: "* * * * *"
      jobTemplate:
        spec:
          template:
            metadata: {labels: {app: cron}}
            spec: {restartPolicy: Never}
    ---
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: agent, namespace: kube-system}
    spec: {template: {metadata: {labels: {app: agent}}}}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: bare, labels: {app: bare}, annotations: {a: b}}
    spec: {containers: [{name: c, image: nginx}]}
    ---
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: web-pdb, namespace: shop}
    spec: {minAvailable: "50%", selector: {matchLabels: {app: web}}}
    ---
    apiVersion: policy/v1beta1
    kind: PodDisruptionBudget
    metadata: {name: old-pdb}
    spec: {maxUnavailable: 1, selector: {}}
    ---
    apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: web-hpa, namespace: shop}
    spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 4, maxReplicas: 9}
    ---
    apiVersion: autoscaling/v1
    kind: HorizontalPodAutoscaler
    metadata: {name: rs-hpa}
    spec: {scaleTargetRef: {kind: ReplicaSet, name: rs}, maxReplicas: 9}
    ---
    apiVersion: v1
    kind: Namespace
    metadata: {name: shop, labels: {team: a}}
    ---
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: high}
    value: 1000
    globalDefault: true
    ---
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: claim, namespace: shop}
    spec: {storageClassName: slow}
    ---
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: fast, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
    provisioner: x
    """
)


def _inventory():
    return collect(("m.yaml", doc) for doc in load_all(MANIFESTS))


def test_every_kind():
    inv = _inventory()
    by_key = {w.key: w for w in inv.workloads}
    assert list(by_key) == [
        "Deployment/shop/web",
        "StatefulSet/shop/db",
        "ReplicaSet/default/rs",
        "ReplicationController/default/rc",
        "Job/default/job",
        "CronJob/default/cron",
        "DaemonSet/kube-system/agent",
        "Pod/default/bare",
    ]
    owners = {key: w.owner_kind for key, w in by_key.items()}
    assert list(owners.values()) == [
        "ReplicaSet",
        "StatefulSet",
        "ReplicaSet",
        "ReplicationController",
        "Job",
        "Job",
        "DaemonSet",
        None,
    ]
    replicas = [w.replicas for w in inv.workloads]
    # web: HPA min 4 (spec 2); rs: HPA default min 1 (spec 3); Job/CronJob/DaemonSet unknown; bare pod 1
    assert replicas == [4, 1, 1, 1, None, None, None, 1]
    web = by_key["Deployment/shop/web"]
    assert web.labels == {"app": "web"}
    assert web.annotations == {"descheduler.alpha.kubernetes.io/evict": "true"}
    assert web.priority_class == "high"
    assert web.pod_spec["volumes"][0]["name"] == "cache"
    assert by_key["StatefulSet/shop/db"].claim_templates == {"data": "fast", "logs": None}
    assert by_key["CronJob/default/cron"].labels == {"app": "cron"}
    assert by_key["Pod/default/bare"].labels == {"app": "bare"}
    assert by_key["Pod/default/bare"].annotations == {"a": "b"}
    assert [(p.name, p.namespace, p.api_version, p.min_available, p.max_unavailable) for p in inv.pdbs] == [
        ("web-pdb", "shop", "policy/v1", "50%", None),
        ("old-pdb", "default", "policy/v1beta1", None, 1),
    ]
    assert [(h.target_kind, h.target_name, h.min_replicas) for h in inv.hpas] == [
        ("Deployment", "web", 4),
        ("ReplicaSet", "rs", 1),
    ]
    assert inv.namespaces == {"shop": {"team": "a"}}
    assert inv.priority_classes == {"high": 1000}
    assert inv.default_priority == 1000
    assert inv.pvcs == {("shop", "claim"): "slow"}
    assert inv.storage_classes == {"fast": True}
    assert inv.default_storage_class() == "fast"


def test_positions_and_where():
    inv = _inventory()
    web = inv.workloads[0]
    assert (web.file, web.line, web.column) == ("m.yaml", 1, 1)
    assert web.where((*web.pod_path, "spec", "volumes", 0)) == ("m.yaml", 12, 17)
    assert web.where(("spec", "missing", "deeper")) == ("m.yaml", 5, 3)  # nearest ancestor: spec's value
    sts = inv.workloads[1]
    assert sts.line == 14
    plain = collect([("p.yaml", {"kind": "Pod", "metadata": {"name": "p"}})]).workloads[0]
    assert plain.where(("spec",)) == ("p.yaml", 1, 1)


def test_hpa_only_affects_its_own_namespace_and_kind():
    docs = [
        {"kind": "Deployment", "metadata": {"name": "web", "namespace": "a"}, "spec": {"replicas": 1}},
        {"kind": "StatefulSet", "metadata": {"name": "web", "namespace": "a"}},
        {
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "namespace": "b"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 5},
        },
        {
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "namespace": "a"},
            "spec": {"scaleTargetRef": {"kind": "StatefulSet", "name": "web"}, "minReplicas": 3},
        },
    ]
    inv = collect(("f", d) for d in docs)
    assert [w.replicas for w in inv.workloads] == [1, 3]


def _hpa(name: str, minimum: int | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"scaleTargetRef": {"kind": "Deployment", "name": "web"}}
    if minimum is not None:
        spec["minReplicas"] = minimum
    return {"kind": "HorizontalPodAutoscaler", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize(
    ("replicas", "minimums", "expected"),
    [
        (6, [2], 2),  # the autoscaler may scale it down to minReplicas
        (4, [None], 1),  # minReplicas defaults to 1
        (1, [5], 5),  # and it never runs below minReplicas
        (4, [3, 2], 2),  # two HPAs fight over it: the smallest it can run at
    ],
)
def test_a_workload_with_an_hpa_is_judged_at_min_replicas(replicas: int, minimums: list[int | None], expected: int):
    docs = [
        {"kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": replicas}},
        *(_hpa(f"h{index}", minimum) for index, minimum in enumerate(minimums)),
    ]
    assert collect(("f", d) for d in docs).workloads[0].replicas == expected


def test_kind_list_items():
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"kind": "Deployment", "metadata": {"name": "a"}},
            {"kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "spec": {"selector": {}}},
            "junk",
            {"kind": "Namespace", "metadata": {"name": "ns"}},
        ],
    }
    inv = collect(
        [
            ("l.yaml", doc),
            ("l.yaml", {"kind": "DeploymentList", "items": [{"kind": "Deployment", "metadata": {"name": "b"}}]}),
        ]
    )
    assert [w.name for w in inv.workloads] == ["a", "b"]
    assert [p.name for p in inv.pdbs] == ["p"]
    assert inv.namespaces == {"ns": {}}


def test_malformed_documents_are_skipped():
    docs = [
        None,
        "text",
        [1, 2],
        {"kind": "Deployment"},
        {"kind": "Deployment", "metadata": {"name": ""}},
        {"kind": "Deployment", "metadata": "web"},
        {"kind": 3, "metadata": {"name": "x"}},
        {
            "kind": "Deployment",
            "metadata": {"name": "ok", "namespace": 7},
            "spec": {"replicas": "2", "template": {"metadata": {"labels": ["a"]}, "spec": "bad"}},
        },
        {"kind": "PriorityClass", "metadata": {"name": "p"}, "value": "high"},
        {"kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"}, "spec": {"scaleTargetRef": "web"}},
        {"kind": "List", "items": "nope"},
        {"kind": "ConfigMap", "metadata": {"name": "cm"}},
    ]
    inv = collect(("f", d) for d in docs)
    assert [(w.key, w.replicas, w.labels, w.pod_spec) for w in inv.workloads] == [("Deployment/default/ok", 1, {}, {})]
    assert inv.priority_classes == {}
    assert inv.hpas == []


def test_snapshot_pods_keep_their_owner_and_count_their_siblings():
    def pod(name, refs):
        return ("s.yaml", {"kind": "Pod", "metadata": {"name": name, "namespace": "a", "ownerReferences": refs}})

    rs = [{"kind": "ReplicaSet", "name": "web-1", "uid": "u1", "controller": True}]
    both = [
        {"kind": "Node", "name": "n", "uid": "u9"},
        {"kind": "DaemonSet", "name": "agent", "uid": "u2", "controller": True},
    ]
    inventory = collect([pod("web-a", rs), pod("web-b", rs), pod("agent-x", both), pod("bare", None)])
    found = {w.name: (w.owner_kind, w.owner_uid, w.replicas) for w in inventory.workloads}
    assert found == {
        "web-a": ("ReplicaSet", "u1", 2),
        "web-b": ("ReplicaSet", "u1", 2),
        "agent-x": ("DaemonSet", "u2", 1),
        "bare": (None, None, 1),
    }

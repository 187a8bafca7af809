"""DS505: the operator's cluster checks (docs/openshift-operator.md#34-cluster-rules) against the cluster objects linted
in the same run."""

from __future__ import annotations

import pytest

from tests.conftest import lint

KD = """apiVersion: operator.openshift.io/v1
kind: KubeDescheduler
metadata:
  name: cluster
  namespace: openshift-kube-descheduler-operator
spec:
  mode: Automatic
  deschedulingIntervalSeconds: 3600
  profiles:
  - AffinityAndTaints
  - {profile}
{custom}"""


def kd(profile: str, custom: str = "") -> str:
    return KD.format(profile=profile, custom=f"  profileCustomizations:\n{custom}" if custom else "")


def scheduler(profile: str) -> str:
    body = f"\nspec:\n  profile: {profile}\n" if profile else "\nspec: {}\n"
    return "---\napiVersion: config.openshift.io/v1\nkind: Scheduler\nmetadata:\n  name: cluster" + body


def node(name: str, labels: str = "{}") -> str:
    return f"---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {labels}\n"


ROUTE = (
    "---\napiVersion: route.openshift.io/v1\nkind: Route\nmetadata:\n  name: prometheus-k8s\n"
    "  namespace: openshift-monitoring\n"
)
NAMESPACE = "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-kube-descheduler-operator\n"
KUBEVIRT_NODE = node("kv", "{kubevirt.io/schedulable: 'true'}")
MONITORED = NAMESPACE + "  labels: {openshift.io/cluster-monitoring: 'true'}\n"
HOST = "status:\n  ingress:\n  - host: prometheus.apps.example\n"
PRIORITY = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: {name}\nvalue: 100\n"

CASES = [
    # (id, text, expected (line, message start) of DS505 findings)
    (
        "lnu-vs-scheduler-hnu",
        kd("LongLifecycle") + scheduler("HighNodeUtilization"),
        [(11, "enabling Descheduler LowNodeUtilization with Scheduler HighNodeUtilization may cause an eviction/")],
    ),
    (
        "lifecycle-vs-scheduler-hnu",
        kd("LifecycleAndUtilization") + scheduler("HighNodeUtilization"),
        [(11, "enabling Descheduler LowNodeUtilization with Scheduler HighNodeUtilization")],
    ),
    (
        "devpreview-vs-scheduler-hnu",
        kd("DevPreviewLongLifecycle") + scheduler("HighNodeUtilization"),
        [(11, "enabling Descheduler LowNodeUtilization with Scheduler HighNodeUtilization")],
    ),
    (
        "compact-vs-scheduler-lnu",
        kd("CompactAndScale") + scheduler("LowNodeUtilization"),
        [(11, "enabling Descheduler CompactAndScale with Scheduler LowNodeUtilization may cause")],
    ),
    ("compact-vs-empty-scheduler-profile", kd("CompactAndScale") + scheduler(""), []),
    ("lifecycle-vs-scheduler-lnu", kd("LongLifecycle") + scheduler("LowNodeUtilization"), []),
    ("compact-vs-scheduler-hnu", kd("CompactAndScale") + scheduler("HighNodeUtilization"), []),
    ("kubevirt-vs-scheduler-hnu-not-checked", kd("KubeVirtRelieveAndMigrate") + scheduler("HighNodeUtilization"), []),
    ("no-scheduler-object", kd("LongLifecycle"), []),
    (
        "kubevirt-without-kubevirt-nodes",
        kd("KubeVirtRelieveAndMigrate") + node("a") + node("b"),
        [(11, "profile KubeVirtRelieveAndMigrate can only be used when KubeVirt is properly deployed: none of the 2")],
    ),
    (
        "dev-kubevirt-without-kubevirt-nodes",
        kd("DevKubeVirtRelieveAndMigrate") + node("a"),
        [(11, "profile DevKubeVirtRelieveAndMigrate can only be used when KubeVirt is properly deployed")],
    ),
    ("kubevirt-with-a-kubevirt-node", kd("KubeVirtRelieveAndMigrate") + node("a") + KUBEVIRT_NODE, []),
    ("kubevirt-no-nodes-known", kd("KubeVirtRelieveAndMigrate"), []),
    (
        "route-without-ingress",
        kd("KubeVirtRelieveAndMigrate") + ROUTE,
        [(11, "No ingress found in openshift-monitoring/prometheus-k8s route")],
    ),
    (
        "route-with-empty-host",
        kd("KubeVirtRelieveAndMigrate") + ROUTE + "status:\n  ingress:\n  - host: ''\n",
        [(11, "Host for status.ingress[0] in openshift-monitoring/prometheus-k8s route is empty")],
    ),
    ("route-with-host", kd("KubeVirtRelieveAndMigrate") + ROUTE + HOST, []),
    (
        "actual-utilization-route-without-ingress",
        kd("LongLifecycle", "    devActualUtilizationProfile: PrometheusCPUUsage\n") + ROUTE,
        [(13, "No ingress found in openshift-monitoring/prometheus-k8s route")],
    ),
    ("no-prometheus-no-route-check", kd("LongLifecycle") + ROUTE, []),
    (
        "namespace-without-monitoring-label",
        kd("KubeVirtRelieveAndMigrate") + NAMESPACE,
        [
            (
                11,
                "namespace openshift-kube-descheduler-operator is not labeled with "
                "openshift.io/cluster-monitoring=true",
            )
        ],
    ),
    ("namespace-with-monitoring-label", kd("KubeVirtRelieveAndMigrate") + MONITORED, []),
    ("namespace-label-without-prometheus", kd("LongLifecycle") + NAMESPACE, []),
    (
        "missing-priority-class",
        kd("LongLifecycle", "    thresholdPriorityClassName: gold\n") + PRIORITY.format(name="silver"),
        [(13, "thresholdPriorityClassName 'gold' names no PriorityClass of the inputs (silver)")],
    ),
    (
        "existing-priority-class",
        kd("LongLifecycle", "    thresholdPriorityClassName: gold\n") + PRIORITY.format(name="gold"),
        [],
    ),
    (
        "system-priority-class",
        kd("LongLifecycle", "    thresholdPriorityClassName: system-node-critical\n") + PRIORITY.format(name="gold"),
        [],
    ),
    ("no-priority-classes-known", kd("LongLifecycle", "    thresholdPriorityClassName: gold\n") + node("a"), []),
    (
        "snapshot-list",
        kd("KubeVirtRelieveAndMigrate") + "---\napiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: a}}\n",
        [(11, "profile KubeVirtRelieveAndMigrate can only be used when KubeVirt is properly deployed")],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_cluster_checks(text: str, expected: list[tuple[int, str]]) -> None:
    found = [finding for finding in lint(text) if finding.rule == "DS505"]
    assert len(found) == len(expected)
    pairs = zip(found, expected, strict=True)
    assert [(finding.line, finding.message[: len(message)]) for finding, (_, message) in pairs] == expected
    assert all(finding.severity == "error" and finding.column > 0 for finding in found)


def test_the_check_reads_a_snapshot_given_beside_the_cr(tmp_path, capsys) -> None:
    from desched.cli import main

    (tmp_path / "kd.yaml").write_text(kd("LongLifecycle"))
    (tmp_path / "snapshot.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: config.openshift.io/v1\n"
        "  kind: Scheduler\n  metadata: {name: cluster}\n"
        "  spec: {profile: HighNodeUtilization}\n"
    )
    code = main(["lint", "--format", "json", str(tmp_path)])
    report = capsys.readouterr().out
    assert code == 1
    assert '"rule": "DS505"' in report and f'"file": "{tmp_path / "kd.yaml"}"' in report

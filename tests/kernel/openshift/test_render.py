"""The operator's rendering (docs/openshift-operator.md#2-from-profiles-to-plugins,
docs/openshift-operator.md#4-worked-examples): the worked examples exactly, and their sibling cases."""

from __future__ import annotations

import os

import pytest
import yaml

from desched.openshift import Environment, RenderError, render

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
# The TestManageConfigMap cluster (docs/openshift-operator.md#4-worked-examples).
TEST_CLUSTER = Environment(("kube-system", "openshift-kube-scheduler", "openshift-kube-descheduler-operator"))
PROTECTED = [
    "kube-system",
    "hypershift",
    "openshift",
    "openshift-kube-descheduler-operator",
    "openshift-kube-scheduler",
]


def load(name: str) -> dict:
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def kd(profiles: list[str], custom: dict | None = None, **spec: object) -> dict:
    body = {"mode": "Automatic", "deschedulingIntervalSeconds": 3600, "profiles": profiles, **spec}
    if custom is not None:
        body["profileCustomizations"] = custom
    return {"kind": "KubeDescheduler", "metadata": {"name": "cluster"}, "spec": body}


def args(policy: dict, plugin: str, profile: int = 0) -> dict:
    return next(c["args"] for c in policy["profiles"][profile]["pluginConfig"] if c["name"] == plugin)


@pytest.mark.parametrize("example", ["example1", "example2", "example3"])
def test_worked_examples_render_exactly(example):
    rendering = render(load(f"{example}.input.yaml"), TEST_CLUSTER)
    assert rendering.policy == load(f"{example}.policy.yaml")


def test_kubevirt_renders_identically_to_its_dev_variant():
    source = load("example3.input.yaml")
    source["spec"]["profiles"] = ["KubeVirtRelieveAndMigrate"]
    assert render(source, TEST_CLUSTER).policy == load("example3.policy.yaml")


@pytest.mark.parametrize(
    ("preset", "low", "high"), [("Low", 10, 30), ("Medium", 20, 50), ("High", 40, 70), ("", 20, 50)]
)
def test_low_node_utilization_presets(preset, low, high):
    lnu = args(
        render(kd(["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": preset})).policy,
        "LowNodeUtilization",
    )
    assert lnu["thresholds"] == {"cpu": low, "memory": low, "pods": low}
    assert lnu["targetThresholds"] == {"cpu": high, "memory": high, "pods": high}


def test_pvc_modifier_drops_ignore_pvc_pods():
    assert args(render(kd(["LifecycleAndUtilization", "EvictPodsWithPVC"])).policy, "DefaultEvictor") == {
        "podProtections": {}
    }


def test_local_storage_modifier():
    evictor = args(render(kd(["AffinityAndTaints", "EvictPodsWithLocalStorage"])).policy, "DefaultEvictor")
    assert evictor == {"evictLocalStoragePods": True, "ignorePvcPods": True, "podProtections": {}}


def test_priority_thresholds():
    by_value = render(kd(["LifecycleAndUtilization"], {"thresholdPriority": 1000})).policy
    assert args(by_value, "DefaultEvictor")["priorityThreshold"] == {"name": "", "value": 1000}
    by_name = render(kd(["AffinityAndTaints"], {"thresholdPriorityClassName": "high"})).policy
    assert args(by_name, "DefaultEvictor")["priorityThreshold"] == {"name": "high"}


@pytest.mark.parametrize("profile", ["LifecycleAndUtilization", "DevKubeVirtRelieveAndMigrate"])
def test_eviction_limits(profile):
    policy = render(kd([profile], evictionLimits={"total": 10, "node": 3})).policy
    assert (policy["maxNoOfPodsToEvictTotal"], policy["maxNoOfPodsToEvictPerNode"]) == (10, 3)
    assert args(policy, "LowNodeUtilization")["evictionLimits"] == {"node": 3}


def test_included_namespaces_with_lifecycle_fall_back_for_lnu():
    rendering = render(
        kd(["LifecycleAndUtilization"], {"namespaces": {"included": ["includedNamespace"]}}), TEST_CLUSTER
    )
    assert args(rendering.policy, "PodLifeTime")["namespaces"] == {"include": ["includedNamespace"]}
    assert args(rendering.policy, "RemovePodsHavingTooManyRestarts")["namespaces"] == {"include": ["includedNamespace"]}
    assert args(rendering.policy, "LowNodeUtilization")["evictableNamespaces"] == {"exclude": PROTECTED}
    assert rendering.notes


def test_compact_and_scale():
    policy = render(kd(["CompactAndScale"]), TEST_CLUSTER).policy
    assert args(policy, "HighNodeUtilization") == {
        "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
        "evictableNamespaces": {"exclude": PROTECTED},
    }
    assert policy["profiles"][0]["plugins"]["balance"] == {"enabled": ["HighNodeUtilization"]}
    included = render(kd(["CompactAndScale"], {"namespaces": {"included": ["a"]}})).policy
    assert "evictableNamespaces" not in args(included, "HighNodeUtilization")
    minimal = render(kd(["CompactAndScale"], {"devHighNodeUtilizationThresholds": "Moderate"})).policy
    assert args(minimal, "HighNodeUtilization")["thresholds"] == {"cpu": 30, "memory": 30, "pods": 30}


def test_excluded_namespaces_follow_the_protected_list():
    policy = render(kd(["TopologyAndDuplicates"], {"namespaces": {"excluded": ["x", "y"]}}), TEST_CLUSTER).policy
    assert args(policy, "RemoveDuplicates") == {"namespaces": {"exclude": [*PROTECTED, "x", "y"]}}
    assert args(policy, "RemovePodsViolatingTopologySpreadConstraint")["constraints"] == ["DoNotSchedule"]


def test_soft_topology_and_long_lifecycle():
    policy = render(kd(["SoftTopologyAndDuplicates", "DevPreviewLongLifecycle"])).policy
    assert [p["name"] for p in policy["profiles"]] == ["SoftTopologyAndDuplicates", "LongLifecycle"]
    assert args(policy, "RemovePodsViolatingTopologySpreadConstraint")["constraints"] == [
        "DoNotSchedule",
        "ScheduleAnyway",
    ]
    assert "PodLifeTime" not in [c["name"] for c in policy["profiles"][1]["pluginConfig"]]
    assert policy["profiles"][1]["plugins"]["deschedule"] == {"enabled": ["RemovePodsHavingTooManyRestarts"]}


def test_kubevirt_migration_cooldowns():
    custom = {"devMigrationCooldown": "15m", "devMaxMigrationCooldown": "6h", "devMigrationHistoryWindow": "48h"}
    policy = render(kd(["DevKubeVirtRelieveAndMigrate"], custom)).policy
    assert args(policy, "KubevirtMigrationAware") == {
        "migrationCooldown": "15m0s",
        "maxMigrationCooldown": "6h0m0s",
        "migrationHistoryWindow": "48h0m0s",
    }


@pytest.mark.parametrize(
    ("custom", "thresholds", "target", "deviation"),
    [
        ({"devLowNodeUtilizationThresholds": "Low"}, 10, 30, False),
        ({"devLowNodeUtilizationThresholds": ""}, 20, 50, True),
        ({"devDeviationThresholds": "Medium"}, 20, 20, True),
        ({"devDeviationThresholds": "AsymmetricHigh"}, 0, 30, True),
        ({}, 0, 10, True),
    ],
)
def test_kubevirt_thresholds(custom, thresholds, target, deviation):
    lnu = args(render(kd(["KubeVirtRelieveAndMigrate"], custom)).policy, "LowNodeUtilization")
    assert lnu["thresholds"] == {"MetricResource": thresholds}
    assert lnu["targetThresholds"] == {"MetricResource": target}
    assert lnu.get("useDeviationThresholds", False) is deviation


def test_kubevirt_deviation_low_with_combined_metrics():
    custom = {"devDeviationThresholds": "Low", "devActualUtilizationProfile": "PrometheusCPUCombined"}
    lnu = args(render(kd(["DevKubeVirtRelieveAndMigrate"], custom)).policy, "LowNodeUtilization")
    assert (lnu["thresholds"], lnu["targetThresholds"]) == ({"MetricResource": 10}, {"MetricResource": 10})
    assert lnu["metricsUtilization"]["prometheus"]["query"] == "descheduler:combined_utilization_and_pressure:avg1m"


def test_actual_utilization_switches_lifecycle_to_metric_resource():
    policy = render(
        kd(["LongLifecycle"], {"devActualUtilizationProfile": "query:up"}), Environment(prometheus_host="p.example")
    ).policy
    lnu = args(policy, "LowNodeUtilization")
    assert lnu["metricsUtilization"] == {"source": "Prometheus", "prometheus": {"query": "up"}}
    assert lnu["thresholds"] == {"MetricResource": 20}
    assert policy["metricsProviders"] == [{"source": "Prometheus", "prometheus": {"url": "https://p.example"}}]
    assert "nodeSelector" not in policy


def test_only_modifiers_render_no_profile():
    assert render(kd(["EvictPodsWithPVC"])).policy["profiles"] == []


@pytest.mark.parametrize(
    "source",
    [
        kd([]),
        kd(["TopologyAndDuplicates", "SoftTopologyAndDuplicates"]),
        kd(["AffinityAndTaints"], {"thresholdPriority": 1, "thresholdPriorityClassName": "x"}),
        kd(["AffinityAndTaints"], {"namespaces": {"included": ["kube-system"]}}),
    ],
)
def test_refused(source):
    with pytest.raises(RenderError):
        render(source)


def test_origins_point_into_the_cr():
    rendering = render(kd(["LifecycleAndUtilization"], {"podLifetime": "5m"}))
    origins = rendering.origins
    assert origins[("profiles", 0)] == ("spec", "profiles", 0)
    assert origins[("profiles", 0, "pluginConfig", 0, "args", "maxPodLifeTimeSeconds")] == (
        "spec", "profileCustomizations", "podLifetime"
    )  # fmt: skip


# utilizationProfileToPrometheusQuery in pkg/operator/target_config_reconciler.go, verbatim.
OPERATOR_QUERIES = [
    ("PrometheusCPUUsage", "instance:node_cpu:rate:sum"),
    ("PrometheusCPUPSIPressure", "rate(node_pressure_cpu_waiting_seconds_total[1m])"),
    (
        "PrometheusCPUPSIPressureByUtilization",
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) and (1 - avg by (instance) "
        '(rate(node_cpu_seconds_total{mode="idle"}[1m]))) > 0.7 or avg by (instance) '
        "( rate(node_pressure_cpu_waiting_seconds_total[1m])) * 0",
    ),
    ("PrometheusMemoryPSIPressure", "rate(node_pressure_memory_waiting_seconds_total[1m])"),
    ("PrometheusIOPSIPressure", "rate(node_pressure_io_waiting_seconds_total[1m])"),
    ("PrometheusCPUCombined", "descheduler:combined_utilization_and_pressure:avg1m"),
    ("PrometheusCPUMemoryCombinedProfile", "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m"),
    ("query:sum(up)", "sum(up)"),
]


@pytest.mark.parametrize(("profile", "query"), OPERATOR_QUERIES, ids=[p for p, _ in OPERATOR_QUERIES])
def test_actual_utilization_profiles_render_the_operators_exact_query(profile, query):
    lnu = args(render(kd(["LongLifecycle"], {"devActualUtilizationProfile": profile})).policy, "LowNodeUtilization")
    assert lnu["metricsUtilization"]["prometheus"]["query"] == query

"""Behaviour of desched.validation beyond upstream's tables: releases, codes, paths, constructor and policy checks."""

from __future__ import annotations

import pytest

from desched.plugins import REGISTRY, construct_args, validate_args
from desched.validation import (
    ArgError,
    aggregate,
    podlifetime_state_since,
    podlifetime_states,
    validate_policy,
)
from desched.validation.gourl import parse_error


def messages(errors: list[ArgError]) -> list[str]:
    return [error.message for error in errors]


def test_aggregate() -> None:
    assert aggregate([]) == ""
    assert aggregate(["a"]) == "a"
    assert aggregate(["a", "b"]) == "[a, b]"
    assert aggregate(["a", "b", "a"]) == "[a, b]"
    assert aggregate(["a", "a"]) == "a"


def test_podlifetime_state_lists_per_release() -> None:
    assert len(podlifetime_states(27)) == 4
    assert len(podlifetime_states(29)) == 5
    assert len(podlifetime_states(30)) == 15
    assert len(podlifetime_states(33)) == 15
    assert len(podlifetime_states(34)) == 17
    assert len(podlifetime_states(36)) == 24
    assert podlifetime_state_since("OOMKilled") == 36
    assert podlifetime_state_since("Bogus") is None


def test_state_accepted_later_is_a_version_error() -> None:
    args = {"maxPodLifeTimeSeconds": 60, "states": ["Running", "Succeeded"]}
    assert validate_args("PodLifeTime", args, 34) == []
    (error,) = validate_args("PodLifeTime", args, 33)
    assert error.code == "version"
    assert error.path == ("states", 1)
    assert error.message.startswith("states must be one of [ContainerCreating CrashLoopBackOff")
    (error,) = validate_args("PodLifeTime", {"maxPodLifeTimeSeconds": 60, "states": ["Succeeded", "Nope"]}, 33)
    assert error.code == "other"
    (error,) = validate_args("PodLifeTime", {"maxPodLifeTimeSeconds": 60, "states": ["OOMKilled"]}, 35)
    assert error.code == "version"


def test_podlifetime_filter_rule_changed_in_v036() -> None:
    args: dict[str, object] = {"states": ["Running"]}
    assert messages(validate_args("PodLifeTime", args, 35)) == ["MaxPodLifeTimeSeconds not set"]
    assert validate_args("PodLifeTime", args, 36) == []
    assert validate_args("PodLifeTime", {"exitCodes": [1]}, 36) == []
    assert messages(validate_args("PodLifeTime", {"conditions": [{}, {"type": "Ready"}, None]}, 36)) == [
        "conditions[0]: at least one of type, status, reason, or minTimeSinceLastTransitionSeconds must be set",
        "conditions[2]: at least one of type, status, reason, or minTimeSinceLastTransitionSeconds must be set",
    ]
    args = {"maxPodLifeTimeSeconds": 1, "ownerKinds": {"include": ["Job"], "exclude": ["DaemonSet"]}}
    assert messages(validate_args("PodLifeTime", args, 36)) == ["only one of Include/Exclude ownerKinds can be set"]
    assert validate_args("PodLifeTime", args, 35) == []  # the field does not exist yet; strict decoding rejects it


def test_first_error_only_before_v034() -> None:
    args: dict[str, object] = {"nodeAffinityType": [], "namespaces": {"include": ["a"], "exclude": ["b"]}}
    assert messages(validate_args("RemovePodsViolatingNodeAffinity", args, 33)) == ["nodeAffinityType needs to be set"]
    assert len(validate_args("RemovePodsViolatingNodeAffinity", args, 34)) == 2
    args = {"podRestartThreshold": 0, "states": ["Failed"]}
    assert len(validate_args("RemovePodsHavingTooManyRestarts", args, 33)) == 1
    assert validate_args("RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 1, "states": ["x"]}, 27) == []
    args = {"namespaces": {"include": ["a"], "exclude": ["b"]}, "constraints": ["foo"]}
    assert len(validate_args("RemovePodsViolatingTopologySpreadConstraint", args, 28)) == 2
    assert len(validate_args("RemovePodsViolatingTopologySpreadConstraint", args, 27)) == 1
    args = {"excludedTaints": ["a"], "includedTaints": ["b"]}
    assert validate_args("RemovePodsViolatingNodeTaints", args, 29) == []
    assert len(validate_args("RemovePodsViolatingNodeTaints", args, 30)) == 1


def test_default_evictor_priority_per_release() -> None:
    both = {"priorityThreshold": {"value": 1, "name": "high"}}
    (error,) = validate_args("DefaultEvictor", both, 36)
    assert (error.code, error.path) == ("priority", ("priorityThreshold",))
    (error,) = validate_args("DefaultEvictor", both, 30)
    assert error.message == (
        "priority threshold misconfigured, only one of priorityThreshold fields can be set, "
        "got &{{ }  false false false false false <nil> 0x… false 0}"
    )
    name_only = {"priorityThreshold": {"name": "high"}}
    assert validate_args("DefaultEvictor", name_only, 28) == []
    (error,) = validate_args("DefaultEvictor", name_only, 27)  # v0.27 ignored `value` in this check
    assert error.code == "priority"
    assert error.message.endswith("got &{{ }  false false false false <nil> 0x… false}")
    # podProtections and noEvictionPolicy are only validated from v0.34 on
    assert (
        validate_args("DefaultEvictor", {"noEvictionPolicy": "x", "podProtections": {"extraEnabled": ["x"]}}, 33) == []
    )


def test_default_evictor_paths() -> None:
    args = {"podProtections": {"extraEnabled": ["PodsWithPVC", "Nope", "PodsWithPVC"]}}
    assert [error.path for error in validate_args("DefaultEvictor", args, 36)] == [
        ("podProtections", "extraEnabled", 1),
        ("podProtections", "extraEnabled", 2),
    ]


def test_nodeutilization_codes_and_paths() -> None:
    low = "LowNodeUtilization"
    (error,) = validate_args(low, {"thresholds": {"cpu": 120}, "targetThresholds": {"cpu": 50}}, 36)
    assert (error.code, error.path) == ("range", ("thresholds", "cpu"))
    (error,) = validate_args(low, {"thresholds": {"cpu": 60}, "targetThresholds": {"cpu": 50}}, 36)
    assert (error.code, error.path) == ("order", ("thresholds", "cpu"))
    assert (
        validate_args(
            low, {"thresholds": {"cpu": 60}, "targetThresholds": {"cpu": 50}, "useDeviationThresholds": True}, 36
        )
        == []
    )
    (error,) = validate_args(low, None, 36)
    assert (error.code, error.message) == (
        "thresholds",
        "thresholds config is not valid: no resource threshold is configured",
    )
    (error,) = validate_args(low, {"thresholds": {"cpu": 10}}, 36)
    assert error.message == "targetThresholds config is not valid: no resource threshold is configured"
    (error,) = validate_args(low, {"thresholds": {"cpu": 10}, "evictableNamespaces": {"include": ["a"]}}, 36)
    assert error.message == "only Exclude namespaces can be set, inclusion is not supported"
    metrics = {
        "thresholds": {"cpu": 10},
        "targetThresholds": {"cpu": 20},
        "metricsUtilization": {"source": "Prometheus"},
    }
    assert validate_args(low, metrics, 32) == []
    (error,) = validate_args("HighNodeUtilization", {"thresholds": {"cpu": 10}, "evictionModes": ["x"]}, 33)
    assert error.path == ("evictionModes", 0)
    assert validate_args("HighNodeUtilization", {"thresholds": {"cpu": 10}, "evictionModes": ["x"]}, 32) == []


def test_low_node_utilization_prometheus_constructor() -> None:
    args = {
        "thresholds": {"MetricResource": 20},
        "targetThresholds": {"MetricResource": 60},
        "metricsUtilization": {"source": "Prometheus", "prometheus": {"query": "q"}},
    }
    assert construct_args("LowNodeUtilization", args, 36) == []
    args["targetThresholds"] = {"cpu": 60, "memory": 60}
    (error,) = construct_args("LowNodeUtilization", args, 36)
    assert error.message == (
        'targetThresholds are expected to specify a single instance of "MetricResource" resource, '
        "got [cpu memory] instead"
    )
    assert (error.path, error.code) == (("targetThresholds",), "metrics")
    assert construct_args("LowNodeUtilization", args, 32) == []


def test_default_evictor_constructor() -> None:
    bad = {"matchExpressions": [{"key": "a", "operator": "In"}]}
    (error,) = construct_args("DefaultEvictor", {"labelSelector": bad}, 36)
    assert error.message == "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
    assert error.path == ("labelSelector", "matchExpressions", 0)
    (error,) = construct_args("DefaultEvictor", {"labelSelector": bad}, 33)
    assert error.message == "could not get selector from label selector"
    (error,) = construct_args("DefaultEvictor", {"namespaceLabelSelector": bad}, 35)
    assert error.message.startswith("unable to convert namespaceLabelSelector to label selector: values: Invalid value")
    assert construct_args("DefaultEvictor", {"namespaceLabelSelector": bad}, 34) == []
    assert construct_args("DefaultEvictor", {"nodeSelector": "a in b"}, 36) == []
    (error,) = construct_args("DefaultEvictor", {"nodeSelector": "a in b", "nodeFit": True}, 36)
    assert (error.message, error.path) == ("unable to parse requirement: found 'b' expected: '('", ("nodeSelector",))
    for plugin in REGISTRY:
        assert construct_args(plugin, None, 36) == []


def test_policy_checks() -> None:
    assert (
        validate_policy({"metricsProviders": [{"source": "Prometheus", "prometheus": {"url": "http://x"}}]}, 34) == []
    )
    (error,) = validate_policy({"metricsProviders": [{"source": "Prometheus", "prometheus": {"url": "http://x"}}]}, 33)
    assert error.code == "version"
    policy = {"metricsProviders": [{"source": "KubernetesMetrics"}, {"source": "Prometheus"}, {"source": "Prometheus"}]}
    assert [(error.message, error.path) for error in validate_policy(policy, 36)] == [
        (
            'metric provider "Prometheus" is already configured, each source can be configured only once',
            ("metricsProviders", 2, "source"),
        ),
        ("prometheus configuration is required when prometheus source is enabled", ("metricsProviders", 1)),
    ]
    assert validate_policy(policy, 32) == []  # metricsProviders arrived in v0.33
    (error,) = validate_policy({"nodeSelector": "a=b=c"}, 36)
    assert (error.message, error.path) == ("found '=', expected: ',' or 'end of string'", ("nodeSelector",))
    assert validate_policy({"nodeSelector": "node-role.kubernetes.io/worker"}, 36) == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://prometheus.monitoring:9090", None),
        ("http://[::1]:9090/api", None),
        ("prometheus:9090", None),
        ("//host/path", None),
        ("https://user:p%41ss@host", None),
        ("http://example.com:-80", 'parse "http://example.com:-80": invalid port ":-80" after host'),
        (":9090", 'parse ":9090": missing protocol scheme'),
        ("http://a b", 'parse "http://a b": invalid character " " in host name'),
        ("http://host/%zz", 'parse "http://host/%zz": invalid URL escape "%zz"'),
        ("http://host/%4", 'parse "http://host/%4": invalid URL escape "%4"'),
        ("http://host\n", 'parse "http://host\\n": net/url: invalid control character in URL'),
        ("http://[::1", "parse \"http://[::1\": missing ']' in host"),
        ("1http:x", 'parse "1http:x": first path segment in URL cannot contain colon'),
        ("http://h#%zz", 'parse "http://h#%zz": invalid URL escape "%zz"'),
        ("http://us er@host", 'parse "http://us er@host": net/url: invalid userinfo'),
    ],
)
def test_go_url_parse(url: str, message: str | None) -> None:
    assert parse_error(url) == message


@pytest.mark.parametrize("plugin", REGISTRY)
@pytest.mark.parametrize("args", [None, {}, [], "x", 3, {"namespaces": "x", "labelSelector": [1], "states": "Running"}])
def test_odd_args_are_zero_values(plugin: str, args: object) -> None:
    errors = validate_args(plugin, args, 36)
    assert all(isinstance(error, ArgError) for error in errors)
    assert validate_args(plugin, args, 36) == validate_args(plugin, None, 36) or isinstance(args, dict)


def test_wrong_types_are_absent() -> None:
    assert validate_args("RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 2, "states": "Running"}, 36) == []
    (error,) = validate_args("HighNodeUtilization", {"thresholds": "x"}, 36)
    assert error.message == "no resource threshold is configured"
    assert validate_args("HighNodeUtilization", {"thresholds": {"cpu": "x"}}, 36) == []
    assert validate_args("RemoveFailedPods", {"labelSelector": "app=web"}, 36) == []
    assert validate_args("Unknown", {"anything": 1}, 36) == []

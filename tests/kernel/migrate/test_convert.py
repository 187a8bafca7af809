"""Unit tests of the conversion core: each documented difference, target output, merging, origins, refusals."""

from __future__ import annotations

from typing import Any

import pytest

from desched.migrate import Conversion, ConversionError, Note, convert, is_v1alpha1, locate

V1ALPHA1 = "descheduler/v1alpha1"
LOW_PARAMS: dict[str, Any] = {
    "nodeResourceUtilizationThresholds": {
        "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
        "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50},
    }
}


def policy(strategies: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"apiVersion": V1ALPHA1, "kind": "DeschedulerPolicy", **top, "strategies": strategies}


def enabled(params: Any = None, **extra: Any) -> dict[str, Any]:
    strategy: dict[str, Any] = {"enabled": True, **extra}
    if params is not None:
        strategy["params"] = params
    return strategy


def args_of(result: Conversion, name: str, plugin: str | None = None) -> dict[str, Any]:
    for profile in result.policy["profiles"]:
        for entry in profile["pluginConfig"]:
            if entry["name"] == (plugin or name) and (plugin is None or profile["name"].endswith(f"-{name}-profile")):
                return entry["args"]  # type: ignore[no-any-return]
    raise AssertionError(f"no {plugin or name} args")


def evictor_of(result: Conversion, name: str) -> dict[str, Any]:
    return args_of(result, name, "DefaultEvictor")


def kinds(notes: list[Note]) -> list[tuple[str, tuple[str | int, ...]]]:
    return [(note.kind, note.path) for note in notes]


def raises(source: Any, **options: Any) -> ConversionError:
    with pytest.raises(ConversionError) as info:
        convert(source, **options)
    return info.value


TAINTS = ("strategies", "RemovePodsViolatingNodeTaints", "params", "includedTaints")


# --- includedTaints ---------------------------------------------------------------------------------------------------


def test_included_taints_carried_in_default_mode() -> None:
    source = policy({"RemovePodsViolatingNodeTaints": enabled({"includedTaints": ["dedicated=gpu"]})})
    result = convert(source)
    assert args_of(result, "RemovePodsViolatingNodeTaints") == {"includedTaints": ["dedicated=gpu"]}
    assert kinds(result.notes) == [("carried", TAINTS)]
    assert "every taint was considered" in result.notes[0].message


def test_included_taints_dropped_upstream_compatible() -> None:
    source = policy({"RemovePodsViolatingNodeTaints": enabled({"includedTaints": ["dedicated=gpu"]})})
    result = convert(source, upstream_compatible=True)
    assert args_of(result, "RemovePodsViolatingNodeTaints") == {}
    assert kinds(result.notes) == [("dropped", TAINTS)]


@pytest.mark.parametrize(
    "params",
    [{"includedTaints": []}, {"includedTaints": ["a"], "excludedTaints": ["b"]}],
    ids=["empty-list-matches-no-taint", "both-lists"],
)
def test_included_taints_not_carried_when_it_would_change_or_break(params: dict[str, Any]) -> None:
    result = convert(policy({"RemovePodsViolatingNodeTaints": enabled(params)}))
    assert "includedTaints" not in args_of(result, "RemovePodsViolatingNodeTaints")
    assert kinds(result.notes) == [("dropped", TAINTS)]


def test_included_taints_before_v030() -> None:
    source = policy({"RemovePodsViolatingNodeTaints": enabled({"includedTaints": ["a"]})})
    error = raises(source, target=29)
    assert "v0.29" in error.message and "v0.30" in error.message
    assert error.path == TAINTS
    lenient = convert(source, target=29, strict=False)
    assert args_of(lenient, "RemovePodsViolatingNodeTaints") == {}
    assert kinds(lenient.notes)[-1] == ("dropped", TAINTS)
    assert convert(source, target=29, upstream_compatible=True).notes[0].kind == "dropped"


# --- maxNoOfPodsToEvictTotal ------------------------------------------------------------------------------------------


def test_total_limit_carried_or_dropped() -> None:
    source = policy({}, maxNoOfPodsToEvictPerNode=2, maxNoOfPodsToEvictTotal=7, nodeSelector="a=b")
    result = convert(source)
    assert list(result.policy) == [
        "apiVersion",
        "kind",
        "nodeSelector",
        "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictTotal",
        "profiles",
    ]
    assert result.policy["maxNoOfPodsToEvictTotal"] == 7
    assert kinds(result.notes) == [("carried", ("maxNoOfPodsToEvictTotal",))]
    upstream = convert(source, upstream_compatible=True)
    assert "maxNoOfPodsToEvictTotal" not in upstream.policy
    assert kinds(upstream.notes) == [("dropped", ("maxNoOfPodsToEvictTotal",))]
    error = raises(source, target=30)
    assert "v0.30" in error.message and error.path == ("maxNoOfPodsToEvictTotal",)
    assert "maxNoOfPodsToEvictTotal" not in convert(source, target=30, strict=False).policy
    assert "maxNoOfPodsToEvictTotal" not in convert(source, target=30, upstream_compatible=True).policy


# --- what is dropped --------------------------------------------------------------------------------------------------


def test_weight_dropped_in_both_modes() -> None:
    source = policy({"RemoveDuplicates": enabled(weight=3)})
    for upstream_compatible in (False, True):
        result = convert(source, upstream_compatible=upstream_compatible)
        assert kinds(result.notes) == [("dropped", ("strategies", "RemoveDuplicates", "weight"))]
        assert "(3)" in result.notes[0].message and "weight" not in str(result.policy)


SELECTOR = {"matchLabels": {"app": "web"}}


@pytest.mark.parametrize("name", ["RemoveDuplicates", "LowNodeUtilization", "HighNodeUtilization"])
def test_label_selector_dropped_where_the_plugin_has_none(name: str) -> None:
    params = {**LOW_PARAMS, "labelSelector": SELECTOR}
    result = convert(policy({name: enabled(params)}))
    assert "labelSelector" not in args_of(result, name)
    assert ("dropped", ("strategies", name, "params", "labelSelector")) in kinds(result.notes)


def test_label_selector_kept_where_the_plugin_has_one() -> None:
    result = convert(policy({"RemovePodsViolatingInterPodAntiAffinity": enabled({"labelSelector": SELECTOR})}))
    assert args_of(result, "RemovePodsViolatingInterPodAntiAffinity") == {"labelSelector": SELECTOR}
    assert result.notes == []


def test_high_utilization_targets_and_deviation_dropped() -> None:
    params: dict[str, Any] = {"nodeResourceUtilizationThresholds": {**LOW_PARAMS["nodeResourceUtilizationThresholds"]}}
    params["nodeResourceUtilizationThresholds"]["useDeviationThresholds"] = True
    result = convert(policy({"HighNodeUtilization": enabled(params)}))
    assert args_of(result, "HighNodeUtilization") == {"thresholds": {"cpu": 20, "memory": 20, "pods": 20}}
    block = ("strategies", "HighNodeUtilization", "params", "nodeResourceUtilizationThresholds")
    assert kinds(result.notes) == [
        ("dropped", (*block, "targetThresholds")),
        ("dropped", (*block, "useDeviationThresholds")),
    ]


def test_params_a_strategy_does_not_read_are_reported() -> None:
    params = {"podLifeTime": {"maxPodLifeTimeSeconds": 60}, "includeSoftConstraints": False, "excludedTaints": []}
    result = convert(policy({"RemoveDuplicates": enabled(params)}))
    assert kinds(result.notes) == [("dropped", ("strategies", "RemoveDuplicates", "params", "podLifeTime"))]


def test_disabled_strategies_dropped_with_note() -> None:
    source = policy({"LowNodeUtilization": {"enabled": False, "params": LOW_PARAMS}, "RemoveDuplicates": {}})
    result = convert(source)
    assert result.policy["profiles"] == []
    assert kinds(result.notes) == [
        ("dropped", ("strategies", "LowNodeUtilization", "enabled")),
        ("dropped", ("strategies", "RemoveDuplicates")),
    ]


def test_unknown_keys_dropped_with_note() -> None:
    result = convert(policy({"RemoveDuplicates": enabled({"namespace": {"exclude": ["a"]}})}, evictPods=True))
    assert kinds(result.notes) == [
        ("dropped", ("evictPods",)),
        ("dropped", ("strategies", "RemoveDuplicates", "params", "namespace")),
    ]
    assert args_of(result, "RemoveDuplicates") == {}


# --- priority threshold and nodeFit -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "upstream", "default"),
    [
        (None, None, None),
        ({}, {}, None),
        ({"thresholdPriority": 10000}, {"value": 10000}, {"value": 10000}),
        ({"thresholdPriorityClassName": "high"}, {"name": "high"}, {"name": "high"}),
        ({"thresholdPriority": None, "thresholdPriorityClassName": ""}, {}, None),
    ],
    ids=["no-params", "empty-params", "value", "class-name", "null-and-empty"],
)
def test_priority_threshold(params: Any, upstream: Any, default: Any) -> None:
    source = policy({"RemovePodsViolatingInterPodAntiAffinity": enabled(params)})
    assert (
        evictor_of(convert(source, upstream_compatible=True), "RemovePodsViolatingInterPodAntiAffinity").get(
            "priorityThreshold"
        )
        == upstream
    )
    assert evictor_of(convert(source), "RemovePodsViolatingInterPodAntiAffinity").get("priorityThreshold") == default


def test_node_fit_goes_to_the_evictor_except_for_pod_lifetime() -> None:
    source = policy(
        {
            "RemoveDuplicates": enabled({"nodeFit": True}),
            "PodLifeTime": enabled({"nodeFit": True, "podLifeTime": {"maxPodLifeTimeSeconds": 600}}),
        }
    )
    for upstream_compatible in (False, True):
        result = convert(source, upstream_compatible=upstream_compatible)
        assert evictor_of(result, "RemoveDuplicates")["nodeFit"] is True
        assert "nodeFit" not in evictor_of(result, "PodLifeTime")
        assert ("dropped", ("strategies", "PodLifeTime", "params", "nodeFit")) in kinds(result.notes)


# --- target-dependent output ------------------------------------------------------------------------------------------

FLAGS = {
    "evictLocalStoragePods": True,
    "evictDaemonSetPods": True,
    "evictSystemCriticalPods": True,
    "ignorePvcPods": True,
    "evictFailedBarePods": True,
}


@pytest.mark.parametrize("target", [34, 35, 36])
def test_pod_protections_from_v034(target: int) -> None:
    result = convert(policy({"RemoveDuplicates": enabled()}, **FLAGS), target=target)
    assert evictor_of(result, "RemoveDuplicates") == {
        "podProtections": {
            "defaultDisabled": ["PodsWithLocalStorage", "DaemonSetPods", "SystemCriticalPods", "FailedBarePods"],
            "extraEnabled": ["PodsWithPVC"],
        }
    }
    assert kinds(result.notes) == [("changed", ("evictLocalStoragePods",))]
    origins = result.origins
    assert origins[("profiles", 0, "pluginConfig", 0, "args", "podProtections", "extraEnabled", 0)] == (
        "ignorePvcPods",
    )


def test_pod_protections_only_for_flags_that_are_true() -> None:
    result = convert(policy({"RemoveDuplicates": enabled()}, evictLocalStoragePods=False, ignorePvcPods=True))
    assert evictor_of(result, "RemoveDuplicates") == {"podProtections": {"extraEnabled": ["PodsWithPVC"]}}
    assert convert(policy({"RemoveDuplicates": enabled()}, evictLocalStoragePods=False)).notes == []


@pytest.mark.parametrize(("target", "upstream_compatible"), [(30, False), (33, False), (36, True)])
def test_booleans_below_v034_and_upstream_compatible(target: int, upstream_compatible: bool) -> None:
    result = convert(
        policy({"RemoveDuplicates": enabled()}, **FLAGS), target=target, upstream_compatible=upstream_compatible
    )
    assert {key: value for key, value in evictor_of(result, "RemoveDuplicates").items() if value is True} == FLAGS
    assert "podProtections" not in evictor_of(result, "RemoveDuplicates")


def test_evict_daemonset_pods_before_v030() -> None:
    source = policy({"RemoveDuplicates": enabled()}, evictDaemonSetPods=True, evictLocalStoragePods=True)
    error = raises(source, target=29)
    assert error.path == ("evictDaemonSetPods",) and "v0.29" in error.message
    lenient = convert(source, target=29, strict=False)
    assert evictor_of(lenient, "RemoveDuplicates") == {"evictLocalStoragePods": True}
    assert ("dropped", ("evictDaemonSetPods",)) in kinds(lenient.notes)
    # Nothing to express when no profile is produced.
    assert convert(policy({}, evictDaemonSetPods=True), target=29).policy["profiles"] == []


def test_topology_spread_in_v027_form() -> None:
    source = policy({"RemovePodsViolatingTopologySpreadConstraint": enabled({"includeSoftConstraints": True})})
    result = convert(source, target=27)
    assert args_of(result, "RemovePodsViolatingTopologySpreadConstraint") == {"includeSoftConstraints": True}
    assert [note.kind for note in result.notes] == ["changed"]
    hard = convert(policy({"RemovePodsViolatingTopologySpreadConstraint": enabled()}), target=27)
    assert args_of(hard, "RemovePodsViolatingTopologySpreadConstraint") == {}
    assert args_of(convert(source, target=28), "RemovePodsViolatingTopologySpreadConstraint") == {
        "constraints": ["DoNotSchedule", "ScheduleAnyway"],
        "topologyBalanceNodeFit": True,
    }


def test_pod_lifetime_state_the_target_does_not_know() -> None:
    params = {"podLifeTime": {"maxPodLifeTimeSeconds": 600, "states": ["Running", "CrashLoopBackOff"]}}
    source = policy({"PodLifeTime": enabled(params)})
    error = raises(source, target=29)
    assert error.path == ("strategies", "PodLifeTime", "params", "podLifeTime", "states", 1)
    assert "v0.29" in error.message and "states must be one of" in error.message
    assert args_of(convert(source, target=30), "PodLifeTime")["states"] == ["Running", "CrashLoopBackOff"]


def test_target_before_v1alpha2() -> None:
    assert "v0.27" in raises(policy({}), target=26).message
    assert convert(policy({"RemoveDuplicates": enabled()}), target=26, strict=False).policy["profiles"]


def test_upstream_refusals_come_before_target_errors() -> None:
    source = policy(
        {"RemovePodsViolatingNodeTaints": enabled({"includedTaints": ["a"]}), "Bogus": enabled()},
        maxNoOfPodsToEvictTotal=1,
    )
    assert raises(source, target=29).message == "unknown strategy name: Bogus"


# --- refusals ---------------------------------------------------------------------------------------------------------


def test_unknown_strategy_refused_even_when_disabled() -> None:
    error = raises(policy({"RemoveDuplicates": enabled(), "Typo": {"enabled": False}}))
    assert (error.message, error.path) == ("unknown strategy name: Typo", ("strategies", "Typo"))
    lenient = convert(policy({"RemoveDuplicates": enabled(), "Typo": enabled()}), strict=False)
    assert [p["name"] for p in lenient.policy["profiles"]] == ["strategy-RemoveDuplicates-profile"]
    assert ("dropped", ("strategies", "Typo")) in kinds(lenient.notes)


def test_default_evictor_key() -> None:
    disabled = convert(policy({"DefaultEvictor": {"enabled": False}, "RemoveDuplicates": enabled()}))
    assert len(disabled.policy["profiles"]) == 1
    assert raises(policy({"DefaultEvictor": enabled()})).message == "unknown strategy name: DefaultEvictor"
    both = {"thresholdPriority": 1, "thresholdPriorityClassName": "x"}
    assert raises(policy({"DefaultEvictor": enabled(both)})).message == (
        "priority threshold misconfigured for plugin DefaultEvictor"
    )
    assert convert(policy({"DefaultEvictor": enabled()}), strict=False).policy["profiles"] == []


def test_both_priority_fields_kept_when_lenient() -> None:
    params = {**LOW_PARAMS, "thresholdPriority": 100, "thresholdPriorityClassName": "name"}
    result = convert(policy({"LowNodeUtilization": enabled(params)}), strict=False)
    assert evictor_of(result, "LowNodeUtilization")["priorityThreshold"] == {"value": 100, "name": "name"}


def test_failing_params_kept_when_lenient() -> None:
    params = {"nodeResourceUtilizationThresholds": {"thresholds": {"cpu": 150}, "targetThresholds": {"cpu": 50}}}
    source = policy({"LowNodeUtilization": enabled(params)})
    error = raises(source)
    assert error.message == (
        'failed to get plugin config for strategy LowNodeUtilization: strategy "LowNodeUtilization" param validation '
        "failed: thresholds config is not valid: cpu threshold not in [0, 100] range"
    )
    assert args_of(convert(source, strict=False), "LowNodeUtilization")["thresholds"] == {"cpu": 150}


def test_priority_above_system_critical() -> None:
    source = policy({"RemoveDuplicates": enabled({"thresholdPriority": 2_000_000_001})})
    error = raises(source)
    assert error.message == "priority threshold can't be greater than 2000000000"
    assert error.path == ("strategies", "RemoveDuplicates", "params", "thresholdPriority")
    lenient = convert(source, strict=False)
    assert evictor_of(lenient, "RemoveDuplicates")["priorityThreshold"] == {"value": 2_000_000_001}


@pytest.mark.parametrize(
    ("source", "path"),
    [
        (policy({"RemoveDuplicates": {"enabled": "yes"}}), ("strategies", "RemoveDuplicates", "enabled")),
        (
            policy({"PodLifeTime": enabled({"podLifeTime": {"maxPodLifeTimeSeconds": -1}})}),
            ("strategies", "PodLifeTime", "params", "podLifeTime", "maxPodLifeTimeSeconds"),
        ),
        (policy([]), ("strategies",)),  # type: ignore[arg-type]
        (policy({}, maxNoOfPodsToEvictPerNode=1.5), ("maxNoOfPodsToEvictPerNode",)),
    ],
    ids=["bool", "uint", "map", "integer"],
)
def test_wrong_types(source: dict[str, Any], path: tuple[str, ...]) -> None:
    error = raises(source)
    assert error.path == path and error.message.startswith("failed to decode ")
    lenient = convert(source, strict=False)
    assert ("dropped", path) in kinds(lenient.notes)


# --- v1alpha2 input and idempotence -----------------------------------------------------------------------------------


def test_v1alpha2_is_not_converted() -> None:
    v1alpha2 = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": []}
    assert not is_v1alpha1(v1alpha2)
    assert raises(v1alpha2).path == ("apiVersion",)
    assert convert(v1alpha2, strict=False) == Conversion(v1alpha2, [], {})
    assert not is_v1alpha1({"strategies": {}}) and is_v1alpha1(policy({}))
    assert "apiVersion" in raises({"strategies": {}}).message


def test_output_is_v1alpha2_and_converting_it_again_changes_nothing() -> None:
    result = convert(policy({"RemoveDuplicates": enabled(), "LowNodeUtilization": enabled(LOW_PARAMS)}))
    assert not is_v1alpha1(result.policy)
    assert convert(result.policy, strict=False).policy == result.policy


# --- merge_profiles ---------------------------------------------------------------------------------------------------


def execution(result: Conversion) -> list[tuple[str, Any, Any]]:
    """What runs each cycle, in order (docs/policy-api.md#34-runtime-order): every profile's deschedule plugins, then
    every profile's balance
    plugins, each with its args and its profile's DefaultEvictor args (``priorityThreshold: {}`` read as unset)."""
    steps = []
    for point in ("deschedule", "balance"):
        for profile in result.policy["profiles"]:
            configs = {entry["name"]: entry["args"] for entry in profile["pluginConfig"]}
            evictor = {k: v for k, v in configs["DefaultEvictor"].items() if v != {}}
            for name in profile["plugins"].get(point, {}).get("enabled", []):
                steps.append((name, configs[name], evictor))
    return steps


MERGEABLE = policy(
    {
        "RemoveDuplicates": enabled(),
        "LowNodeUtilization": enabled(LOW_PARAMS),
        "RemovePodsViolatingNodeTaints": enabled({"excludedTaints": ["a"]}),
        "PodLifeTime": enabled({"podLifeTime": {"maxPodLifeTimeSeconds": 3600}}),
        "RemovePodsViolatingTopologySpreadConstraint": enabled(),
    },
    evictLocalStoragePods=True,
)


@pytest.mark.parametrize("upstream_compatible", [False, True])
def test_merge_when_evictor_args_identical(upstream_compatible: bool) -> None:
    separate = convert(MERGEABLE, upstream_compatible=upstream_compatible)
    merged = convert(MERGEABLE, upstream_compatible=upstream_compatible, merge_profiles=True)
    (profile,) = merged.policy["profiles"]
    assert profile["name"] == "default"
    assert [entry["name"] for entry in profile["pluginConfig"]] == [
        "DefaultEvictor",
        "LowNodeUtilization",
        "PodLifeTime",
        "RemoveDuplicates",
        "RemovePodsViolatingNodeTaints",
        "RemovePodsViolatingTopologySpreadConstraint",
    ]
    assert profile["plugins"] == {
        "deschedule": {"enabled": ["PodLifeTime", "RemovePodsViolatingNodeTaints"]},
        "balance": {
            "enabled": ["LowNodeUtilization", "RemoveDuplicates", "RemovePodsViolatingTopologySpreadConstraint"]
        },
        "filter": {"enabled": ["DefaultEvictor"]},
        "preevictionfilter": {"enabled": ["DefaultEvictor"]},
    }
    # The equivalence argument: the same plugins, with the same args and evictor args, run in the same order.
    assert execution(merged) == execution(separate)
    assert merged.notes[-1].kind == "changed"
    assert merged.origins[("profiles", 0, "pluginConfig", 4, "args", "excludedTaints", 0)] == (
        "strategies",
        "RemovePodsViolatingNodeTaints",
        "params",
        "excludedTaints",
        0,
    )
    assert merged.origins[("profiles", 0, "plugins", "balance", "enabled", 2)] == (
        "strategies",
        "RemovePodsViolatingTopologySpreadConstraint",
        "enabled",
    )


def test_no_merge_when_evictor_args_differ() -> None:
    source = policy({"RemoveDuplicates": enabled({"nodeFit": True}), "RemoveFailedPods": enabled()})
    result = convert(source, merge_profiles=True)
    assert result.policy == convert(source).policy
    assert result.notes[-1].kind == "info"
    assert "nodeFit" in result.notes[-1].message


def test_merge_of_nothing() -> None:
    assert convert(policy({}), merge_profiles=True).policy["profiles"] == []


# --- origins ----------------------------------------------------------------------------------------------------------


def test_origins_spot_checks() -> None:
    source = policy(
        {
            "LowNodeUtilization": enabled({**LOW_PARAMS, "thresholdPriority": 5}),
            "PodLifeTime": enabled(
                {"podLifeTime": {"maxPodLifeTimeSeconds": 60, "podStatusPhases": ["Pending"], "states": ["Running"]}}
            ),
        },
        nodeSelector="a=b",
    )
    result = convert(source)
    origins = result.origins
    low = ("strategies", "LowNodeUtilization")
    assert origins[("profiles", 0, "pluginConfig", 1, "args", "thresholds", "cpu")] == (
        *low,
        "params",
        "nodeResourceUtilizationThresholds",
        "thresholds",
        "cpu",
    )
    assert origins[("profiles", 0, "pluginConfig", 0, "args", "priorityThreshold", "value")] == (
        *low,
        "params",
        "thresholdPriority",
    )
    assert origins[("profiles", 0)] == low
    assert origins[("nodeSelector",)] == ("nodeSelector",)
    plt = ("strategies", "PodLifeTime", "params", "podLifeTime")
    assert origins[("profiles", 1, "pluginConfig", 1, "args", "states", 0)] == (*plt, "podStatusPhases", 0)
    assert origins[("profiles", 1, "pluginConfig", 1, "args", "states", 1)] == (*plt, "states", 0)
    # Synthesized nodes have no origin of their own: locate() walks up to the nearest one.
    assert ("profiles", 1, "plugins", "filter", "enabled", 0) not in origins
    assert locate(origins, ("profiles", 1, "plugins", "filter", "enabled", 0)) == ("strategies", "PodLifeTime")
    # Every output node with an origin exists in the output.
    for path in origins:
        node: Any = result.policy
        for part in path:
            node = node[part]


def test_error_paths_point_into_the_source() -> None:
    params = {"namespaces": {"include": ["a"], "exclude": ["b"]}}
    error = raises(policy({"RemovePodsViolatingInterPodAntiAffinity": enabled(params)}))
    assert error.path == ("strategies", "RemovePodsViolatingInterPodAntiAffinity", "params", "namespaces")


def test_docstring_examples() -> None:
    import doctest
    import sys

    # ``desched.migrate.convert`` is shadowed by the re-exported function; the module is in sys.modules.
    for name in ("desched.migrate.convert", "desched.migrate._decode", "desched.migrate._strategies"):
        failed, _ = doctest.testmod(sys.modules[name])
        assert failed == 0


def test_v1alpha1_document_holding_profiles_is_refused_not_emptied():
    import pytest

    from desched.migrate import ConversionError, convert

    source = {"apiVersion": "descheduler/v1alpha1", "kind": "DeschedulerPolicy", "profiles": [{"name": "p"}]}
    with pytest.raises(ConversionError) as info:
        convert(source)
    assert info.value.path == ("profiles",)
    assert "would lose it" in info.value.message
    assert convert(source, strict=False).policy["apiVersion"] == "descheduler/v1alpha2"

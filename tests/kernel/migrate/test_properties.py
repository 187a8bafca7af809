"""Property tests: valid v1alpha1 policies convert, lint clean and idempotently; junk never crashes the lenient mode."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desched.linter.engine import Settings, lint_text
from desched.migrate import ConversionError, convert, is_v1alpha1
from desched.validation.vocab import podlifetime_states

V1ALPHA1 = "descheduler/v1alpha1"
#: Errors the input itself already carries once converted: both utilization strategies enabled (DS205).
INHERENT = {"DS205"}

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8).filter(
    lambda name: name[0].isalpha()
)
NAME_LISTS = st.lists(NAMES, min_size=1, max_size=3, unique=True)


def _maybe(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A mapping where every field is optional."""
    return st.fixed_dictionaries({}, optional=fields)


LABEL_SELECTOR = st.one_of(
    st.fixed_dictionaries({"matchLabels": st.dictionaries(NAMES, NAMES, min_size=1, max_size=2)}),
    st.fixed_dictionaries(
        {
            "matchExpressions": st.lists(
                st.one_of(
                    st.fixed_dictionaries(
                        {"key": NAMES, "operator": st.sampled_from(["In", "NotIn"]), "values": NAME_LISTS}
                    ),
                    st.fixed_dictionaries({"key": NAMES, "operator": st.sampled_from(["Exists", "DoesNotExist"])}),
                ),
                min_size=1,
                max_size=2,
            )
        }
    ),
)
NAMESPACES = st.one_of(st.fixed_dictionaries({"include": NAME_LISTS}), st.fixed_dictionaries({"exclude": NAME_LISTS}))
EXCLUDE_ONLY = st.fixed_dictionaries({"exclude": NAME_LISTS})
PRIORITY: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.just({}),
    st.fixed_dictionaries({"thresholdPriority": st.integers(-1000, 2_000_000_000)}),
    st.fixed_dictionaries({"thresholdPriorityClassName": NAMES}),
)
PERCENT = st.one_of(st.integers(0, 100), st.floats(0, 100, allow_nan=False).map(lambda x: round(x, 1)))
RESOURCES = st.lists(st.sampled_from(["cpu", "memory", "pods", "nvidia.com/gpu"]), min_size=1, max_size=4, unique=True)


def _at_least(low: float) -> Any:
    return lambda value: value >= low


@st.composite
def low_thresholds(draw: st.DrawFn) -> dict[str, Any]:
    resources = draw(RESOURCES)
    thresholds = {resource: draw(PERCENT) for resource in resources}
    targets = {resource: draw(PERCENT.filter(_at_least(low))) for resource, low in thresholds.items()}
    block: dict[str, Any] = {"thresholds": thresholds, "targetThresholds": targets}
    block.update(draw(_maybe(useDeviationThresholds=st.booleans(), numberOfNodes=st.integers(0, 5))))
    return block


def _params(specific: st.SearchStrategy[dict[str, Any]], label_selector: bool, namespaces: Any = NAMESPACES) -> Any:
    common = _maybe(
        namespaces=namespaces, nodeFit=st.booleans(), **({"labelSelector": LABEL_SELECTOR} if label_selector else {})
    )
    return st.builds(lambda a, b, c: {**a, **b, **c}, common, PRIORITY, specific)


STATES_V030 = sorted(podlifetime_states(30))
STRATEGY_PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "RemoveDuplicates": _params(
        _maybe(removeDuplicates=st.fixed_dictionaries({"excludeOwnerKinds": NAME_LISTS})), False
    ),
    "LowNodeUtilization": _params(
        st.fixed_dictionaries({"nodeResourceUtilizationThresholds": low_thresholds()}), False, EXCLUDE_ONLY
    ),
    "HighNodeUtilization": _params(
        st.fixed_dictionaries(
            {
                "nodeResourceUtilizationThresholds": st.builds(
                    lambda resources, extra, draw_values: {
                        "thresholds": dict(zip(resources, draw_values, strict=False)),
                        **extra,
                    },
                    RESOURCES,
                    _maybe(numberOfNodes=st.integers(0, 5)),
                    st.lists(PERCENT, min_size=4, max_size=4),
                )
            }
        ),
        False,
        EXCLUDE_ONLY,
    ),
    "RemovePodsViolatingTopologySpreadConstraint": _params(_maybe(includeSoftConstraints=st.booleans()), True),
    "RemovePodsViolatingInterPodAntiAffinity": _params(st.just({}), True),
    "RemovePodsViolatingNodeAffinity": _params(
        st.fixed_dictionaries(
            {
                "nodeAffinityType": st.lists(
                    st.sampled_from(
                        [
                            "requiredDuringSchedulingIgnoredDuringExecution",
                            "preferredDuringSchedulingIgnoredDuringExecution",
                        ]
                    ),
                    min_size=1,
                    max_size=2,
                    unique=True,
                )
            }
        ),
        True,
    ),
    "RemovePodsViolatingNodeTaints": _params(
        st.one_of(
            _maybe(includePreferNoSchedule=st.booleans(), excludedTaints=NAME_LISTS),
            _maybe(includePreferNoSchedule=st.booleans(), includedTaints=st.lists(NAMES, max_size=2)),
            st.fixed_dictionaries({"excludedTaints": NAME_LISTS, "includedTaints": NAME_LISTS}),
        ),
        True,
    ),
    "RemovePodsHavingTooManyRestarts": _params(
        st.fixed_dictionaries(
            {
                "podsHavingTooManyRestarts": st.fixed_dictionaries(
                    {"podRestartThreshold": st.integers(1, 1000)}, optional={"includingInitContainers": st.booleans()}
                )
            }
        ),
        True,
    ),
    "PodLifeTime": _params(
        st.fixed_dictionaries(
            {
                "podLifeTime": st.fixed_dictionaries(
                    {"maxPodLifeTimeSeconds": st.integers(0, 10**6)},
                    optional={
                        "states": st.lists(st.sampled_from(STATES_V030), max_size=3, unique=True),
                        "podStatusPhases": st.lists(st.sampled_from(["Pending", "Running"]), max_size=2, unique=True),
                    },
                )
            }
        ),
        True,
    ),
    "RemoveFailedPods": _params(
        _maybe(
            failedPods=_maybe(
                minPodLifetimeSeconds=st.integers(0, 10**5),
                excludeOwnerKinds=NAME_LISTS,
                reasons=NAME_LISTS,
                includingInitContainers=st.booleans(),
            )
        ),
        True,
    ),
}


@st.composite
def strategy_entry(draw: st.DrawFn, name: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"enabled": draw(st.booleans())}
    if entry["enabled"] or draw(st.booleans()):
        entry["params"] = draw(STRATEGY_PARAMS[name])
    entry.update(draw(_maybe(weight=st.integers(0, 100))))
    return entry


@st.composite
def valid_v1alpha1(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(sorted(STRATEGY_PARAMS)), max_size=len(STRATEGY_PARAMS), unique=True))
    doc: dict[str, Any] = {"apiVersion": V1ALPHA1, "kind": "DeschedulerPolicy"}
    doc.update(
        draw(
            _maybe(
                nodeSelector=st.builds(lambda k, v: f"{k}={v}", NAMES, NAMES),
                evictLocalStoragePods=st.booleans(),
                evictDaemonSetPods=st.booleans(),
                evictSystemCriticalPods=st.booleans(),
                evictFailedBarePods=st.booleans(),
                ignorePvcPods=st.booleans(),
                maxNoOfPodsToEvictPerNode=st.integers(1, 50),
                maxNoOfPodsToEvictPerNamespace=st.integers(1, 50),
                maxNoOfPodsToEvictTotal=st.integers(1, 50),
            )
        )
    )
    doc["strategies"] = {name: draw(strategy_entry(name)) for name in names}
    return doc


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    source=valid_v1alpha1(),
    upstream_compatible=st.booleans(),
    merge_profiles=st.booleans(),
)
def test_valid_policies_convert_lint_clean_and_idempotently(
    source: dict[str, Any], upstream_compatible: bool, merge_profiles: bool
) -> None:
    options = {"upstream_compatible": upstream_compatible, "merge_profiles": merge_profiles}
    result = convert(source, **options)  # strict: must not raise on a valid policy
    assert convert(source, **options) == result  # deterministic
    assert not is_v1alpha1(result.policy)
    assert convert(result.policy, strict=False).policy == result.policy  # migrating the output changes nothing
    text = yaml.safe_dump(result.policy, sort_keys=False)
    findings = lint_text("migrated.yaml", text, Settings(target=36)).findings
    errors = [(f.rule, f.message) for f in findings if f.severity == "error" and f.rule not in INHERENT]
    assert errors == [], text
    enabled = {name for name, entry in source["strategies"].items() if entry["enabled"]}
    if any(f.rule == "DS205" for f in findings):
        assert {"LowNodeUtilization", "HighNodeUtilization"} <= enabled
    assert _plugins(result.policy) == enabled
    # Every origin names a node that exists in the source.
    for src in result.origins.values():
        node: Any = source
        for part in src:
            node = node[part]


def _plugins(policy: dict[str, Any]) -> set[str]:
    return {
        name
        for profile in policy["profiles"]
        for point in ("deschedule", "balance")
        for name in profile["plugins"].get(point, {}).get("enabled", [])
    }


JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5)
)
JUNK = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=6), st.integers(), st.booleans(), st.none()), children, max_size=4),
    ),
    max_leaves=20,
)
FIELDS = st.sampled_from(
    [
        "params",
        "enabled",
        "weight",
        "namespaces",
        "labelSelector",
        "nodeResourceUtilizationThresholds",
        "thresholds",
        "thresholdPriority",
        "thresholdPriorityClassName",
        "podLifeTime",
        "failedPods",
        "includedTaints",
        "excludedTaints",
        "nodeFit",
    ]
)
SHAPED_JUNK = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.one_of(FIELDS, st.text(max_size=4)), children, max_size=4)
    ),
    max_leaves=25,
)


@st.composite
def junk_policy(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        return draw(JUNK)
    doc = draw(st.dictionaries(st.text(max_size=6), JUNK, max_size=3))
    doc["apiVersion"] = draw(st.sampled_from([V1ALPHA1, V1ALPHA1, None, 3, "descheduler/v1alpha2"]))
    names = st.one_of(st.sampled_from([*sorted(STRATEGY_PARAMS), "DefaultEvictor"]), st.text(max_size=4))
    doc["strategies"] = draw(st.one_of(SHAPED_JUNK, st.dictionaries(names, SHAPED_JUNK, max_size=4)))
    doc.update(draw(_maybe(evictDaemonSetPods=JUNK, maxNoOfPodsToEvictTotal=JUNK, nodeSelector=JUNK)))
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    source=junk_policy(),
    upstream_compatible=st.booleans(),
    merge_profiles=st.booleans(),
    target=st.integers(25, 37),
)
def test_lenient_convert_never_raises_and_strict_raises_only_conversion_error(
    source: Any, upstream_compatible: bool, merge_profiles: bool, target: int
) -> None:
    options: dict[str, Any] = {
        "upstream_compatible": upstream_compatible,
        "merge_profiles": merge_profiles,
        "target": target,
    }
    result = convert(source, strict=False, **options)
    if isinstance(source, dict) and source.get("apiVersion") != "descheduler/v1alpha2":
        json.dumps(result.policy, allow_nan=False)  # plain, well-typed JSON data only
    try:
        convert(source, **options)
    except ConversionError as error:
        assert error.message and isinstance(error.path, tuple)

"""Property: validators never raise, whatever JSON-like data they are handed, for every plugin and release."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desched.plugins import REGISTRY, construct_args, validate_args
from desched.validation import (
    ArgError,
    label_selector_error,
    parse_label_selector_string,
    validate_policy,
)
from desched.validation.core import CODES
from desched.validation.gourl import parse_error

# Keys upstream reads, so generated mappings actually reach the validators' branches.
_KEYS = [
    "namespaces", "include", "exclude", "labelSelector", "matchLabels", "matchExpressions", "key", "operator", "values",
    "In", "NotIn", "Exists", "DoesNotExist", "states", "maxPodLifeTimeSeconds", "conditions", "type", "status",
    "reason", "minTimeSinceLastTransitionSeconds", "exitCodes", "ownerKinds", "thresholds", "targetThresholds", "cpu",
    "memory", "MetricResource", "useDeviationThresholds", "evictableNamespaces", "metricsUtilization", "metricsServer",
    "source", "Prometheus", "KubernetesMetrics", "prometheus", "query", "evictionModes", "priorityThreshold", "value",
    "name", "noEvictionPolicy", "podProtections", "extraEnabled", "defaultDisabled", "config", "PodsWithPVC",
    "protectedStorageClasses", "evictLocalStoragePods", "nodeFit", "nodeSelector", "namespaceLabelSelector",
    "minReplicas", "podRestartThreshold", "constraints", "nodeAffinityType", "excludedTaints", "includedTaints",
    "metricsProviders", "metricsCollector", "enabled", "url", "authToken", "secretReference", "profiles",
]  # fmt: skip

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["Running", "In", "Exists", "a=b", "x in (", "PodsWithPVC", "http://h:-1", "", "0"]),
)
_keys = st.one_of(st.sampled_from(_KEYS), st.text(max_size=6), st.integers(), st.booleans(), st.none())
json_like = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=5),
    max_leaves=25,
)
_targets = st.integers(min_value=25, max_value=38)

_url = st.one_of(st.text(max_size=20), st.text(alphabet=st.sampled_from(list("htps:/[]%@#?1aZ .-\n")), max_size=20))
_prometheus = st.fixed_dictionaries(
    {},
    optional={
        "url": _url | json_like,
        "authToken": st.fixed_dictionaries(
            {},
            optional={
                "secretReference": st.fixed_dictionaries({}, optional={"name": json_like, "namespace": json_like})
            },
        )
        | json_like,
    },
)
policy_like = st.fixed_dictionaries(
    {},
    optional={
        "metricsProviders": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "source": st.sampled_from(["Prometheus", "KubernetesMetrics", ""]) | json_like,
                    "prometheus": _prometheus | json_like,
                },
            )
            | json_like,
            max_size=4,
        )
        | json_like,
        "metricsCollector": st.fixed_dictionaries({}, optional={"enabled": json_like}) | json_like,
        "nodeSelector": st.text(max_size=15) | json_like,
    },
)


def _check(errors: list[ArgError]) -> None:
    assert isinstance(errors, list)
    for error in errors:
        assert isinstance(error, ArgError)
        assert isinstance(error.message, str) and error.message
        assert error.code in CODES
        assert all(isinstance(part, (str, int)) for part in error.path)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(plugin=st.sampled_from(list(REGISTRY)), args=json_like, target=_targets)
def test_args_checks_never_raise(plugin: str, args: Any, target: int) -> None:
    _check(validate_args(plugin, args, target))
    _check(construct_args(plugin, args, target))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(policy=st.one_of(json_like, policy_like), target=_targets)
def test_policy_checks_never_raise(policy: Any, target: int) -> None:
    _check(validate_policy(policy, target))


@settings(max_examples=300)
@given(text=st.text(alphabet=st.sampled_from(list("ab-/.=!(),<>  in\t\x00é5")), max_size=20), target=_targets)
def test_selector_parsing_never_raises(text: str, target: int) -> None:
    result = parse_label_selector_string(text, target)
    assert result is None or isinstance(result, str)


@settings(max_examples=200)
@given(selector=json_like, target=_targets)
def test_selector_conversion_never_raises(selector: Any, target: int) -> None:
    result = label_selector_error(selector, target)
    assert result is None or isinstance(result, str)


@settings(max_examples=300)
@given(url=_url)
def test_url_parsing_never_raises(url: str) -> None:
    result = parse_error(url)
    assert result is None or result.startswith("parse ")

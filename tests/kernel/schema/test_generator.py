"""(b) Every generated schema is a valid draft 2020-12 schema, and the generator follows the spec."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest
import yaml

from desched import versions
from desched.plugins import REGISTRY
from desched.policy import schema

from .cases import CORPUS, SCHEMAS, TARGETS, validator

VARIANTS = [
    (target, api, semantic)
    for target in TARGETS
    for api in (("v1alpha2", "v1alpha1") if target < versions.V1ALPHA1_REMOVED else ("v1alpha2",))
    for semantic in (True, False)
]


@pytest.mark.parametrize("name", sorted(schema.outputs()))
def test_published_schema_is_valid(name: str) -> None:
    document = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize(("target", "api", "semantic"), VARIANTS)
def test_every_variant_is_valid(target: int, api: str, semantic: bool) -> None:
    document = schema.policy_schema(target, api, semantic=semantic)
    jsonschema.Draft202012Validator.check_schema(document)
    suffix = api if semantic else f"{api}-structural"
    assert document["$id"] == f"https://desched.dev/schemas/v0.{target}/deschedulerpolicy-{suffix}.json"
    assert document["required"] == ["apiVersion", "kind"]
    assert document["properties"]["apiVersion"]["const"] == f"descheduler/{api}"
    assert document["properties"]["kind"]["const"] == "DeschedulerPolicy"
    assert document["title"] and document["description"]


def test_unsupported_requests_are_refused() -> None:
    with pytest.raises(ValueError, match="v1alpha1 was removed"):
        schema.policy_schema(31, "v1alpha1")
    with pytest.raises(ValueError, match="unsupported"):
        schema.policy_schema(26)
    with pytest.raises(ValueError, match="unknown policy API"):
        schema.policy_schema(36, "v1beta1")


def _walk(node: object):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


@pytest.mark.parametrize(("target", "api", "semantic"), VARIANTS)
def test_objects_are_closed_and_values_nullable(target: int, api: str, semantic: bool) -> None:
    document = schema.policy_schema(target, api, semantic=semantic)
    for node in _walk(document):
        if "properties" in node and "type" in node and node is not document:  # a struct, not an if/then part
            assert node["additionalProperties"] is False
            assert node["type"] == ["object", "null"]
        if isinstance(node.get("type"), list):
            assert node["type"][1] == "null" and len(node["type"]) == 2


def test_release_gating() -> None:
    def props(target: int, name: str) -> set[str]:
        return set(schema.policy_schema(target)["$defs"][name]["properties"])

    top = set(schema.policy_schema(32)["properties"])
    assert "gracePeriodSeconds" not in top and "metricsCollector" in top
    assert "gracePeriodSeconds" in schema.policy_schema(33)["properties"]
    assert "includeSoftConstraints" in props(27, "RemovePodsViolatingTopologySpreadConstraintArgs")
    assert "includeSoftConstraints" not in props(28, "RemovePodsViolatingTopologySpreadConstraintArgs")
    assert {"conditions", "exitCodes", "ownerKinds"} <= props(36, "PodLifeTimeArgs")
    assert not {"conditions", "exitCodes", "ownerKinds"} & props(35, "PodLifeTimeArgs")
    assert "PodProtections" not in schema.policy_schema(33)["$defs"]  # no $defs for types no field reaches
    assert "config" not in props(34, "PodProtections") and "config" in props(35, "PodProtections")


def test_plugin_args_are_dispatched_by_name() -> None:
    document = schema.policy_schema(36)
    entry = document["$defs"]["PluginConfig"]
    dispatched = {
        rule["if"]["properties"]["name"]["const"]: rule["then"]["properties"]["args"] for rule in entry["allOf"]
    }
    assert dispatched == {
        name: {"$ref": f"#/$defs/{args.name}"}
        for name, args in ((name, plugin.args) for name, plugin in REGISTRY.items())
    }
    assert entry["properties"]["name"]["enum"] == list(REGISTRY)
    assert "enum" not in schema.policy_schema(36, semantic=False)["$defs"]["PluginConfig"]["properties"]["name"]


def test_duration_pattern_is_go_like() -> None:
    import re

    pattern = re.compile(schema.GO_DURATION_PATTERN)
    for good in ["0", "-0", "+0", "5m", "1h30m", "1.5h", ".5s", "1.s", "300ms", "2us", "2\u00b5s", "2\u03bcs", "3ns"]:
        assert pattern.search(good), good
    for bad in ["", "5", "m", "5 m", "5min", "1d", ".s", "٥m", "-", "5m5"]:
        assert not pattern.search(bad), bad


def test_podlifetime_states_per_release() -> None:
    assert schema.podlifetime_states(27) == ["ContainerCreating", "Pending", "PodInitializing", "Running"]
    assert "ImagePullBackOff" in schema.podlifetime_states(29)
    assert len(schema.podlifetime_states(30)) == len(schema.podlifetime_states(33)) == 15
    assert {"Succeeded", "Failed"} <= set(schema.podlifetime_states(34))
    assert len(schema.podlifetime_states(36)) == 24  # docs/policy-api.md#411-podlifetime
    states = schema.policy_schema(30)["$defs"]["PodLifeTimeArgs"]["properties"]["states"]["items"]["enum"]
    assert states == schema.podlifetime_states(30)


def _policy(name: str) -> object:
    return yaml.safe_load((CORPUS / f"{name}.yaml").read_text(encoding="utf-8"))


def _with_args(plugin: str, args: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "profiles": [{"name": "p", "pluginConfig": [{"name": plugin, "args": args}]}],
    }


@pytest.mark.parametrize(
    ("target", "plugin", "args"),
    [
        (36, "PodLifeTime", {"states": ["Sleeping"]}),
        (33, "PodLifeTime", {"states": ["OOMKilled"]}),  # a v0.36 state
        (28, "PodLifeTime", {"states": ["ImagePullBackOff"]}),  # a v0.29 state
        (36, "RemovePodsViolatingTopologySpreadConstraint", {"constraints": ["DoNotScheduleX"]}),
        (36, "RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 5, "states": ["Pending"]}),
        (36, "RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 0}),
        (36, "HighNodeUtilization", {"thresholds": {"cpu": 10}, "evictionModes": ["All"]}),
        (36, "HighNodeUtilization", {"thresholds": {"cpu": 101}}),
        (36, "LowNodeUtilization", {"thresholds": {"cpu": -1}, "targetThresholds": {"cpu": 50}}),
        (36, "DefaultEvictor", {"noEvictionPolicy": "Always"}),
        (36, "DefaultEvictor", {"podProtections": {"extraEnabled": ["PodsWithLocalStorage"]}}),
        (36, "DefaultEvictor", {"podProtections": {"defaultDisabled": ["DaemonSetPods", "DaemonSetPods"]}}),
        (36, "DefaultEvictor", {"priorityThreshold": {"value": 2000000001}}),
        (36, "RemovePodsViolatingNodeAffinity", {"nodeAffinityType": ["requiredDuringScheduling"]}),
        (36, "Example", {}),
    ],
)
def test_semantic_keywords_reject_what_validators_reject(target: int, plugin: str, args: dict[str, object]) -> None:
    policy = _with_args(plugin, args)
    assert validator(target, semantic=False).is_valid(policy)
    assert not validator(target, semantic=True).is_valid(policy)


@pytest.mark.parametrize(
    ("target", "plugin", "args"),
    [
        (36, "DefaultEvictor", {"noEvictionPolicy": ""}),
        (36, "DefaultEvictor", {"noEvictionPolicy": None}),
        (36, "DefaultEvictor", {"priorityThreshold": {"value": 2000000000}}),
        (36, "PodLifeTime", {"states": ["OOMKilled", "Succeeded"]}),
        (30, "PodLifeTime", {"states": ["CrashLoopBackOff"]}),
        (36, "LowNodeUtilization", {"thresholds": {"cpu": 0}, "targetThresholds": {"cpu": 100.0}}),
    ],
)
def test_semantic_keywords_accept_valid_values(target: int, plugin: str, args: dict[str, object]) -> None:
    assert validator(target, semantic=True).is_valid(_with_args(plugin, args))


@pytest.mark.parametrize("name", ["valid-chart-default", "valid-kubernetes-base-configmap", "valid-pod-lifetime-v036"])
def test_published_schema_accepts_shipped_policies(name: str) -> None:
    published = json.loads((SCHEMAS / "deschedulerpolicy-v1alpha2.json").read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(published).iter_errors(_policy(name)))
    assert not errors, [error.message for error in errors]


def test_v1alpha1_semantics() -> None:
    policy = _policy("v1alpha1-valid")
    assert validator(30, "v1alpha1", semantic=True).is_valid(policy)
    policy["strategies"]["RemovePodDuplicates"] = {"enabled": True}
    assert validator(30, "v1alpha1", semantic=False).is_valid(policy)
    assert not validator(30, "v1alpha1", semantic=True).is_valid(policy)


def test_envelope_is_required() -> None:
    assert not validator(36).is_valid({"kind": "DeschedulerPolicy"})
    assert not validator(36).is_valid({"apiVersion": "descheduler/v1alpha1", "kind": "DeschedulerPolicy"})
    assert not validator(30, "v1alpha1").is_valid({"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy"})
    assert not validator(36).is_valid({"apiVersion": "descheduler/v1alpha2", "kind": "Policy"})


def test_generator_does_not_import_jsonschema() -> None:
    code = "import sys, desched.policy.schema; sys.exit('jsonschema' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr or "desched.policy.schema imports jsonschema"


def test_every_semantic_rule_names_a_spec_field() -> None:
    from desched.api.spec import POLICY_V1ALPHA1, POLICY_V1ALPHA2
    from desched.api.types import Kind, Type

    fields: set[tuple[str, str]] = set()

    def visit(type_: Type) -> None:
        if type_.kind == Kind.STRUCT:
            for key, field in type_.fields.items():
                if (type_.name, key) not in fields:
                    fields.add((type_.name, key))
                    visit(field.type)
        elif type_.item is not None:
            visit(type_.item)

    for root in (POLICY_V1ALPHA2, POLICY_V1ALPHA1, *(plugin.args for plugin in REGISTRY.values())):
        visit(root)
    unknown = [(struct, key) for struct, key, _, _ in schema._SEMANTIC if (struct, key) not in fields]
    assert not unknown, f"semantic rules for fields the spec does not have: {unknown}"

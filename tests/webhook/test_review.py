"""The admission decision: policies deny on errors, warn mode never denies, opt-out, workloads against the cache."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desched.linter.engine import FileResult, Settings, lint_text
from desched.webhook.review import (
    BadReview,
    Options,
    _block_safe,
    _quoted,
    decide,
    parse_review,
    render_configmap,
    response,
)
from desched.yamlsrc import load_all
from tests.trees import tree_difference

Json = dict[str, Any]
GOOD = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: p
  pluginConfig:
  - name: DefaultEvictor
    args: {podProtections: {extraEnabled: [PodsWithoutPDB]}}
  - name: RemovePodsViolatingNodeTaints
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints]
"""
BROKEN = GOOD.replace(
    "enabled: [RemovePodsViolatingNodeTaints]", "enabled: [RemovePodsViolatingNodeTaints, PodLifeTime]"
)


def configmap(text: str, annotations: Json | None = None, key: str = "policy.yaml") -> Json:
    metadata: Json = {"name": "descheduler", "namespace": "kube-system"}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {key: text}}


def request(
    obj: Json | None, operation: str = "CREATE", kind: str = "ConfigMap", old: Json | None = None, **extra: Any
) -> Json:
    return {
        "uid": "u-1",
        "kind": {"group": "", "version": "v1", "kind": kind},
        "operation": operation,
        "object": obj,
        "oldObject": old,
        **extra,
    }


def test_a_broken_policy_configmap_is_denied_with_rule_and_location() -> None:
    decision = decide(request(configmap(BROKEN)), Options())
    assert not decision.allowed
    assert decision.message.startswith("desched: 1 error: DS203 data[policy.yaml]:11:48: ")
    assert decision.rules == ["DS203"]
    answer = response(decision)
    assert answer["response"]["uid"] == "u-1"
    assert answer["response"]["status"]["code"] == 403


def test_a_valid_policy_is_admitted_and_warnings_are_returned() -> None:
    warned = GOOD.replace(
        "  - name: RemovePodsViolatingNodeTaints\n",
        "  - name: RemovePodsViolatingNodeTaints\n  - name: RemoveDuplicates\n",
    )
    decision = decide(request(configmap(warned)), Options())
    assert decision.allowed
    assert decision.warnings and decision.warnings[0].startswith("DS204 data[policy.yaml]:")
    assert response(decision)["response"]["warnings"] == decision.warnings
    assert decide(request(configmap(GOOD)), Options()).warnings == []


def test_warn_mode_never_denies_and_keeps_the_errors_as_warnings() -> None:
    decision = decide(request(configmap(BROKEN)), Options(mode="warn"))
    assert decision.allowed and decision.warnings[0].startswith("DS203 ")


@pytest.mark.parametrize(("annotation", "allowed"), [("migrating, see TICKET-12", True), ("  ", False)])
def test_opting_out_needs_a_reason(annotation: str, allowed: bool) -> None:
    decision = decide(request(configmap(BROKEN, {"desched.io/skip-validation": annotation})), Options())
    assert decision.allowed is allowed
    if allowed:
        assert decision.warnings == [f"desched validation skipped (desched.io/skip-validation: {annotation})"]


def test_unrelated_configmaps_deletes_and_other_kinds_are_allowed_at_once() -> None:
    plain = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}}
    assert decide(request(plain), Options()) == decide(request(plain), Options())
    assert decide(request(plain), Options()).allowed
    assert decide(request(None, "DELETE", old=configmap(BROKEN)), Options()).allowed
    assert decide(request({"kind": "Secret"}, kind="Secret"), Options()).allowed


def test_dry_run_requests_are_decided_the_same_way() -> None:
    assert decide(request(configmap(BROKEN), dryRun=True), Options()) == decide(request(configmap(BROKEN)), Options())


def test_kubedescheduler_with_conflicting_profiles_is_denied() -> None:
    kd = {
        "apiVersion": "operator.openshift.io/v1",
        "kind": "KubeDescheduler",
        "metadata": {"name": "cluster", "namespace": "openshift-kube-descheduler-operator"},
        "spec": {
            "mode": "Automatic",
            "deschedulingIntervalSeconds": 3600,
            "profiles": ["TopologyAndDuplicates", "SoftTopologyAndDuplicates"],
        },
    }
    decision = decide(request(kd, kind="KubeDescheduler"), Options())
    assert not decision.allowed and "DS501" in decision.message


@pytest.mark.parametrize("value", ["trailing\n\n\n", "no newline", "  leading spaces\nx\n", "tab\there\n", ""])
def test_configmap_rendering_keeps_every_value_exactly(value: str) -> None:
    import yaml

    text = render_configmap(configmap(value)).text
    assert yaml.safe_load(text)["data"]["policy.yaml"] == value


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "the body is not JSON"),
        (b"[]", "the body is not a JSON object"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1beta1", "request": {}}', "expected an"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}', "the AdmissionReview has no request"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"kind": {}}}', "request.uid"),
        (
            b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": "u", "kind": {}, '
            b'"operation": "CREATE", "object": "x"}}',
            "request.object must be an object",
        ),
    ],
)
def test_malformed_reviews_are_refused_with_a_message(body: bytes, message: str) -> None:
    with pytest.raises(BadReview) as error:
        parse_review(body)
    assert str(error.value).startswith(message)


class Cache:
    """An in-memory :class:`~desched.webhook.review.ClusterView` (the real one lists and watches the API server)."""

    def __init__(self, policy: str, objects: list[Json]) -> None:
        rendering = render_configmap(configmap(policy))
        self._policy: FileResult = lint_text("active policy", rendering.text, Settings(), documents=rendering.documents)
        self._objects = objects

    def policy(self) -> FileResult | None:
        return self._policy

    def objects(self) -> list[Json]:
        return list(self._objects)

    def is_active_policy(self, namespace: str, name: str) -> bool:
        return (namespace, name) == ("kube-system", "descheduler")


def deployment(name: str = "web", replicas: int = 3) -> Json:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }


def pdb(name: str = "web") -> Json:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": name}}},
    }


def test_an_evictable_deployment_without_pdb_gets_a_ds401_warning_until_a_pdb_exists() -> None:
    policy = GOOD.replace("    args: {podProtections: {extraEnabled: [PodsWithoutPDB]}}\n", "")
    bare = decide(request(deployment(), kind="Deployment"), Options(), Cache(policy, []))
    assert bare.allowed and [w.split(" ")[0] for w in bare.warnings] == ["DS401"]
    covered = decide(request(deployment(), kind="Deployment"), Options(), Cache(policy, [pdb()]))
    assert covered.allowed and covered.warnings == []
    denied = decide(
        request(deployment(), kind="Deployment"), Options(deny_rules=frozenset({"DS401"})), Cache(policy, [])
    )
    assert not denied.allowed and "DS401" in denied.message


def test_deleting_the_pdb_of_an_evictable_workload_is_reported() -> None:
    policy = GOOD.replace("    args: {podProtections: {extraEnabled: [PodsWithoutPDB]}}\n", "")
    cache = Cache(policy, [deployment(), pdb()])
    decision = decide(request(None, "DELETE", kind="PodDisruptionBudget", old=pdb()), Options(), cache)
    assert decision.allowed
    assert decision.warnings == [
        "DS401 Deployment shop/web: no PodDisruptionBudget covers it any more after this deletion"
    ]
    unrelated = decide(request(None, "DELETE", kind="PodDisruptionBudget", old=pdb("other")), Options(), cache)
    assert unrelated.warnings == []


def test_an_update_of_the_active_policy_is_checked_against_the_cached_workloads() -> None:
    policy = GOOD.replace("    args: {podProtections: {extraEnabled: [PodsWithoutPDB]}}\n", "")
    cache = Cache(GOOD, [deployment()])
    decision = decide(request(configmap(policy), "UPDATE", old=configmap(GOOD)), Options(), cache)
    assert decision.allowed
    assert any(w.startswith("DS401 Deployment shop/web") for w in decision.warnings)


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    name=_TEXT,
    namespace=st.one_of(st.none(), _TEXT),
    data=st.dictionaries(_TEXT, _TEXT, max_size=3),
    api_version=st.one_of(_TEXT, st.none(), st.integers()),
)
def test_a_configmap_composed_with_its_rendering_is_what_parsing_the_rendering_gives(
    name: str, namespace: str | None, data: dict[str, str], api_version: Any
) -> None:
    metadata = {"name": name} if namespace is None else {"namespace": namespace, "name": name}
    obj = {"apiVersion": api_version, "kind": "ConfigMap", "metadata": metadata, "data": data}
    rendering = render_configmap(obj)
    if rendering.documents is None:  # only a string envelope with block-scalar data is composed directly
        assert not isinstance(api_version, str) or not data or not all(map(_block_safe, data.values()))
        return
    assert tree_difference(rendering.documents, load_all(rendering.text)) is None


def test_a_typical_configmap_is_composed_with_its_rendering() -> None:
    assert render_configmap(configmap(GOOD)).documents is not None


@pytest.mark.parametrize(
    "value",
    [
        "descheduler",
        "a\U0001f600b",
        "del\x7f",
        "\\ud83d is text",
        "café",
        'q"uote\\',
        {"k\U0001f600": ["é", "x\n"]},
        5,
        None,
    ],
)
def test_rendered_values_are_ascii_yaml_that_reads_back_the_same(value: Any) -> None:
    import yaml

    quoted = _quoted(value)
    assert quoted.isascii() and "\x7f" not in quoted
    assert yaml.safe_load(quoted) == value

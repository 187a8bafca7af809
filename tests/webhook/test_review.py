"""The admission decision: policies deny on errors, warn mode never denies, opt-out, workloads against the cache."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from desched.linter.engine import FileResult, Settings
from desched.linter.rules._deployment_examples import runner
from desched.webhook.decision import MAX_MESSAGES, Decision, Options, response
from desched.webhook.review import BadReview, configmap_policies, decide, parse_review
from desched.webhook.workloads import WORKLOAD_RULES
from tests.conftest import lint

Json = dict[str, Any]
# Only pods labelled tier=batch are evicted: the workloads below are out of the policy's reach until a test removes it.
ONLY_BATCH = "    args: {labelSelector: {matchLabels: {tier: batch}}}\n"
GOOD = f"""apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: p
  pluginConfig:
  - name: DefaultEvictor
{ONLY_BATCH}  - name: RemovePodsViolatingNodeTaints
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


@pytest.mark.parametrize(
    "value",
    [BROKEN.replace("\n", "\r\n"), BROKEN.replace("  ", "\t", 1), "\ufeff" + BROKEN, BROKEN.rstrip("\n")],
    ids=["crlf", "tab", "bom", "no-final-newline"],
)
def test_any_policy_text_is_linted_as_written_with_locations_inside_it(value: str) -> None:
    """The key's text is parsed on its own: whatever it holds, a location points inside it."""
    decision = decide(request(configmap(value)), Options())
    assert not decision.allowed
    assert "data[policy.yaml]:" in decision.message or "DS001" in decision.message


def test_every_policy_key_is_linted_and_located_by_its_key() -> None:
    obj = configmap(BROKEN)
    obj["data"]["second.yaml"] = BROKEN
    obj["data"]["notes"] = "not a policy"
    decision = decide(request(obj), Options())
    assert decision.message.count("DS203") == 2
    assert "data[policy.yaml]:11:48" in decision.message and "data[second.yaml]:11:48" in decision.message
    result = configmap_policies(obj, Settings())
    assert result is not None and [doc.file for doc in result.policies] == ["data[policy.yaml]", "data[second.yaml]"]
    assert configmap_policies({"data": {"notes": "x: 1"}}, Settings()) is None


def test_a_kubedescheduler_finding_is_located_by_its_json_pointer() -> None:
    kd = {
        "apiVersion": "operator.openshift.io/v1",
        "kind": "KubeDescheduler",
        "metadata": {"name": "cluster", "namespace": "openshift-kube-descheduler-operator"},
        "spec": {"mode": "Automatic", "deschedulingIntervalSeconds": 3600, "profiles": ["AffinityAndTaints", "Nope"]},
    }
    decision = decide(request(kd, kind="KubeDescheduler"), Options())
    assert not decision.allowed and "DS502 /spec/profiles/1: " in decision.message


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
    """An in-memory :class:`~desched.webhook.decision.ClusterView` (the real one lists and watches the API server)."""

    def __init__(self, policy: str, objects: list[Json]) -> None:
        result = configmap_policies(configmap(policy), Settings())
        assert result is not None
        self._policy: FileResult = result
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
    policy = GOOD.replace(ONLY_BATCH, "")
    bare = decide(request(deployment(), kind="Deployment"), Options(), Cache(policy, []))
    assert bare.allowed and [w.split(" ")[0] for w in bare.warnings] == ["DS401"]
    covered = decide(request(deployment(), kind="Deployment"), Options(), Cache(policy, [pdb()]))
    assert covered.allowed and covered.warnings == []
    denied = decide(
        request(deployment(), kind="Deployment"), Options(deny_rules=frozenset({"DS401"})), Cache(policy, [])
    )
    assert not denied.allowed and "DS401" in denied.message


def test_deleting_the_pdb_of_an_evictable_workload_is_reported() -> None:
    policy = GOOD.replace(ONLY_BATCH, "")
    cache = Cache(policy, [deployment(), pdb()])
    decision = decide(request(None, "DELETE", kind="PodDisruptionBudget", old=pdb()), Options(), cache)
    assert decision.allowed
    assert decision.warnings == [
        "DS401 Deployment shop/web: no PodDisruptionBudget covers it any more after this deletion"
    ]
    unrelated = decide(request(None, "DELETE", kind="PodDisruptionBudget", old=pdb("other")), Options(), cache)
    assert unrelated.warnings == []


def test_an_update_of_the_active_policy_is_checked_against_the_cached_workloads() -> None:
    policy = GOOD.replace(ONLY_BATCH, "")
    cache = Cache(GOOD, [deployment()])
    decision = decide(request(configmap(policy), "UPDATE", old=configmap(GOOD)), Options(), cache)
    assert decision.allowed
    assert any(w.startswith("DS401 Deployment shop/web") for w in decision.warnings)


# -- the descheduler's own workload: the deployment rules (DS6xx) that need only the object ------------------------


def descheduler(kind: str = "Deployment", *args: str, annotations: Json | None = None, **shape: Any) -> Json:
    """A ``kind`` whose container runs the descheduler with ``args`` (the rules' own examples), as the API server
    sends it; by default a sound one (interval, mounted policy, critical priority, pinned image)."""
    obj: Json = yaml.safe_load(runner(kind, *(args or ("--descheduling-interval=5m",)), **shape))
    if annotations:
        obj["metadata"]["annotations"] = annotations
    return obj


def rules_of(decision: Decision) -> list[str]:
    return [warning.split(" ")[0] for warning in decision.warnings]


@pytest.mark.parametrize("cluster", [None, Cache(GOOD, [])], ids=["no-cluster-view", "active-policy"])
def test_a_descheduler_deployment_with_replicas_and_no_leader_election_gets_a_ds601_warning(cluster) -> None:
    decision = decide(request(descheduler(replicas=2), kind="Deployment"), Options(), cluster)
    assert decision.allowed and decision.rules == ["DS601"]
    assert decision.warnings == [
        "DS601 Deployment: 2 replicas without --leader-elect: every replica runs its own cycles and they evict at "
        "once; set --leader-elect (and grant its Lease), or run one replica"
    ]
    leading = descheduler("Deployment", "--descheduling-interval=5m", "--leader-elect", replicas=2)
    elected = decide(request(leading, kind="Deployment"), Options(), cluster)
    assert elected.allowed and elected.warnings == []


def test_a_descheduler_deployment_is_denied_only_for_the_rules_deny_names() -> None:
    incoming = request(descheduler(replicas=2), kind="Deployment")
    denied = decide(incoming, Options(deny_rules=frozenset({"DS601"})), Cache(GOOD, []))
    assert not denied.allowed and denied.message.startswith("desched: 1 error: DS601 Deployment: 2 replicas")
    assert response(denied)["response"]["status"]["code"] == 403
    assert decide(incoming, Options(deny_rules=frozenset({"DS401"})), Cache(GOOD, [])).allowed
    assert decide(incoming, Options("warn", frozenset({"DS601"}))).allowed  # warn mode never denies
    assert {"DS601", "DS607", "DS616"} <= set(WORKLOAD_RULES) and "DS609" not in WORKLOAD_RULES  # --deny accepts


def test_an_ordinary_deployment_gets_no_deployment_rule() -> None:
    assert decide(request(deployment(replicas=2), kind="Deployment"), Options()).warnings == []
    assert decide(request(deployment(), kind="Deployment"), Options(), Cache(GOOD, [])).warnings == []


def test_the_warnings_on_a_descheduler_workload_are_capped_as_the_policy_warnings_are() -> None:
    obj = descheduler("Deployment")
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    many = [{**container, "name": f"c{i}", "args": [f"--policy-config-file=/p{i}"]} for i in range(1000)]
    obj["spec"]["template"]["spec"]["containers"] = many  # each: its own unmounted policy file (DS607)
    decision = decide(request(obj, kind="Deployment"), Options(), Cache(GOOD, []))
    assert decision.allowed and decision.rules == ["DS604", "DS607"]
    assert len(decision.warnings) == MAX_MESSAGES + 1
    assert decision.warnings[-1] == f"and {1001 - MAX_MESSAGES} more findings"  # DS604 once, DS607 per container
    assert len(json.dumps(response(decision))) < 4096


@pytest.mark.parametrize("names", ["DS601", "replicas-without-leader-election", "DS606, DS601"])
def test_the_ignore_annotation_suppresses_a_deployment_rule_at_admission(names: str) -> None:
    ignored = descheduler(replicas=2, annotations={"desched.io/ignore": names})
    decision = decide(request(ignored, kind="Deployment"), Options(deny_rules=frozenset({"DS601"})))
    assert decision.allowed and decision.warnings == [] and decision.rules == []
    other = descheduler(replicas=2, annotations={"desched.io/ignore": "DS610"})
    assert rules_of(decide(request(other, kind="Deployment"), Options())) == ["DS601"]


def test_a_descheduler_deployment_alone_gets_nothing_that_needs_its_configmap_rbac_or_namespace() -> None:
    alone = descheduler()  # mounts the policy ConfigMap; neither it, its RBAC nor its Namespace is sent along
    assert {f.rule for f in lint(yaml.safe_dump(alone))} == {"DS609"}  # linted as a file, DS609 says "no RBAC"
    for cluster in (None, Cache(GOOD, [])):
        decision = decide(request(alone, kind="Deployment"), Options(), cluster)
        assert decision.allowed and decision.warnings == [], decision.warnings
    unmounted = descheduler(mounted=False)  # the policy file is on no volume: the object alone says so
    assert rules_of(decide(request(unmounted, kind="Deployment"), Options())) == ["DS607"]


def test_cronjobs_jobs_statefulsets_and_pods_that_run_the_descheduler_are_judged_but_not_those_a_controller_owns():
    cronjob = descheduler("CronJob", "--v=3", concurrency=None)
    assert rules_of(decide(request(cronjob, kind="CronJob"), Options())) == ["DS606"]
    job = descheduler("Job", "--descheduling-interval=1h")
    assert rules_of(decide(request(job, kind="Job"), Options(), Cache(GOOD, []))) == ["DS605"]
    owner = {"apiVersion": "batch/v1", "kind": "CronJob", "name": "descheduler", "uid": "1", "controller": True}
    job["metadata"]["ownerReferences"] = [owner]  # a run of a CronJob: the CronJob was judged when admitted
    assert decide(request(job, kind="Job"), Options(deny_rules=frozenset({"DS605"}))).warnings == []
    statefulset = {**descheduler(replicas=2), "apiVersion": "apps/v1", "kind": "StatefulSet"}
    assert rules_of(decide(request(statefulset, kind="StatefulSet"), Options())) == ["DS601"]
    pod_spec = descheduler("Job", "--dry-run")["spec"]["template"]["spec"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d", "namespace": "x"}, "spec": pod_spec}
    assert rules_of(decide(request(pod, kind="Pod"), Options())) == ["DS611"]


def test_a_replicaset_or_daemonset_of_its_own_that_runs_the_descheduler_is_judged_as_any_workload_kind():
    replicaset = {**descheduler(replicas=2), "kind": "ReplicaSet"}
    assert rules_of(decide(request(replicaset, kind="ReplicaSet"), Options(), Cache(GOOD, []))) == ["DS601"]
    daemonset = {**descheduler("Deployment", "--descheduling-interval=5m", "--dry-run"), "kind": "DaemonSet"}
    assert rules_of(decide(request(daemonset, kind="DaemonSet"), Options())) == ["DS611"]

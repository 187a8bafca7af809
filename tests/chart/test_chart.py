"""deploy/chart/desched rendered by Helm's own engine (helm-python-sdk: the Helm v4 SDK as a library) for each
documented values set (the chart's ci/*-values.yaml): ``helm lint`` clean, every object valid against the Kubernetes
schemas of each supported release kubernetes-validate has (--strict: no unknown field), the same objects as the
kustomize overlays where both install the same thing, and no finding of desched's own lint (DS6xx) on what it
renders. Bad values are refused by the render itself (values.schema.json, and the templates' guards).

Without the SDK's native library (a platform it has no wheel for) the tests skip with the import's reason.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from desched.linter.lint import lint_paths
from desched.runtime.tls import generate
from tests.chart.kustomize import build, build_python, kubectl_kustomize_version
from tests.kcp.controlplane import ControlPlane

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "chart" / "desched"
DOCS = ROOT / "docs" / "desched-chart.md"
RELEASE, NAMESPACE = "desched", "desched-system"
VALUE_SETS = sorted(path.name.removesuffix("-values.yaml") for path in (CHART / "ci").glob("*-values.yaml"))
# The supported range (docs/desched-chart.md): Kubernetes 1.21 and later.
MINIMUM_KUBERNETES = (1, 21)
# Where each overlay of deploy/ installs what a values set does (same release name and namespace).
OVERLAYS = {
    "default": ["webhook/self-signed", "executor/cronjob"],
    "webhook-cert-manager": ["webhook/cert-manager"],
    "webhook-warn": ["webhook/warn"],
    "executor-deployment": ["executor/deployment"],
    "executor-job": ["executor/job"],
    "executor-dry-run": ["executor/dry-run"],
}
# The first Kubernetes minor serving each API the chart renders (all GA, none removed since).
FIRST_SERVED = {
    ("v1", "ServiceAccount"): 0,
    ("v1", "Service"): 0,
    ("v1", "ConfigMap"): 0,
    ("apps/v1", "Deployment"): 9,
    ("batch/v1", "Job"): 0,
    ("batch/v1", "CronJob"): 21,
    ("policy/v1", "PodDisruptionBudget"): 21,
    ("networking.k8s.io/v1", "NetworkPolicy"): 7,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): 8,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): 8,
    ("rbac.authorization.k8s.io/v1", "Role"): 8,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): 8,
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"): 16,
}
# cert-manager's kinds (CRDs, no Kubernetes schema): compared with deploy/webhook/cert-manager instead.
CERT_MANAGER = "cert-manager.io/v1"
# What only the chart writes: Helm's labels, the pods' roll-on-change checksum, the pull policy, and the DS611
# suppression as an annotation (deploy/'s dry run suppresses it with a comment, which a render would not keep).
CHART_ONLY_ANNOTATIONS = {"checksum/config", "desched.io/ignore"}

Obj = dict[str, Any]


@functools.cache
def _helm() -> ModuleType:
    try:
        import helm_python
    # ImportError: not installed; its HelmLibraryError (raised on import, so not nameable here): no native library for
    # this platform, or one that does not load (another architecture or libc)
    except Exception as error:
        pytest.skip(f"helm-python-sdk is not usable here: {error}")
    return helm_python


def _values(value_set: str) -> Obj:
    values: Obj = yaml.safe_load((CHART / "ci" / f"{value_set}-values.yaml").read_text()) or {}
    if value_set == "webhook-secret":
        values["webhook"]["tls"]["caBundle"] = _ca_bundle()
    return values


@functools.cache
def _ca_bundle() -> str:
    """The CA of a real serving certificate, as a user passes it (base64 of the PEM)."""
    return base64.b64encode(generate([f"desched-webhook.{NAMESPACE}.svc"], []).ca).decode()


def _render(values: Obj) -> dict[str, str]:
    """Template path → rendered text (Helm validates the values against values.schema.json first)."""
    helm = _helm()
    with helm.Chart.load(CHART) as chart:
        rendered: dict[str, str] = chart.render(values, name=RELEASE, namespace=NAMESPACE, is_install=True)
    return rendered


@functools.cache
def _objects(value_set: str) -> list[Obj]:
    rendered = _render(_values(value_set))
    return [
        doc
        for path, text in sorted(rendered.items())
        if path.endswith(".yaml")
        for doc in yaml.safe_load_all(text)
        if doc
    ]


def _supported_schema_versions() -> list[str]:
    """Every Kubernetes release kubernetes-validate has schemas for, all within the supported range."""
    from kubernetes_validate import utils

    minors = sorted({tuple(int(part) for part in version.split(".")[:2]) for version in utils.all_versions()})
    assert minors and all(minor >= MINIMUM_KUBERNETES for minor in minors)
    return [f"{major}.{minor}.0" for major, minor in minors]


def _key(obj: Obj) -> tuple[str, str, str | None]:
    return obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace")


def _sort_key(obj: Obj) -> str:
    return str(_key(obj))


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_each_values_set_is_helm_lint_clean(value_set: str) -> None:
    report = _helm().lint(CHART, _values(value_set), strict=True, namespace=NAMESPACE)
    assert report["errors"] == []
    # severity 2 is a warning, 3 an error; 1 (info) is only "icon is recommended"
    assert [message for message in report["messages"] if message["severity"] >= 2] == []


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_every_rendered_object_is_valid_on_every_supported_release(value_set: str) -> None:
    import kubernetes_validate

    objects = _objects(value_set)
    assert objects
    checked = 0
    for obj in objects:
        if obj["apiVersion"] == CERT_MANAGER:
            continue
        for version in _supported_schema_versions():
            kubernetes_validate.validate(obj, version, strict=True)  # raises on an invalid or unknown field
            checked += 1
    assert checked >= len(_supported_schema_versions())


def test_the_apis_rendered_are_served_from_the_stated_minimum_which_the_chart_declares() -> None:
    """Every API the chart renders, in every values set, is served from Kubernetes 1.21 (batch/v1 CronJob and
    policy/v1 PodDisruptionBudget are the newest); Chart.yaml's kubeVersion and the docs say the same."""
    rendered = {(obj["apiVersion"], obj["kind"]) for value_set in VALUE_SETS for obj in _objects(value_set)}
    core = rendered - {(CERT_MANAGER, "Issuer"), (CERT_MANAGER, "Certificate")}
    assert core <= set(FIRST_SERVED), core - set(FIRST_SERVED)
    assert (1, max(FIRST_SERVED[api] for api in core)) == MINIMUM_KUBERNETES
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["kubeVersion"] == ">=1.21.0-0"
    assert "| Kubernetes (the cluster) | 1.21 and later |" in DOCS.read_text()
    assert _helm().lint(CHART, kube_version="v1.21.0", strict=True)["errors"] == []


@pytest.mark.cluster
@pytest.mark.slow
def test_helm_refuses_the_chart_on_kubernetes_1_20(control_plane: ControlPlane, namespace: str, tmp_path: Path) -> None:
    """The suite's real API server is 1.20: a server-side dry-run install of the chart is refused there, and the same
    chart with kubeVersion lowered to 1.20 installs (its Job-only values use APIs 1.20 serves), so the refusal is the
    kubeVersion's."""
    helm = _helm()
    values = {"webhook": {"enabled": False}, "executor": {"kind": "job"}}
    lowered = tmp_path / "desched"
    shutil.copytree(CHART, lowered)
    chart_yaml = lowered / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace('kubeVersion: ">=1.21.0-0"', 'kubeVersion: ">=1.20.0-0"'))
    with helm.Config(kubeconfig_path=control_plane.kubeconfig, namespace=namespace) as config:
        installed = config.install(str(lowered), "desched", values, namespace=namespace, dry_run="server")
        assert "kind: Job" in installed["manifest"]
        with pytest.raises(helm.HelmError):
            config.install(str(CHART), "desched", values, namespace=namespace, dry_run="server")


def _without_chart_only(obj: Obj) -> Obj:
    """``obj`` without labels (compared separately), the chart-only annotations and the image pull policy; empty
    metadata dropped."""

    def strip(node: Any) -> Any:
        if isinstance(node, list):
            return [strip(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: strip(value) for key, value in node.items() if key != "imagePullPolicy"}
        metadata = node.get("metadata")
        if isinstance(metadata, dict):
            metadata.pop("labels", None)
            annotations = {
                key: value
                for key, value in metadata.pop("annotations", {}).items()
                if key not in CHART_ONLY_ANNOTATIONS
            }
            if annotations:
                metadata["annotations"] = annotations
            if not metadata:
                del node["metadata"]
        return node

    stripped: Obj = strip(copy.deepcopy(obj))
    return stripped


def _labelled(obj: Obj) -> Iterator[tuple[str, dict[str, str]]]:
    """(where, labels) of an object's metadata and of each pod or job template in it."""
    yield "metadata", obj["metadata"].get("labels", {})
    spec = obj.get("spec") or {}
    if obj["kind"] == "CronJob":
        yield "jobTemplate", spec["jobTemplate"].get("metadata", {}).get("labels", {})
        spec = spec["jobTemplate"]["spec"]
    if isinstance(spec, dict) and "template" in spec:
        yield "template", spec["template"].get("metadata", {}).get("labels", {})


@pytest.mark.parametrize("value_set", sorted(OVERLAYS))
def test_the_chart_installs_what_the_kustomize_overlays_install(value_set: str) -> None:
    """Same objects (kind, name, namespace), and each the same but for the chart's own labels and annotations: the
    RBAC rules, container args, probes, security contexts, volumes, webhooks and failure policies. The only object
    deploy/ has and the chart has not is the Namespace (``helm install --create-namespace``)."""
    kustomized = [obj for overlay in OVERLAYS[value_set] for obj in build(ROOT / "deploy" / overlay)]
    assert {_key(obj) for obj in kustomized if obj["kind"] == "Namespace"} == {("Namespace", NAMESPACE, None)}
    expected = {_key(obj): obj for obj in kustomized if obj["kind"] != "Namespace"}
    rendered = {_key(obj): obj for obj in _objects(value_set)}
    assert sorted(rendered, key=str) == sorted(expected, key=str)
    for key, obj in rendered.items():
        assert _without_chart_only(obj) == _without_chart_only(expected[key]), key
        chart_labels = dict(_labelled(obj))
        for where, labels in _labelled(expected[key]):
            assert labels.items() <= chart_labels[where].items(), (key, where)


@pytest.mark.parametrize("overlay", sorted({overlay for overlays in OVERLAYS.values() for overlay in overlays}))
def test_the_python_build_of_the_overlays_is_kubectls(overlay: str) -> None:
    """Where kubectl is missing (CI's machine) the comparison above reads deploy/ through the Python build: where it is
    installed with kustomize v4.1 or later, both builds give the same objects."""
    version = kubectl_kustomize_version()
    if version is None or version < (4, 1):
        pytest.skip(f"kubectl with kustomize v4.1 or later is not installed (found {version})")
    directory = ROOT / "deploy" / overlay
    assert sorted(build(directory), key=_sort_key) == sorted(build_python(directory), key=_sort_key)


def test_the_image_digest_wins_over_the_tag() -> None:
    objects = _objects("digest")
    digest = _values("digest")["image"]["digest"]
    images = {container["image"] for obj in objects for container in _pod(obj).get("containers", [])}
    assert images == {f"ghcr.io/desched/desched@{digest}"}
    secrets = {pull["name"] for obj in objects for pull in _pod(obj).get("imagePullSecrets", [])}
    assert secrets == {"registry-credentials"}
    tagged = _render({"image": {"tag": "0.2.0"}})
    assert "image: ghcr.io/desched/desched:0.2.0" in tagged["desched/templates/executor.yaml"]


def _pod(obj: Obj) -> Obj:
    spec = obj.get("spec") or {}
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    template = spec.get("template") if isinstance(spec, dict) else None
    return dict(template["spec"]) if template else {}


def _webhooks(objects: list[Obj]) -> dict[str, Obj]:
    (configuration,) = [obj for obj in objects if obj["kind"] == "ValidatingWebhookConfiguration"]
    return {webhook["name"]: webhook for webhook in configuration["webhooks"]}


def test_the_secret_source_mounts_the_given_secret_and_trusts_the_given_ca() -> None:
    values = _values("webhook-secret")
    objects = _objects("webhook-secret")
    (deployment,) = [obj for obj in objects if obj["kind"] == "Deployment"]
    assert _pod(deployment)["volumes"][0]["secret"]["secretName"] == "my-webhook-tls"
    assert {obj["kind"] for obj in objects}.isdisjoint({"Issuer", "Certificate", "Secret"})
    bundles = {webhook["clientConfig"].get("caBundle") for webhook in _webhooks(objects).values()}
    assert bundles == {values["webhook"]["tls"]["caBundle"]}
    # desched certs and cert-manager write the caBundle themselves: the chart never sets it there
    for value_set in ("default", "webhook-cert-manager"):
        assert all("caBundle" not in hook["clientConfig"] for hook in _webhooks(_objects(value_set)).values())


def test_failure_policies_are_closed_for_policies_open_for_workloads_and_settable() -> None:
    policies = ("policies.desched.io", "kubedeschedulers.desched.io", "wrappers.desched.io")
    hooks = _webhooks(_objects("default"))
    assert {name: hook["failurePolicy"] for name, hook in hooks.items()} == {
        **dict.fromkeys(policies, "Fail"),
        "workloads.desched.io": "Ignore",
    }
    assert {hook["failurePolicy"] for hook in _webhooks(_objects("webhook-warn")).values()} == {"Ignore"}
    chosen = _render({"webhook": {"failurePolicy": {"wrappers": "Ignore", "workloads": "Fail"}}})
    (configuration,) = yaml.safe_load_all(chosen["desched/templates/webhook-configuration.yaml"])
    assert {hook["name"]: hook["failurePolicy"] for hook in configuration["webhooks"]} == {
        "policies.desched.io": "Fail",
        "kubedeschedulers.desched.io": "Fail",
        "workloads.desched.io": "Fail",
        "wrappers.desched.io": "Ignore",
    }


def test_the_policy_configmap_watch_follows_the_values() -> None:
    """--policy-configmap names the ConfigMap, the Role lets the webhook read that one only, in its namespace; with
    no name there is no watch, no Role, and no workloads webhook."""
    moved = [
        doc
        for path, text in _render({"webhook": {"policyConfigMap": {"namespace": "ops", "name": "policy"}}}).items()
        if path.endswith(".yaml")
        for doc in yaml.safe_load_all(text)
        if doc
    ]
    (deployment,) = [
        obj for obj in moved if obj["kind"] == "Deployment" and obj["metadata"]["name"].endswith("webhook")
    ]
    args = _pod(deployment)["containers"][0]["args"]
    assert args[args.index("--policy-configmap") + 1] == "ops/policy"
    (role,) = [obj for obj in moved if obj["kind"] == "Role"]
    assert role["metadata"]["namespace"] == "ops"
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["policy"], "verbs": ["get", "list", "watch"]}
    ]
    unwatched = _render(
        {"webhook": {"policyConfigMap": {"namespace": "kube-system", "name": ""}}, "executor": {"enabled": False}}
    )
    docs = [
        doc for path, text in unwatched.items() if path.endswith(".yaml") for doc in yaml.safe_load_all(text) if doc
    ]
    assert "Role" not in {doc["kind"] for doc in docs}
    (deployment,) = [doc for doc in docs if doc["kind"] == "Deployment"]
    assert "--policy-configmap" not in _pod(deployment)["containers"][0]["args"]
    assert "workloads.desched.io" not in _webhooks(docs)


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_desched_lint_finds_nothing_in_what_the_chart_renders(value_set: str, tmp_path: Path) -> None:
    """desched's own rules, the DS6xx deployment rules over the executor included, on the rendered release: no
    finding, and in the dry run only DS611 (dry-run-enabled), suppressed by the workload's annotation."""
    objects = _objects(value_set)
    (tmp_path / "release.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    found = lint_paths([str(tmp_path)]).findings
    assert [(finding.rule, finding.message) for finding in found if finding.suppressed is None] == []
    dry_run = _values(value_set).get("executor", {}).get("dryRun", False)
    assert [finding.rule for finding in found] == (["DS611"] if dry_run else [])


def test_the_executors_desched_run_is_seen_by_the_deployment_rules(tmp_path: Path) -> None:
    """The lint above is not vacuous: it reads the chart's executor as a descheduler run (a Deployment with two
    replicas and no leader election is DS601), as it reads deploy/'s."""
    (deployment,) = [obj for obj in _objects("executor-deployment") if obj["kind"] == "Deployment"]
    broken = copy.deepcopy(deployment)
    args = _pod(broken)["containers"][0]["args"]
    broken["spec"]["template"]["spec"]["containers"][0]["args"] = args[: args.index("--leader-elect")]
    (tmp_path / "release.yaml").write_text(yaml.safe_dump(broken))
    assert "DS601" in {finding.rule for finding in lint_paths([str(tmp_path)]).findings}


# One bad value each, over values that render: the render (schema or template guard) must refuse it.
SCHEMA_REJECTS = {
    "unknown top-level key": {"replicas": 2},
    "unknown nested key": {"webhook": {"tls": {"source": "desched-certs", "issuer": "x"}}},
    "mode": {"webhook": {"mode": "audit"}},
    "failure policy": {"webhook": {"failurePolicy": {"policies": "fail"}}},
    "certificate source": {"webhook": {"tls": {"source": "vault"}}},
    "secret source without a Secret": {"webhook": {"tls": {"source": "secret"}}},
    "digest": {"image": {"digest": "sha256:1234"}},
    "pull policy": {"image": {"pullPolicy": "Sometimes"}},
    "deny rule": {"webhook": {"deny": ["401"]}},
    "executor kind": {"executor": {"kind": "daemonset"}},
    "replicas": {"executor": {"deployment": {"replicas": 0}}},
    "interval": {"executor": {"deployment": {"interval": "five minutes"}}},
    "zero interval": {"executor": {"deployment": {"interval": "0s"}}},
    "schedule": {"executor": {"cronjob": {"schedule": "every 10 minutes"}}},
    "empty policy": {"executor": {"policy": ""}},
    "metrics port": {"executor": {"deployment": {"metricsPort": 80}}},
    "enabled type": {"executor": {"enabled": "yes"}},
    "full name": {"fullnameOverride": "Desched_Prod"},
}
# Values the schema accepts that the templates refuse, with the reason they give.
TEMPLATE_REJECTS = {
    "dry-run deployment with replicas": (
        {"executor": {"kind": "deployment", "dryRun": True}},
        "executor.dryRun with executor.kind deployment needs executor.deployment.replicas 1",
    ),
    "PDB with one replica": (
        {"webhook": {"replicas": 1}},
        "webhook.podDisruptionBudget.enabled needs webhook.replicas of 2 or more",
    ),
    "caBundle the chart would not use": (
        {"webhook": {"tls": {"caBundle": "QUJD"}}},
        "webhook.tls.caBundle is read only with webhook.tls.source secret",
    ),
}


@pytest.mark.parametrize("case", SCHEMA_REJECTS)
def test_the_schema_refuses_bad_values(case: str) -> None:
    helm = _helm()
    with pytest.raises(helm.HelmValuesError):
        _render(SCHEMA_REJECTS[case])


@pytest.mark.parametrize("case", TEMPLATE_REJECTS)
def test_the_templates_refuse_what_would_break_with_a_reason(case: str) -> None:
    values, reason = TEMPLATE_REJECTS[case]
    helm = _helm()
    with pytest.raises(helm.HelmRenderError) as raised:
        _render(values)
    assert reason in str(raised.value)


def test_what_the_refusals_change_renders_when_right() -> None:
    """The refusals above are about the value they change: the nearest right values render."""
    for values in (
        {"executor": {"kind": "deployment", "dryRun": True, "deployment": {"replicas": 1}}},
        {"webhook": {"replicas": 1, "podDisruptionBudget": {"enabled": False}}},
        {"webhook": {"tls": {"source": "secret", "secretName": "tls", "caBundle": "QUJD"}}},
        {"webhook": {"mode": "warn", "deny": ["DS401"], "failurePolicy": {"policies": "Ignore"}}},
        {"image": {"digest": "sha256:" + "0" * 64, "pullPolicy": "Always"}},
        {"executor": {"kind": "deployment", "deployment": {"interval": "90s", "metricsPort": 10258}}},
        {"executor": {"cronjob": {"schedule": "@hourly"}, "policy": "kind: DeschedulerPolicy\n"}},
        {"fullnameOverride": "desched-prod"},
    ):
        assert _render(values), values


def test_the_values_reference_documents_every_value_and_values_set() -> None:
    """docs/desched-chart.md names every leaf of values.yaml and every documented values set (ci/)."""
    text = DOCS.read_text()
    defaults = yaml.safe_load((CHART / "values.yaml").read_text())

    def leaves(node: Obj, prefix: str = "") -> Iterator[str]:
        for key, value in node.items():
            path = f"{prefix}{key}"
            if isinstance(value, dict) and value and key not in ("resources", "metricsNamespaceSelector"):
                yield from leaves(value, path + ".")
            else:
                yield path

    assert [path for path in leaves(defaults) if f"`{path}`" not in text] == []
    assert [name for name in VALUE_SETS if f"ci/{name}-values.yaml" not in text] == []
    schema = json.loads((CHART / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert re.search(r"kubeVersion: \">=1\.21\.0-0\"", (CHART / "Chart.yaml").read_text())

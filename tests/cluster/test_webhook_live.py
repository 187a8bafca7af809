"""End to end: the real API server calls ``desched webhook`` for policy ConfigMaps, KubeDescheduler resources and
workloads, and kubectl-style clients see the denials and warnings."""

from __future__ import annotations

import base64
import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kcp.api import Api, ApiError, Json
from tests.kcp.controlplane import ControlPlane
from tests.kcp.objects import wait_for
from tests.webhook.server import Running, start

pytestmark = pytest.mark.cluster
LABEL = "desched.test/namespace"
POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: p
  pluginConfig:
  - name: DefaultEvictor
  - name: RemovePodsViolatingNodeTaints
  - name: RemoveDuplicates
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints]
"""
BROKEN = POLICY.replace("enabled: [RemovePodsViolatingNodeTaints]", "enabled: [PodLifeTime]")
CRD: Json = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kubedeschedulers.operator.openshift.io"},
    "spec": {
        "group": "operator.openshift.io",
        "scope": "Namespaced",
        "names": {"plural": "kubedeschedulers", "singular": "kubedescheduler", "kind": "KubeDescheduler"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


def configmap(name: str, namespace: str, text: str, labelled: bool = True) -> Json:
    labels = {"desched.io/policy": "true"} if labelled else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "data": {"policy.yaml": text},
    }


def deployment(namespace: str) -> Json:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "web:1"}]}},
        },
    }


@pytest.fixture
def webhook(control_plane: ControlPlane, kube: Api, namespace: str, tmp_path: Path) -> Iterator[Running]:
    """``desched webhook`` watching ``<namespace>/descheduler`` as the active policy, registered for this namespace."""
    kube.create(CRD) if not _exists(kube, CRD) else None
    wait_for(lambda: _established(kube), what="the KubeDescheduler CRD")
    running = start(
        tmp_path / "webhook", "--policy-configmap", f"{namespace}/descheduler", "--kubeconfig", control_plane.kubeconfig
    )
    bundle = base64.b64encode(running.ca_file.read_bytes()).decode()
    selector = {"matchLabels": {LABEL: namespace}}
    entry = {
        "clientConfig": {"url": running.url, "caBundle": bundle},
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "timeoutSeconds": 5,
        "namespaceSelector": selector,
    }
    kube.create(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": f"desched-{namespace}"},
            "webhooks": [
                {
                    **entry,
                    "name": "policies.desched.io",
                    "failurePolicy": "Fail",
                    "objectSelector": {"matchLabels": {"desched.io/policy": "true"}},
                    "rules": [
                        {
                            "operations": ["CREATE", "UPDATE"],
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "resources": ["configmaps"],
                        }
                    ],
                },
                {
                    **entry,
                    "name": "kubedeschedulers.desched.io",
                    "failurePolicy": "Fail",
                    "rules": [
                        {
                            "operations": ["CREATE", "UPDATE"],
                            "apiGroups": ["operator.openshift.io"],
                            "apiVersions": ["v1"],
                            "resources": ["kubedeschedulers"],
                        }
                    ],
                },
                {
                    **entry,
                    "name": "workloads.desched.io",
                    "failurePolicy": "Ignore",
                    "rules": [
                        {
                            "operations": ["CREATE", "UPDATE"],
                            "apiGroups": ["apps"],
                            "apiVersions": ["v1"],
                            "resources": ["deployments", "statefulsets", "replicasets"],
                        },
                        {
                            "operations": ["CREATE", "UPDATE", "DELETE"],
                            "apiGroups": ["policy"],
                            "apiVersions": ["v1", "v1beta1"],
                            "resources": ["poddisruptionbudgets"],
                        },
                    ],
                },
            ],
        }
    )
    try:
        wait_for(lambda: _denied(kube, namespace), what="the API server to call the webhook")
        yield running
    finally:
        kube.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", f"desched-{namespace}")
        assert running.stop() == 0, running.log.read_text()


def _exists(kube: Api, obj: Json) -> bool:
    try:
        kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", obj["metadata"]["name"])
    except ApiError:
        return False
    return True


def _established(kube: Api) -> bool:
    crd = kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", CRD["metadata"]["name"])
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def _denied(kube: Api, namespace: str) -> bool:
    try:
        kube.create(configmap("probe", namespace, BROKEN))
    except ApiError as error:
        return "DS203" in error.message
    kube.delete("v1", "ConfigMap", "probe", namespace)
    return False


def test_a_broken_policy_configmap_is_denied_and_a_valid_one_admitted_with_warnings(
    kube: Api, namespace: str, webhook: Running
) -> None:
    with pytest.raises(ApiError) as denied:
        kube.create(configmap("broken", namespace, BROKEN))
    assert denied.value.status == 403
    assert (
        'admission webhook "policies.desched.io" denied the request: desched: 1 error: DS203 '
        "data[policy.yaml]:11:17:" in denied.value.message
    )
    kube.create(configmap("valid", namespace, POLICY))
    assert [w.split(" ")[0] for w in kube.warnings] == ["DS204"]
    assert kube.warnings[0].startswith("DS204 data[policy.yaml]:8:")


def test_a_deployment_without_pdb_is_admitted_with_ds401_until_a_pdb_exists(
    kube: Api, namespace: str, webhook: Running
) -> None:
    kube.create(configmap("descheduler", namespace, POLICY))
    wait_for(lambda: "desched_webhook_requests_total" in webhook.metrics(), what="metrics")
    created = wait_for(lambda: _create_with_warnings(kube, deployment(namespace)), what="the active policy in cache")
    assert any(w.startswith("DS401 ") for w in created), created
    kube.create(
        {
            "apiVersion": kube.pdb_version(),
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        }
    )

    def quiet() -> bool:
        current = kube.get("apps/v1", "Deployment", "web", namespace)
        kube.request("PUT", kube.resource("apps/v1", "Deployment").path(namespace, "web"), current)
        return not any(w.startswith("DS401 ") for w in kube.warnings)

    wait_for(quiet, what="the PDB in the webhook's cache")
    kube.delete(kube.pdb_version(), "PodDisruptionBudget", "web", namespace)
    assert kube.warnings == [
        f"DS401 Deployment {namespace}/web: no PodDisruptionBudget covers it any more after this deletion"
    ]


def _create_with_warnings(kube: Api, obj: Json) -> list[str] | None:
    with contextlib.suppress(ApiError):
        kube.delete("apps/v1", "Deployment", "web", obj["metadata"]["namespace"])
    kube.create(obj)
    return kube.warnings or None


def test_a_kubedescheduler_with_conflicting_profiles_is_denied(kube: Api, namespace: str, webhook: Running) -> None:
    kd = {
        "apiVersion": "operator.openshift.io/v1",
        "kind": "KubeDescheduler",
        "metadata": {"name": "cluster", "namespace": namespace},
        "spec": {
            "mode": "Automatic",
            "deschedulingIntervalSeconds": 3600,
            "profiles": ["LifecycleAndUtilization", "LongLifecycle"],
        },
    }
    with pytest.raises(ApiError) as denied:
        kube.create(kd)
    assert 'admission webhook "kubedeschedulers.desched.io" denied the request' in denied.value.message
    assert "DS501" in denied.value.message


def test_an_unrelated_configmap_never_reaches_the_webhook(kube: Api, namespace: str, webhook: Running) -> None:
    def calls(metrics: str) -> int:
        return sum(int(float(value)) for value in re.findall(r"desched_webhook_requests_total\{[^}]*\} (\S+)", metrics))

    before = calls(webhook.metrics())
    kube.create(configmap("unrelated", namespace, BROKEN, labelled=False))
    kube.create(configmap("labelled", namespace, POLICY))
    assert calls(webhook.metrics()) == before + 1

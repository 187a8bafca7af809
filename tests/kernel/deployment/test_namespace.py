"""Namespaces after kustomize (desched.gitops.kustomize) and DS608 namespace-mismatch: the descheduler's workload, its
ServiceAccount, its policy ConfigMap and the RoleBindings of its account, each where kustomize puts it."""

from __future__ import annotations

from pathlib import Path

import pytest

from desched.gitops.kustomize import kustomized_namespaces
from desched.linter.lint import lint_paths
from desched.linter.rules._deployment_examples import runner

ACCOUNT = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: descheduler{namespace}}}\n"
POLICY = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: descheduler-policy{namespace}}}\n"
    "data:\n  policy.yaml: |\n    apiVersion: descheduler/v1alpha2\n    kind: DeschedulerPolicy\n    profiles: []\n"
)
BINDING = (
    "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: secrets{namespace}}}\n"
    "roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: secrets}}\n"
    "subjects: [{{kind: ServiceAccount, name: descheduler, namespace: kube-system}}]\n"
)


def _namespace(namespace: str | None) -> str:
    return f", namespace: {namespace}" if namespace else ""


def _workload(namespace: str | None) -> str:
    text = runner("CronJob")
    return text.replace("namespace: kube-system}", "namespace: " + namespace + "}" if namespace else "}", 1)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _ds608(root: Path) -> list[tuple[str, str, str]]:
    return [(Path(f.file).name, f.severity, f.message) for f in lint_paths([str(root)]).findings if f.rule == "DS608"]


def test_the_outermost_kustomization_namespace_wins():
    documents = [
        ("base/kustomization.yaml", {"namespace": "inner", "resources": ["cronjob.yaml"]}),
        ("overlay/kustomization.yaml", {"namespace": "outer", "resources": ["../base", "extra.yaml"]}),
        ("other/kustomization.yaml", {"resources": ["../base/cronjob.yaml"]}),  # builds the file with no namespace
        ("bare/kustomization.yaml", {"resources": ["bare.yaml"]}),
    ]
    found = kustomized_namespaces(documents)
    assert found == {"base/cronjob.yaml": frozenset({"outer"}), "overlay/extra.yaml": frozenset({"outer"})}


def test_a_base_shared_by_two_overlays_lands_in_both_namespaces():
    documents = [
        ("base/kustomization.yaml", {"resources": ["cronjob.yaml"]}),
        ("prod/kustomization.yaml", {"namespace": "prod", "resources": ["../base"]}),
        ("staging/kustomization.yaml", {"namespace": "staging", "resources": ["../base"]}),
    ]
    assert kustomized_namespaces(documents) == {"base/cronjob.yaml": frozenset({"prod", "staging"})}


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # all in kube-system as written
        ({"all.yaml": _workload("kube-system") + "---\n" + ACCOUNT.format(namespace=_namespace("kube-system"))}, []),
        # the ServiceAccount in another namespace
        ({"all.yaml": _workload("kube-system") + "---\n" + ACCOUNT.format(namespace=_namespace("tools"))}, ["error"]),
        # the policy ConfigMap in another namespace
        ({"all.yaml": _workload("kube-system") + "---\n" + POLICY.format(namespace=_namespace("default"))}, ["error"]),
        # a kustomization namespace unifies what each file says
        (
            {
                "base/cronjob.yaml": _workload("default"),
                "base/account.yaml": ACCOUNT.format(namespace=_namespace("kube-system")),
                "base/kustomization.yaml": "resources: [cronjob.yaml, account.yaml]\n",
                "overlay/kustomization.yaml": "namespace: descheduler\nresources: [../base]\n",
            },
            [],
        ),
        # the workload's overlay moves it, the account's kustomization does not follow (one unit builds both)
        (
            {
                "kustomization.yaml": "resources: [app, rbac]\n",
                "app/cronjob.yaml": _workload(None),
                "app/kustomization.yaml": "namespace: ops\nresources: [cronjob.yaml]\n",
                "rbac/account.yaml": ACCOUNT.format(namespace=_namespace("kube-system")),
                "rbac/kustomization.yaml": "resources: [account.yaml]\n",
            },
            ["error"],
        ),
        # no namespace anywhere for the workload, one for its account
        ({"all.yaml": _workload(None) + "---\n" + ACCOUNT.format(namespace=_namespace("kube-system"))}, ["error"]),
        # what the repository does not hold is not judged
        ({"all.yaml": _workload("kube-system")}, []),
        # a base two overlays put in two namespaces, with its account: together in each
        (
            {
                "base/cronjob.yaml": _workload(None),
                "base/account.yaml": ACCOUNT.format(namespace=""),
                "base/kustomization.yaml": "resources: [cronjob.yaml, account.yaml]\n",
                "prod/kustomization.yaml": "namespace: prod\nresources: [../base]\n",
                "staging/kustomization.yaml": "namespace: staging\nresources: [../base]\n",
            },
            [],
        ),
        # a RoleBinding of the account without a namespace (upstream's kubernetes/base): a warning on it
        ({"all.yaml": _workload("kube-system") + "---\n" + BINDING.format(namespace="")}, ["warning"]),
        # ... unless a kustomization gives it one
        (
            {
                "all.yaml": _workload("kube-system") + "---\n" + BINDING.format(namespace=""),
                "kustomization.yaml": "namespace: kube-system\nresources: [all.yaml]\n",
            },
            [],
        ),
    ],
    ids=[
        "together", "account-elsewhere", "configmap-elsewhere", "kustomize-unifies", "overlay-moves-workload-only",
        "workload-without-namespace", "not-in-repository", "shared-base", "rolebinding-without-namespace",
        "rolebinding-kustomized",
    ],
)  # fmt: skip
def test_namespace_mismatch(tmp_path: Path, files: dict[str, str], expected: list[str]):
    _write(tmp_path, files)
    assert [severity for _, severity, _ in _ds608(tmp_path)] == expected


def test_the_finding_names_both_namespaces_and_points_at_the_service_account(tmp_path: Path):
    text = _workload("kube-system") + "---\n" + ACCOUNT.format(namespace=_namespace("tools"))
    _write(tmp_path, {"all.yaml": text})
    ((_, _, message),) = _ds608(tmp_path)
    finding = next(f for f in lint_paths([str(tmp_path)]).findings if f.rule == "DS608")
    assert "in kube-system" in message and "in tools" in message and "serviceaccount not found" in message
    assert text.splitlines()[finding.line - 1].strip() == "serviceAccountName: descheduler"

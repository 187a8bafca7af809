"""DS012: a DeschedulerPolicy applied as a Kubernetes resource."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.deployment.delivery import Delivery

ID = "DS012"
NAME = "policy-applied-as-resource"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DELIVERY})
SUMMARY = "DeschedulerPolicy applied as a Kubernetes resource"
RATIONALE = (
    "A DeschedulerPolicy is a file format, not a Kubernetes API: the descheduler reads it from the file its "
    "`--policy-config-file` flag names, which a ConfigMap mounted into its pod provides. No API server serves the "
    "kind `DeschedulerPolicy` of `descheduler/v1alpha2`, so a kustomization that lists the policy file among its "
    "`resources`, or a Flux Kustomization or Argo CD Application that applies the folder holding it as manifests, "
    "sends the cluster an object it refuses ('no matches for kind DeschedulerPolicy'): the apply "
    "fails, and the descheduler never reads the policy, however well it is written."
)
REMEDIATION = (
    "Generate a ConfigMap from the policy file instead (kustomize `configMapGenerator` with `files: [policy.yaml]`, "
    "or a ConfigMap whose `policy.yaml` key holds it) and mount it where `--policy-config-file` points."
)
_POLICY = (
    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: default\n  pluginConfig:\n"
    "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
)
# An example is one file, policy.yaml: its first document stands for the kustomization.yaml beside it.
_KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: kube-system\n"
EXAMPLES = {
    "pass": [
        (
            _KUSTOMIZATION + "configMapGenerator:\n- name: descheduler-policy\n  files: [policy.yaml]\n---\n" + _POLICY,
            None,
        )
    ],
    "fail": [(_KUSTOMIZATION + "resources: [policy.yaml]\n---\n" + _POLICY, None)],
}


def check(delivery: Delivery) -> Iterator[RepoHit]:
    for applied in delivery.applied:
        name = os.path.basename(applied.policy.file)
        yield RepoHit(
            applied.file,
            applied.line,
            applied.column,
            f"{applied.how}, so {applied.policy.object} is applied as a Kubernetes resource, but no API serves that "
            "kind (the descheduler reads it as the file --policy-config-file names): applying it fails and the "
            f"descheduler never reads it; generate a ConfigMap from it instead (configMapGenerator, files: [{name}]) "
            "and mount it for the descheduler",
            applied.policy.object,
        )

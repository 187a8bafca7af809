"""DS007: a descheduler/v1alpha2 policy run by a release that only reads v1alpha1."""

from __future__ import annotations

from collections.abc import Iterator

from desched import versions
from desched.linter.rules._base import V1ALPHA2, Context, DocumentKind, Hit

ID = "DS007"
NAME = "policy-newer-than-release"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
RELEASE_DEPENDENT = True
SUMMARY = "descheduler/v1alpha2 policy run by a release before v0.27"
RATIONALE = (
    "descheduler/v1alpha2 arrived in descheduler v0.27.0 (docs/policy-api.md#81-api-versions). An older "
    "descheduler knows only v1alpha1: it fails to decode the policy, exits at start-up and deschedules nothing "
    "(a CronJob's runs all fail, a Deployment crash-loops). The release is the one deployed with the policy: the "
    "image of the workload that mounts it, or the chart that renders it."
)
REMEDIATION = (
    "Upgrade the descheduler that runs this policy to v0.27 or later (v0.31 or later for upstream support), or "
    "keep a descheduler/v1alpha1 policy for the old release."
)
_CRONJOB = (
    "---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: descheduler, namespace: kube-system}\nspec:\n"
    "  schedule: '*/2 * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n"
    "          - name: descheduler\n            image: registry.k8s.io/descheduler/descheduler:TAG\n"
    "            args: [--policy-config-file, /policy-dir/policy.yaml]\n"
    "            volumeMounts: [{name: policy-volume, mountPath: /policy-dir}]\n"
    "          volumes: [{name: policy-volume, configMap: {name: descheduler-policy-configmap}}]\n"
)
_CONFIGMAP = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: descheduler-policy-configmap, namespace: kube-system}\n"
    "data:\n  policy.yaml: |\n    apiVersion: descheduler/v1alpha2\n    kind: DeschedulerPolicy\n    profiles: []\n"
)
EXAMPLES = {
    "pass": [_CONFIGMAP + _CRONJOB.replace("TAG", "v0.27.1")],
    "fail": [_CONFIGMAP + _CRONJOB.replace("TAG", "v0.21.0")],
}


def check(ctx: Context) -> Iterator[Hit]:
    if ctx.doc.api_version != V1ALPHA2 or ctx.release.minor >= versions.OLDEST:
        return
    yield Hit(
        f"descheduler {ctx.release.version} reads only descheduler/v1alpha1 ({V1ALPHA2} arrived in v0.27.0): it "
        "fails to decode this policy and exits at start-up, so nothing is descheduled",
        ("apiVersion",),
    )

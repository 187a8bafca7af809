"""DS502: a KubeDescheduler spec that the API server or the operator refuses."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._openshift import example, hits
from desched.openshift.validate import Category

ID = "DS502"
NAME = "openshift-invalid-spec"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.KUBEDESCHEDULER})
OPENSHIFT_CATEGORY = Category.INVALID
SUMMARY = "Invalid KubeDescheduler spec"
RATIONALE = (
    "Some mistakes are rejected by the CRD (unknown profile or enum value, a name other than `cluster`, an "
    "interval below 1); others only when the operator renders the policy: no profile, both thresholdPriority and "
    "thresholdPriorityClassName, both included and excluded namespaces, a protected namespace included, an unknown "
    "devActualUtilizationProfile, or both devLowNodeUtilizationThresholds and devDeviationThresholds under a "
    "KubeVirt profile. Then the operator keeps retrying and the previous configuration silently keeps running, or "
    "it scales the descheduler to 0."
)
REMEDIATION = "Fix the field as the message says; `desched render FILE` shows the policy once the CR is valid."
EXAMPLES = {
    "pass": [
        example(
            "  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [AffinityAndTaints]\n"
            "  profileCustomizations:\n    thresholdPriority: 1000\n    namespaces: {excluded: [batch]}\n"
        )
    ],
    "fail": [
        example("  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: []\n"),
        example("  mode: Automatic\n  deschedulingIntervalSeconds: 0\n  profiles: [AffinityAndTaints]\n"),
        example(
            "  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [AffinityAndTaints]\n"
            "  profileCustomizations:\n    namespaces: {included: [openshift-monitoring]}\n"
        ),
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    yield from hits(ctx, OPENSHIFT_CATEGORY)

"""DS501: a KubeDescheduler lists profiles that cannot be combined, or a profile twice."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._openshift import example, hits
from desched.openshift.validate import Category

ID = "DS501"
NAME = "openshift-profile-conflict"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.KUBEDESCHEDULER})
OPENSHIFT_CATEGORY = Category.CONFLICT
SUMMARY = "KubeDescheduler profiles that cannot be combined"
RATIONALE = (
    "The Kube Descheduler Operator forbids 16 profile pairs and duplicate profiles: at most one "
    "LowNodeUtilization profile (LifecycleAndUtilization, LongLifecycle, DevPreviewLongLifecycle, "
    "KubeVirtRelieveAndMigrate and its Dev variant), CompactAndScale with none of them nor with "
    "TopologyAndDuplicates, and only one of TopologyAndDuplicates and SoftTopologyAndDuplicates. Since KDO 5.3.3 "
    "the API server rejects such a CR; older operators accept it and scale the descheduler to 0."
)
REMEDIATION = "Keep one profile of each conflicting pair, and list every profile once."
EXAMPLES = {
    "pass": [example("  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [AffinityAndTaints]\n")],
    "fail": [
        example(
            "  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n"
            "  profiles: [TopologyAndDuplicates, SoftTopologyAndDuplicates]\n"
        ),
        example(
            "  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n"
            "  profiles: [LifecycleAndUtilization, LongLifecycle]\n"
        ),
        example(
            "  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n"
            "  profiles: [AffinityAndTaints, AffinityAndTaints]\n"
        ),
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    yield from hits(ctx, OPENSHIFT_CATEGORY)

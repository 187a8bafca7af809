"""DS503: a KubeDescheduler setting that is silently ignored, or allowed but misleading."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._openshift import example, hits
from desched.openshift.validate import Category

ID = "DS503"
NAME = "openshift-ignored-setting"
SEVERITY = "warning"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.KUBEDESCHEDULER})
OPENSHIFT_CATEGORY = Category.IGNORED
SUMMARY = "KubeDescheduler setting ignored or misleading"
RATIONALE = (
    "The operator never rejects a customisation that no enabled profile reads (podLifetime without "
    "LifecycleAndUtilization, devHighNodeUtilizationThresholds without CompactAndScale, devDeviationThresholds "
    "or the migration cooldowns without a KubeVirt profile, ...): it is silently ignored. Some allowed settings do "
    "not do what they seem to: namespaces.included is not applied to Low/HighNodeUtilization, a KubeVirt profile "
    "restricts every profile to KubeVirt nodes, LongLifecycle with DevPreviewLongLifecycle renders the same "
    "profile twice, eviction limits of 0 or below, deprecated profile names, a CR outside the operator namespace."
)
REMEDIATION = "Remove the ignored setting, or enable the profile that reads it."
EXAMPLES = {
    "pass": [
        example(
            "  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [LifecycleAndUtilization]\n"
            "  profileCustomizations:\n    podLifetime: 48h\n"
        )
    ],
    "fail": [
        example(
            "  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [LongLifecycle]\n"
            "  profileCustomizations:\n    podLifetime: 48h\n"
        ),
        example("  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [DevPreviewLongLifecycle]\n"),
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    yield from hits(ctx, OPENSHIFT_CATEGORY)

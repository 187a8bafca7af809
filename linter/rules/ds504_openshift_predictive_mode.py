"""DS504: a KubeDescheduler in Predictive mode (the default) evicts nothing."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._openshift import example, hits
from desched.openshift.validate import Category

ID = "DS504"
NAME = "openshift-predictive-mode"
SEVERITY = "info"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.KUBEDESCHEDULER})
OPENSHIFT_CATEGORY = Category.DRY_RUN
SUMMARY = "KubeDescheduler in Predictive mode evicts nothing"
RATIONALE = (
    "`spec.mode` defaults to `Predictive`, which runs the descheduler with `--dry-run=true`: it computes and logs "
    "evictions and exports metrics, but evicts no pod (and the KubeVirt soft-tainter applies no taint). A CR "
    "without `mode` therefore looks active and does nothing."
)
REMEDIATION = "Set `mode: Automatic` once the predicted evictions look right, or set `mode: Predictive` explicitly."
EXAMPLES = {
    "pass": [example("  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [AffinityAndTaints]\n")],
    "fail": [
        example("  deschedulingIntervalSeconds: 3600\n  profiles: [AffinityAndTaints]\n"),
        example("  mode: Predictive\n  deschedulingIntervalSeconds: 3600\n  profiles: [AffinityAndTaints]\n"),
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    yield from hits(ctx, OPENSHIFT_CATEGORY)

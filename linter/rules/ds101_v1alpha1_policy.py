"""DS101: a descheduler/v1alpha1 policy."""

from __future__ import annotations

from collections.abc import Iterator

from desched import versions
from desched.gitops.documents import HELM_VERSION_KEY, Shape
from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._shapes import chart_of

ID = "DS101"
NAME = "v1alpha1-policy"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
RELEASE_DEPENDENT = True
SUMMARY = "v1alpha1 policy (removed in descheduler v0.31)"
RATIONALE = (
    "Descheduler v0.31.0 removed `descheduler/v1alpha1`: from that release on, a v1alpha1 policy fails to decode "
    "and the descheduler crash-loops, or, through a chart that mixes the shapes, silently evicts nothing "
    "(upstream issues #1124, #1402, #1411). v0.30 still reads it with a deprecation warning. This is an error "
    "when the target release is v0.31 or later and a warning before."
)
REMEDIATION = (
    "Run `desched migrate --in-place FILE` to rewrite the policy as descheduler/v1alpha2. It writes for the "
    "release deployed with the policy (the image of the workload that mounts it, the chart's version), else output "
    "that every release from v0.31 to the newest accepts; `--target-version v0.NN` chooses the release."
)
EXAMPLES = {
    "pass": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"],
    "fail": [
        "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n  RemoveDuplicates:\n"
        "    enabled: true\n",
        (
            "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n  RemoveDuplicates:\n"
            "    enabled: true\n",
            "v0.30",
        ),
    ],
}


def _fix(ctx: Context) -> str:
    """How to convert this policy: ``desched migrate`` when it can, else what stops it."""
    from desched.chart.record import api_version_upgrade  # only a v1alpha1 policy pays for the chart's records

    chart = chart_of(ctx)
    upgrade = api_version_upgrade(chart)
    if chart is not None and upgrade is not None:
        return (
            f"chart {chart.version} hard-codes apiVersion {chart.default_api_version} in its ConfigMap template, so it "
            f"can only run v1alpha1: upgrade the chart to {upgrade} or later, then run `desched migrate --in-place "
            f"{ctx.doc.file}`, which writes profiles and sets {HELM_VERSION_KEY}: descheduler/v1alpha2"
        )
    if ctx.release.minor < versions.OLDEST:
        first = versions.render(versions.OLDEST)
        return (
            f"the descheduler deployed with it ({ctx.release.version}) predates descheduler/v1alpha2 (first in "
            f"{first}.0) and could not read a migrated policy: upgrade it to {first}.0 or later, then run "
            f"`desched migrate --in-place {ctx.doc.file}`"
        )
    if "profiles" in ctx.policy and ctx.doc.chart_default(("profiles",)) is None:
        where = f"{HELM_VERSION_KEY} in the values" if ctx.doc.shape == Shape.HELM else "apiVersion"
        return f"it already has profiles, the v1alpha2 shape: set {where}: descheduler/v1alpha2 by hand"
    from desched.migrate.convert import ConversionError, convert  # only v1alpha1 policies pay for the converter

    # what migrate converts: the policy as the chart runs it, but a shape only the chart's defaults bring (ignored)
    declared = {key: value for key, value in ctx.declared.items() if ctx.doc.chart_default((key,)) is None}
    try:
        convert(declared, target=ctx.target, strict=True)
    except ConversionError as exc:
        return f"`desched migrate` converts it to descheduler/v1alpha2 once this is fixed: {exc.message}"
    return (
        f"run `desched migrate --in-place {ctx.doc.file}` to convert it to descheduler/v1alpha2, written for the "
        "release deployed with it, else in a form every release from v0.31 on accepts; "
        "`--target-version v0.NN` writes for the release you choose"
    )


def check(ctx: Context) -> Iterator[Hit]:
    if not ctx.is_v1alpha1:
        return
    fix = _fix(ctx)
    removed = versions.render(versions.V1ALPHA1_REMOVED)
    if ctx.target >= versions.V1ALPHA1_REMOVED:
        yield Hit(
            f"descheduler/v1alpha1 was removed in descheduler {removed}.0: the target release "
            f"{versions.render(ctx.target)} fails to decode this policy; {fix}",
            ("apiVersion",),
        )
    else:
        yield Hit(
            f"descheduler/v1alpha1 is deprecated and removed in descheduler {removed}.0; {fix}",
            ("apiVersion",),
            severity="warning",
        )

"""DS613: chart values whose image.tag is another release than the pinned chart's."""

from __future__ import annotations

from collections.abc import Iterator

from desched.gitops.documents import CHART_VALUES
from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._shapes import chart_of
from desched.versions import release_version

ID = "DS613"
NAME = "chart-image-skew"
SEVERITY = "warning"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
SUMMARY = "Chart values run an image of another release than the pinned chart's"
RATIONALE = (
    "A chart version's templates, RBAC and default policy are written for the release it deploys (its "
    "`appVersion`). An `image.tag` of another minor runs them with a release they were not written for: chart "
    "0.34's default `podProtections` that an older image rejects, chart 0.35.0's RBAC without the PVC read a 0.35 "
    "image needs (upstream issues #1801, #1839, #1411)."
)
REMEDIATION = (
    "Pin the chart version that deploys the release you want, and drop image.tag (or keep them the same minor)."
)
_HEAD = (
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: d, namespace: kube-system}\n"
    "spec:\n  chart:\n    spec: {chart: descheduler, version: 0.34.0}\n  values:\n"
)
_POLICY = "    deschedulerPolicy:\n      profiles: []\n"
EXAMPLES = {
    "pass": [_HEAD + "    image: {tag: v0.34.0}\n" + _POLICY, _HEAD + _POLICY],
    "fail": [_HEAD + "    image: {tag: v0.31.0}\n" + _POLICY],
}


def check(ctx: Context) -> Iterator[Hit]:
    chart = chart_of(ctx)
    image = ctx.doc.envelope.get("image")
    tag = image.get("tag") if isinstance(image, dict) else None
    if chart is None or not isinstance(tag, str) or ctx.doc.extra.get("chart_version") is None:
        return  # only a pinned chart: a chart assumed from image.tag deploys that very release
    deploys, runs = release_version(chart.app_version), release_version(tag)
    if deploys is None or runs is None or deploys[0] == runs[0]:
        return
    yield Hit(
        f"image.tag {tag} runs release v0.{runs[0]}, but chart {chart.version} is written for v0.{deploys[0]} (its "
        "templates, RBAC and default policy); pin the chart version that deploys the release, or drop image.tag",
        (CHART_VALUES, "image", "tag"),
    )

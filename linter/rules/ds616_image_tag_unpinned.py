"""DS616: a descheduler image without a release tag."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import IMAGE, runner

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS616"
NAME = "image-tag-unpinned"
SEVERITY = "info"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
PATCH_READS = frozenset({"image"})  # what a remote base's patch must set to be judged
SUMMARY = "Descheduler image without a release tag"
RATIONALE = (
    "The policy's meaning depends on the release that reads it (fields added and removed, v1alpha1's removal in "
    "v0.31). An image without a tag, `latest`, or a tag that names no release leaves desched to assume the newest "
    "release for every release-dependent rule, and lets the cluster pull a release the policy was not written for."
)
REMEDIATION = "Pin the image to a release tag (v0.NN.P), optionally with its digest."
EXAMPLES = {
    "pass": [runner("CronJob"), runner("CronJob").replace(IMAGE, IMAGE + "@sha256:" + "0" * 64)],
    "fail": [runner("CronJob").replace(IMAGE, IMAGE.split(":")[0]), runner("CronJob").replace("v0.36.0", "latest")],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        if run.program != "descheduler":
            continue  # desched's image carries desched's version: the release it follows is --target-version
        if run.release is not None:
            continue
        tag = run.image_tag
        if tag is None and "@" in run.image:
            continue  # a digest pins one build; its release is unknown here, but it cannot drift
        shown = f"tag {tag}" if tag else "no tag"
        yield RepoHit(
            *run.where((*run.container, "image")),
            f"image {run.image} has {shown}: desched cannot tell the release that reads the policy and assumes the "
            "newest, and the cluster may pull another; pin a release tag (v0.NN.P)",
            run.label,
        )

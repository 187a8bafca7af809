"""DS701: part of a deploy unit desched cannot see or cannot place."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.gitops.units import UnitReport

ID = "DS701"
NAME = "unit-unchecked"
SEVERITY = "info"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.UNITS})
SUMMARY = "Part of a deploy unit is not checked, or its unit is a guess"
RATIONALE = (
    "desched judges the objects of each deploy unit as the cluster receives them: a kustomization's build with its "
    "patches applied, a Flux Kustomization's path, an Argo CD Application's source. A remote base (a URL or "
    "`github.com/...` reference) is not fetched, so the objects it brings are not judged, and the patches made to "
    "them only for what they set whole (the container's args, image or probe, the replicas, the priority class). "
    "Files no kustomization, Flux or Argo CD resource deploys are judged together, unless two folders define the "
    "same object: one cluster cannot receive it twice, so desched judges each folder as its own unit."
)
REMEDIATION = (
    "Vendor the remote base to have it checked; for folders per cluster, add their kustomizations or name the "
    "clusters with `clusters:` in .desched.yaml."
)
EXAMPLES = {
    "pass": [
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\n",
    ],
    "fail": [
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
        "- https://github.com/kubernetes-sigs/descheduler/kubernetes/deployment?ref=v0.31.0\n",
    ],
}


def check(report: UnitReport) -> Iterator[RepoHit]:
    for file, (line, column), reference in report.remote_bases():
        yield RepoHit(
            file,
            line,
            column,
            f"remote base {reference} is not checked: desched does not fetch it, so the objects it brings are not "
            "judged, and the patches made to them only for what they set",
            "",
        )
    for ambiguity in report.units.ambiguous:
        first, *others = ambiguity.files
        yield RepoHit(
            first,
            *ambiguity.position,
            f"desched cannot tell which deploy unit this file belongs to: {ambiguity.object} is also defined in "
            f"{', '.join(others)}, and nothing deploys these folders; each folder is judged as its own unit",
            ambiguity.object,
        )

"""DS405: an evictable workload that mounts PersistentVolumeClaims or local storage."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.linter.inventory import Repository
from desched.linter.rules._workload_examples import POLICY, deployment

ID = "DS405"
NAME = "evictable-storage"
SEVERITY = "warning"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.REPOSITORY})
ADMISSION = True  # the webhook applies it to workload and PDB admissions (active policy, cached objects)
SUMMARY = "Evictable workload with PVCs or local storage"
RATIONALE = (
    "Pods with PersistentVolumeClaims are evictable by default: only the PodsWithPVC protection (or the deprecated "
    "`ignorePvcPods`) keeps them in place, and moving them detaches and re-attaches volumes. Pods with emptyDir or "
    "hostPath volumes lose that data; they are protected by default, so this fires only when the protection is off."
)
REMEDIATION = "Enable the PodsWithPVC protection (podProtections.extraEnabled), or confirm the data can move."
EXAMPLES = {
    "pass": [POLICY + deployment("web", 2)],
    "fail": [POLICY + deployment("db", 2, "[{name: data, persistentVolumeClaim: {claimName: data}}]")],
}


def check(repo: Repository) -> Iterator[RepoHit]:
    from desched.workloads.scope import local_storage, pvc_claims

    for target in repo.targeted():
        workload = target.workload
        claims = [claim for claim, _, _ in pvc_claims(workload)]
        local = local_storage(workload)
        if not claims and local is None:
            continue
        what = f"PVCs {', '.join(claims)}" if claims else ""
        if local is not None:
            what = f"{what} and {local}" if what else local
        yield RepoHit(
            *workload.where(("metadata", "name")),
            f"mounts {what} and is evictable by {target.who()}",
            workload.label,
        )

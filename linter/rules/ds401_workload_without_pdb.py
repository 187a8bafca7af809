"""DS401: an evictable workload with more than one replica and no PodDisruptionBudget."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.linter.inventory import Repository
from desched.linter.rules._workload_examples import POLICY, deployment, pdb

ID = "DS401"
NAME = "workload-without-pdb"
SEVERITY = "warning"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.REPOSITORY})
ADMISSION = True  # the webhook applies it to workload and PDB admissions (active policy, cached objects)
SUMMARY = "Evictable workload with several replicas and no PodDisruptionBudget"
RATIONALE = (
    "The descheduler evicts through the Eviction API, which only PodDisruptionBudgets can hold back. A workload "
    "the policy may evict and that no PDB covers can lose all its replicas in one cycle (upstream issues #1712, "
    "#1064). Only workloads the policy can actually evict are reported: protections, namespaces, selectors and "
    "owner kinds are taken into account."
)
REMEDIATION = "Add a PodDisruptionBudget (for example maxUnavailable: 1) that selects the workload's pods."
EXAMPLES = {
    "pass": [POLICY + deployment("web", 3) + pdb("web", "web")],
    "fail": [POLICY + deployment("web", 3)],
}


def check(repo: Repository) -> Iterator[RepoHit]:
    for target in repo.targeted():
        workload = target.workload
        if workload.replicas is None or workload.replicas <= 1 or repo.pdbs(workload):
            continue
        yield RepoHit(
            *workload.where(("metadata", "name")),
            f"{workload.replicas} replicas evictable by {target.who()} and no PodDisruptionBudget covers them: "
            "one cycle may evict them all",
            workload.label,
        )

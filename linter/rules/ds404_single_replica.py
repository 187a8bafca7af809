"""DS404: an evictable workload with a single replica."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.linter.inventory import Repository
from desched.linter.rules._workload_examples import POLICY, deployment

ID = "DS404"
NAME = "single-replica"
SEVERITY = "warning"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.REPOSITORY})
ADMISSION = True  # the webhook applies it to workload and PDB admissions (active policy, cached objects)
SUMMARY = "Evictable single-replica workload"
RATIONALE = (
    "Every eviction of a one-replica workload is an outage until the replacement pod is ready, and a PDB cannot "
    "both protect it and let the descheduler move it. DefaultEvictor `minReplicas: 2` skips such workloads."
)
REMEDIATION = "Run at least two replicas with a PDB, or set DefaultEvictor minReplicas: 2 to leave it alone."
EXAMPLES = {
    "pass": [POLICY + deployment("web", 2)],
    "fail": [POLICY + deployment("web", 1)],
}


def check(repo: Repository) -> Iterator[RepoHit]:
    for target in repo.targeted():
        workload = target.workload
        if workload.replicas != 1:
            continue
        yield RepoHit(
            *workload.where(("metadata", "name")),
            f"single replica evictable by {target.who(by_profile=True)}: every eviction is an outage; add replicas "
            "and a PodDisruptionBudget, or set DefaultEvictor minReplicas: 2",
            workload.label,
        )

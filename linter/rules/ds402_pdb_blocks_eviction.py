"""DS402: a PodDisruptionBudget that allows no disruption of a workload the policy wants to evict."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.linter.inventory import Repository
from desched.linter.rules._workload_examples import POLICY, deployment, pdb

ID = "DS402"
NAME = "pdb-blocks-eviction"
SEVERITY = "warning"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.REPOSITORY})
ADMISSION = True  # the webhook applies it to workload and PDB admissions (active policy, cached objects)
SUMMARY = "PDB allowing zero disruptions for an evictable workload"
RATIONALE = (
    "With `maxUnavailable: 0`, `0%`, or `minAvailable` at or above the replica count (or `100%`), the Eviction API "
    "refuses every eviction with 429: the policy can never move the workload, silently, every cycle (upstream "
    "issues #1805, #1882). Percentages are rounded up as the disruption controller does."
)
REMEDIATION = "Allow at least one disruption (maxUnavailable: 1, or minAvailable below the replica count)."
EXAMPLES = {
    "pass": [POLICY + deployment("web", 3) + pdb("web", "web")],
    "fail": [POLICY + deployment("web", 3) + pdb("web", "web", "minAvailable: 100%")],
}


def check(repo: Repository) -> Iterator[RepoHit]:
    from desched.workloads import allowed_disruptions

    for target in repo.targeted():
        workload = target.workload
        for budget in repo.pdbs(workload):
            if allowed_disruptions(budget, workload.replicas) != 0:
                continue
            yield RepoHit(
                budget.file,
                budget.line,
                budget.column,
                f"allows no disruption of {workload.label} "
                f"({workload.replicas} replicas), which {target.who()} wants to evict: every eviction is refused",
                budget.label,
            )

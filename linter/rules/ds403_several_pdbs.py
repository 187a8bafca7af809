"""DS403: pods of an evictable workload matched by more than one PodDisruptionBudget."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.linter.inventory import Repository
from desched.linter.rules._workload_examples import POLICY, deployment, pdb

ID = "DS403"
NAME = "several-pdbs"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.REPOSITORY})
ADMISSION = True  # the webhook applies it to workload and PDB admissions (active policy, cached objects)
SUMMARY = "Pods matched by more than one PodDisruptionBudget"
RATIONALE = (
    "The Eviction API refuses to evict a pod that more than one PodDisruptionBudget selects (it answers 500: "
    '"This pod has more than one PodDisruptionBudget"). The descheduler retries every cycle and never succeeds.'
)
REMEDIATION = "Make exactly one PodDisruptionBudget select the workload's pods."
EXAMPLES = {
    "pass": [POLICY + deployment("web", 3) + pdb("web", "web")],
    "fail": [POLICY + deployment("web", 3) + pdb("web", "web") + pdb("all-web", "web")],
}


def check(repo: Repository) -> Iterator[RepoHit]:
    for target in repo.targeted():
        workload = target.workload
        budgets = repo.pdbs(workload)
        if len(budgets) < 2:
            continue
        names = ", ".join(f"{b.namespace}/{b.name}" for b in budgets)
        for budget in budgets:
            yield RepoHit(
                budget.file,
                budget.line,
                budget.column,
                f"{workload.label} is selected by several PodDisruptionBudgets "
                f"({names}): the Eviction API refuses to evict its pods, although {target.who()} targets them",
                budget.label,
            )

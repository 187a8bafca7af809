"""DS407: workloads the PodsWithoutPDB protection keeps out of reach."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.linter.inventory import Repository
from desched.linter.rules._workload_examples import deployment, pdb

ID = "DS407"
NAME = "never-rebalanced"
SEVERITY = "info"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.REPOSITORY})
SUMMARY = "PodsWithoutPDB protection on: workloads that will never be rebalanced"
RATIONALE = (
    "With the PodsWithoutPDB protection (or `ignorePodsWithoutPDB: true`) DefaultEvictor skips every pod that no "
    "PodDisruptionBudget selects. That is a safe default, but the workloads without a PDB are then never moved, "
    "whatever the plugins find; this lists them."
)
REMEDIATION = "Add a PodDisruptionBudget to the workloads that should be rebalanced."
_POLICY = (
    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: default\n  pluginConfig:\n"
    "  - name: DefaultEvictor\n    args: {podProtections: {extraEnabled: [PodsWithoutPDB]}}\n"
    "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
)
EXAMPLES = {
    "pass": [_POLICY + deployment("web", 3) + pdb("web", "web")],
    "fail": [_POLICY + deployment("web", 3)],
}


def check(repo: Repository) -> Iterator[RepoHit]:
    reported: set[str] = set()
    for analysis in repo.analyses():
        for verdict in analysis.verdicts:
            workload = verdict.workload
            if workload.key in reported or verdict.evictable:
                continue
            if not verdict.reasons or not all(r.startswith("protected: PodsWithoutPDB") for r in verdict.reasons):
                continue  # only workloads that nothing but the missing PDB keeps out of reach
            reported.add(workload.key)
            yield RepoHit(
                *workload.where(("metadata", "name")),
                f"no PodDisruptionBudget selects its pods, so {verdict.profile}/{verdict.plugin} of "
                f"{analysis.label()} never evicts them (PodsWithoutPDB protection)",
                workload.label,
            )

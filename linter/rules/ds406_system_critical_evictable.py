"""DS406: system-critical pods made evictable."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.linter.inventory import Repository, Targeted
from desched.linter.rules._workload_examples import deployment

ID = "DS406"
NAME = "system-critical-evictable"
SEVERITY = "warning"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.REPOSITORY})
ADMISSION = True  # the webhook applies it to workload and PDB admissions (active policy, cached objects)
SUMMARY = "System-critical pods made evictable"
RATIONALE = (
    "By default DefaultEvictor never evicts system-critical pods (priority 2000000000 and above). Turning the "
    "SystemCriticalPods protection off (or `evictSystemCriticalPods: true`) also turns off the priority threshold, "
    "and a plugin whose namespaces explicitly include kube-system reaches the control plane's add-ons. Merely not "
    "excluding kube-system is not flagged: the protection still holds there."
)
REMEDIATION = "Keep the SystemCriticalPods protection on, and do not include kube-system in plugin namespaces."
_OFF = (
    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: default\n  pluginConfig:\n"
    "  - name: DefaultEvictor\n    args: {podProtections: {defaultDisabled: [SystemCriticalPods]}}\n"
    "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
)
EXAMPLES = {
    "pass": [_OFF.replace("SystemCriticalPods", "PodsWithLocalStorage") + deployment("dns", 2, "", "x")],
    "fail": [_OFF + deployment("dns", 2, "", "system-cluster-critical", "kube-system")],
}


def _includes_kube_system(target: Targeted) -> bool:
    """Whether a plugin that may evict the workload names kube-system in its namespaces.include."""
    wanted = {tuple(label.split("/", 1)) for label in target.summary.targeted_by}
    analysis = target.analysis
    return any(
        scope.namespaces_key == "namespaces" and "kube-system" in scope.namespaces.include
        for profile in analysis.policy.profiles
        for name, scope in profile.pod_scopes(analysis.target)
        if (profile.name, name) in wanted
    )


def check(repo: Repository) -> Iterator[RepoHit]:
    from desched.workloads.eviction import SYSTEM_CRITICAL
    from desched.workloads.scope import pod_priority

    for target in repo.targeted():
        workload = target.workload
        priority, source = pod_priority(workload, repo.inventory)
        if priority is not None and priority >= SYSTEM_CRITICAL:
            why = f"system-critical (priority {priority} from {source})"
        elif workload.namespace == "kube-system" and _includes_kube_system(target):
            why = "in kube-system, which a plugin's namespaces.include names explicitly"
        else:
            continue
        yield RepoHit(
            *workload.where(("metadata", "name")),
            f"{why}, yet evictable by {target.who()}",
            workload.label,
        )

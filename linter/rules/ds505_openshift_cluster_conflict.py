"""DS505: the operator refuses this KubeDescheduler in the cluster described beside it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.gitops.documents import Shape
from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._openshift import example
from desched.openshift.environment import environment_problems

if TYPE_CHECKING:
    from desched.linter.inventory import Repository

ID = "DS505"
NAME = "openshift-cluster-conflict"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.REPOSITORY})
SUMMARY = "KubeDescheduler conflicts with the cluster it is meant for"
RATIONALE = (
    "Some refusals depend on the cluster, not on the CR: a `Scheduler/cluster` profile that fights the descheduler "
    "(HighNodeUtilization against the lifecycle profiles, LowNodeUtilization against CompactAndScale), a KubeVirt "
    "profile without KubeVirt nodes, Prometheus-based profiles without the monitoring Route or the namespace's "
    "monitoring label, a threshold PriorityClass that does not exist. The operator then scales the descheduler to "
    "0 or keeps retrying, and the previous configuration silently stays. The check uses the cluster objects linted "
    "in the same run (manifests in the repository, or a `kubectl get ... -A -o yaml` snapshot given as a path); a "
    "check whose objects are absent is skipped. PSI availability on the nodes cannot be seen in manifests."
)
REMEDIATION = (
    "Change the Scheduler profile or the descheduler profiles so they agree, deploy KubeVirt before its profiles, "
    "label the operator namespace openshift.io/cluster-monitoring=true, or create the PriorityClass."
)
_SCHEDULER = "---\napiVersion: config.openshift.io/v1\nkind: Scheduler\nmetadata:\n  name: cluster\nspec:\n"
EXAMPLES = {
    "pass": [
        example("  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [LongLifecycle]\n")
        + _SCHEDULER
        + "  profile: LowNodeUtilization\n",
    ],
    "fail": [
        example("  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [LongLifecycle]\n")
        + _SCHEDULER
        + "  profile: HighNodeUtilization\n",
        example("  mode: Automatic\n  deschedulingIntervalSeconds: 3600\n  profiles: [KubeVirtRelieveAndMigrate]\n")
        + "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: worker-0\n  labels: {zone: a}\n",
    ],
}


def check(repo: Repository) -> Iterator[RepoHit]:
    cluster = [obj for _, obj in repo.documents]
    for doc, _, _ in repo.policies:
        if doc.shape != Shape.KUBEDESCHEDULER:
            continue
        for problem in environment_problems(doc.root, cluster):
            line, column = doc.position(problem.path)
            yield RepoHit(doc.file, line, column, problem.message, doc.object)

"""DS610: the descheduler does not run as a critical pod."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS610"
NAME = "not-critical-priority"
SEVERITY = "warning"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
PATCH_READS = frozenset({"priority"})  # what a remote base's patch must set to be judged
SUMMARY = "Descheduler pod without a system-critical priority class"
RATIONALE = (
    "Upstream runs the descheduler as a critical pod (`priorityClassName: system-cluster-critical` in its "
    'manifests and chart; README "Run as a critical pod"): DefaultEvictor never evicts system-critical pods, so '
    "without it the descheduler may evict itself mid-cycle, and the kubelet evicts it first under node pressure."
)
REMEDIATION = "Set priorityClassName: system-cluster-critical (or system-node-critical) in the pod template."
EXAMPLES = {
    "pass": [runner("CronJob")],
    "fail": [runner("CronJob").replace("priorityClassName: system-cluster-critical", "priorityClassName: batch")],
}
_CRITICAL = ("system-cluster-critical", "system-node-critical")


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        pod = run.container[:-2]  # the pod spec holding the containers
        priority = run.pod.get("priorityClassName")
        if priority in _CRITICAL:
            continue
        named = f"priority class {priority}" if isinstance(priority, str) else "no priority class"
        yield RepoHit(
            *run.where_field((*pod, "priorityClassName"), instead=(*pod, "containers")),
            f"the descheduler runs with {named}: it may evict itself, and the kubelet evicts it first under "
            "pressure; set priorityClassName: system-cluster-critical",
            run.label,
        )

"""DS601: several descheduler replicas without --leader-elect."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import chart_install, runner

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS601"
NAME = "replicas-without-leader-election"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
PATCH_READS = frozenset({"replicas", "args"})  # what a remote base's patch must set to be judged
SUMMARY = "Several descheduler replicas without leader election"
RATIONALE = (
    "Each replica of a descheduler Deployment runs its own cycles: without `--leader-elect` they all evict at "
    "once, each counting only its own evictions against the limits (upstream issues #720, #773). From chart 0.24.0 "
    "the chart refuses to render `replicas` above 1 without `leaderElection`, so its install fails before anything "
    "runs; raw manifests and kustomize patches have no such guard."
)
REMEDIATION = "Set --leader-elect (with its Lease RBAC) or run a single replica."
EXAMPLES = {
    "pass": [
        runner("Deployment", "--descheduling-interval=5m", "--leader-elect", replicas=3),
        runner("Deployment", "--descheduling-interval=5m"),
        chart_install("0.36.0", "kind: Deployment\nreplicas: 2\nleaderElection:\n  enabled: true\n"),
    ],
    "fail": [
        runner("Deployment", "--descheduling-interval=5m", replicas=2),
        chart_install("0.36.0", "kind: Deployment\nreplicas: 2\n"),
    ],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        if run.replicas < 2 or run.enabled("leader-elect"):
            continue
        refused = dict(run.refused).get(("spec", "replicas"))
        if refused is not None:
            message = (
                f"{run.replicas} replicas without leader election: the chart refuses to render them ({refused}), "
                "so the install fails before anything runs; set leaderElection.enabled (the chart grants its Lease), "
                "or run one replica"
            )
        else:
            message = (
                f"{run.replicas} replicas without --leader-elect: every replica runs its own cycles and they evict "
                "at once; set --leader-elect (and grant its Lease), or run one replica"
            )
        yield RepoHit(*run.where(("spec", "replicas")), message, run.label)

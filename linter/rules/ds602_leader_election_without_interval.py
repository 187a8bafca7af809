"""DS602: --leader-elect without --descheduling-interval."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS602"
NAME = "leader-election-without-interval"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
PATCH_READS = frozenset({"args"})  # what a remote base's patch must set to be judged
SUMMARY = "Leader election without --descheduling-interval"
RATIONALE = (
    "The descheduler refuses leader election without a descheduling interval and exits at start-up "
    '(upstream `descheduler.go`: "leaderElection must be used with deschedulingInterval"): a CronJob, a Job or '
    "a Deployment without an interval that sets `--leader-elect` never deschedules."
)
REMEDIATION = "Set --descheduling-interval on a Deployment that elects a leader; a CronJob or Job needs no election."
EXAMPLES = {
    "pass": [
        runner("Deployment", "--descheduling-interval=5m", "--leader-elect", replicas=2),
        runner("CronJob", "--leader-elect=false"),
    ],
    "fail": [runner("CronJob", "--leader-elect"), runner("Deployment", "--leader-elect=true")],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        if not run.enabled("leader-elect") or run.duration("descheduling-interval") != 0:
            continue
        yield RepoHit(
            *run.at_flag("leader-elect"),
            '--leader-elect without --descheduling-interval: the descheduler exits at start-up ("leaderElection '
            'must be used with deschedulingInterval"); set --descheduling-interval on a Deployment, or drop '
            "--leader-elect from a CronJob or Job",
            run.label,
        )

"""DS604: a descheduler Deployment without --descheduling-interval."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS604"
NAME = "deployment-without-interval"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
PATCH_READS = frozenset({"args"})  # what a remote base's patch must set to be judged
SUMMARY = "Descheduler Deployment without --descheduling-interval"
RATIONALE = (
    "Without `--descheduling-interval` (or with 0) the descheduler runs one cycle and exits 0. A Deployment "
    "restarts it at once, and the kubelet backs the restarts off: the pod sits in CrashLoopBackOff and the "
    "descheduler runs at the back-off's pace, not yours (upstream `cmd/descheduler/app/server.go`; the chart "
    "refuses to render a Deployment without `deschedulingInterval`)."
)
REMEDIATION = (
    "Give the Deployment `--descheduling-interval` (for example `5m`), or run the descheduler as a CronJob, which "
    "runs one cycle per schedule."
)
EXAMPLES = {
    "pass": [runner("Deployment", "--descheduling-interval=5m"), runner("CronJob")],
    "fail": [runner("Deployment"), runner("Deployment", "--descheduling-interval", "0s")],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        if run.kind not in ("Deployment", "StatefulSet") or run.duration("descheduling-interval") != 0:
            continue
        yield RepoHit(
            *run.at_flag("descheduling-interval"),
            f"{run.kind} without --descheduling-interval: the descheduler runs one cycle and exits, and the "
            "restarts end in CrashLoopBackOff; set --descheduling-interval (for example 5m), or run it as a CronJob",
            run.label,
        )

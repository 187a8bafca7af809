"""DS611: the descheduler runs with --dry-run."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import chart_install, runner

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS611"
NAME = "dry-run-enabled"
SEVERITY = "info"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
PATCH_READS = frozenset({"args"})  # what a remote base's patch must set to be judged
SUMMARY = "Descheduler left in dry-run mode"
RATIONALE = (
    "With `--dry-run` the descheduler evicts nothing: it only logs what it would evict (and keeps a fake client's "
    "copy of the cluster, which doubles its memory; upstream PR #1580, #1737). Left on after a trial, the policy "
    "has no effect at all."
)
REMEDIATION = "Remove --dry-run (or set --dry-run=false) once the policy's evictions are the ones you want."
EXAMPLES = {
    "pass": [
        runner("CronJob", "--dry-run=false"),
        runner("CronJob"),
        chart_install("0.31.0", "cmdOptions:\n  dry-run: false\n"),  # renders --dry-run=false
    ],
    "fail": [
        runner("CronJob", "--dry-run"),
        runner("CronJob", "--dry-run=true"),
        chart_install("0.29.0", "cmdOptions:\n  dry-run: false\n"),  # charts 0.28.0 to 0.30.0 render a bare --dry-run
    ],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        if run.enabled("dry-run"):
            yield RepoHit(
                *run.at_flag("dry-run"),
                "--dry-run: the descheduler evicts nothing, it only logs what it would evict; remove it (or set "
                "--dry-run=false) once the policy is trusted",
                run.label,
            )

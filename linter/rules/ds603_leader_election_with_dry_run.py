"""DS603: --leader-elect with --dry-run."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS603"
NAME = "leader-election-with-dry-run"
SEVERITY = "warning"
SEVERITY_NOTE = "error with several replicas (they all run)"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
PATCH_READS = frozenset({"args", "replicas"})  # what a remote base's patch must set to be judged
SUMMARY = "Leader election is skipped in dry-run mode"
RATIONALE = (
    "In dry-run mode the descheduler skips leader election (upstream PR #853): every replica runs its own cycles "
    "and logs its own would-be evictions, so several replicas report more than one descheduler would do."
)
REMEDIATION = (
    "Run dry-run with a single replica, or turn --dry-run off once the policy is trusted. This is an error with "
    "several replicas (they all run), a warning with one."
)
EXAMPLES = {
    "pass": [runner("Deployment", "--descheduling-interval=5m", "--leader-elect", "--dry-run=false", replicas=2)],
    "fail": [
        runner("Deployment", "--descheduling-interval=5m", "--leader-elect", "--dry-run", replicas=2),
        runner("Deployment", "--descheduling-interval=5m", "--leader-elect", "--dry-run"),
    ],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        if not (run.enabled("leader-elect") and run.enabled("dry-run")):
            continue
        several = run.replicas > 1
        yield RepoHit(
            *run.at_flag("dry-run"),
            "--dry-run skips leader election"
            + (
                f": all {run.replicas} replicas run their own cycles side by side; run one replica while in dry-run"
                if several
                else ": --leader-elect has no effect while --dry-run is on"
            ),
            run.label,
            "error" if several else None,
        )

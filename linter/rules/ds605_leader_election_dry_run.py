"""DS605: --leader-elect with --dry-run."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from desched.deployment import DeschedulerRun
from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner

ID = "DS605"
NAME = "leader-election-dry-run"
SEVERITY = "warning"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
SUMMARY = "Leader election is skipped in dry-run mode"
RATIONALE = (
    "In dry-run mode the descheduler skips leader election (upstream PR #853): every replica runs its own cycles "
    "and logs its own would-be evictions, so several replicas report more than one descheduler would do."
)
REMEDIATION = "Run dry-run with a single replica, or turn --dry-run off once the policy is trusted."
EXAMPLES = {
    "pass": [runner("Deployment", "--descheduling-interval=5m", "--leader-elect", "--dry-run=false", replicas=2)],
    "fail": [runner("Deployment", "--descheduling-interval=5m", "--leader-elect", "--dry-run", replicas=2)],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        if not (run.enabled("leader-elect") and run.enabled("dry-run")) or run.replicas < 2:
            continue
        yield RepoHit(
            *run.at_flag("dry-run"),
            f"--dry-run skips leader election: all {run.replicas} replicas run their own cycles and report "
            "evictions side by side; run one replica while in dry-run",
            run.label,
        )

"""DS605: a descheduler CronJob or Job with --descheduling-interval."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner
from desched.tree import mapping_or_empty

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS605"
NAME = "job-with-interval"
SEVERITY = "error"
SEVERITY_NOTE = "warning where runs do not pile up (a Job, or a CronJob whose concurrencyPolicy is Forbid)"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
SUMMARY = "Descheduler CronJob or Job with --descheduling-interval"
RATIONALE = (
    "With a non-zero `--descheduling-interval` the descheduler loops forever (upstream `descheduler.go`, its run "
    "loop): a Job never completes, and a CronJob whose `concurrencyPolicy` allows it starts another never-ending "
    "descheduler on every tick, which then evict side by side."
)
REMEDIATION = (
    "Drop --descheduling-interval from a CronJob or Job (the schedule is the interval), or use a Deployment. This is "
    "an error where runs pile up (a CronJob whose concurrencyPolicy is not Forbid), a warning otherwise."
)
EXAMPLES = {
    "pass": [runner("CronJob"), runner("Job", "--descheduling-interval=0")],
    "fail": [
        runner("CronJob", "--descheduling-interval=5m", concurrency=None),
        runner("CronJob", "--descheduling-interval=5m"),
        runner("Job", "--descheduling-interval", "1h"),
    ],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        interval = run.duration("descheduling-interval")
        if run.kind not in ("CronJob", "Job") or not interval:
            continue
        concurrency = mapping_or_empty(run.document.get("spec")).get("concurrencyPolicy", "Allow")
        piles_up = run.kind == "CronJob" and concurrency != "Forbid"
        outcome = (
            "the CronJob starts one more never-ending descheduler on every tick"
            if piles_up
            else f"the {'Job never completes' if run.kind == 'Job' else 'CronJob never starts another run'}"
        )
        yield RepoHit(
            *run.at_flag("descheduling-interval"),
            f"{run.kind} with --descheduling-interval: the descheduler loops and never exits, so {outcome}; drop "
            "the flag (the schedule is the interval), or run the descheduler as a Deployment",
            run.label,
            None if piles_up else "warning",
        )

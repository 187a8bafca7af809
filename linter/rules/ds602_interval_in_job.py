"""DS602: a descheduler CronJob or Job with --descheduling-interval."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from desched.deployment import DeschedulerRun
from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner

ID = "DS602"
NAME = "interval-in-job"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
SUMMARY = "Descheduler CronJob or Job with --descheduling-interval"
RATIONALE = (
    "With a non-zero `--descheduling-interval` the descheduler loops forever (upstream `descheduler.go`, its run "
    "loop): a Job never completes, and a CronJob whose `concurrencyPolicy` allows it starts another never-ending "
    "descheduler on every tick, which then evict side by side."
)
REMEDIATION = "Drop --descheduling-interval from a CronJob or Job (the schedule is the interval), or use a Deployment."
EXAMPLES = {
    "pass": [runner("CronJob"), runner("Job", "--descheduling-interval=0")],
    "fail": [runner("CronJob", "--descheduling-interval=5m"), runner("Job", "--descheduling-interval", "1h")],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        interval = run.duration("descheduling-interval")
        if run.kind not in ("CronJob", "Job") or not interval:
            continue
        yield RepoHit(
            *run.at_flag("descheduling-interval"),
            f"{run.kind} with --descheduling-interval: the descheduler loops and never exits, so the "
            f"{'Job never completes' if run.kind == 'Job' else 'CronJob piles up never-ending runs'}; drop the flag "
            "(the schedule is the interval), or run the descheduler as a Deployment",
            run.label,
        )

"""DS606: a descheduler CronJob whose runs can overlap or hang forever."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner
from desched.tree import mapping_or_empty

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS606"
NAME = "cronjob-concurrency"
SEVERITY = "warning"
SEVERITY_NOTE = "info for Forbid without activeDeadlineSeconds"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
SUMMARY = "Descheduler CronJob whose runs overlap, or one hung run blocks all later ones"
RATIONALE = (
    "A CronJob's `concurrencyPolicy` defaults to `Allow`: a run still going when the next tick comes runs beside "
    "it, and two deschedulers evict side by side (`Replace` kills the run mid-cycle). `Forbid` avoids that, but "
    "without `activeDeadlineSeconds` one hung run blocks every later run (50 days in upstream issue #1638)."
)
REMEDIATION = (
    "Set `concurrencyPolicy: Forbid` and an `activeDeadlineSeconds` (in the job template's spec) shorter than the "
    "schedule's period."
)
EXAMPLES = {
    "pass": [runner("CronJob")],
    "fail": [
        runner("CronJob", concurrency=None),
        runner("CronJob", concurrency="Replace"),
        runner("CronJob", deadline=False),
    ],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        if run.kind != "CronJob":
            continue
        spec = mapping_or_empty(run.document.get("spec"))
        policy = spec.get("concurrencyPolicy", "Allow")
        job = mapping_or_empty(mapping_or_empty(spec.get("jobTemplate")).get("spec"))
        if policy != "Forbid":
            yield RepoHit(
                *run.where(("spec", "concurrencyPolicy")),
                f"concurrencyPolicy {policy}: a run still going at the next tick "
                f"{'is killed mid-cycle' if policy == 'Replace' else 'runs beside the next, and both evict'}; set "
                "concurrencyPolicy: Forbid with an activeDeadlineSeconds",
                run.label,
            )
        elif "activeDeadlineSeconds" not in job and (setting := run.setting(_DEADLINE)) is not None:
            yield RepoHit(
                *run.where(_DEADLINE if run.locator is not None else ("spec", "concurrencyPolicy")),
                "concurrencyPolicy Forbid without activeDeadlineSeconds in the job template: one hung run blocks "
                f"every later run; set {setting} below the schedule's period",
                run.label,
                "info",
            )


_DEADLINE = ("spec", "jobTemplate", "spec", "activeDeadlineSeconds")

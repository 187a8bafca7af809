"""DS306: node-utilization thresholds that can never trigger an eviction."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._thresholds import numbers

ID = "DS306"
NAME = "thresholds-never-trigger"
SEVERITY = "warning"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Thresholds that can never trigger"
RATIONALE = (
    "Some threshold settings pass validation and make the plugin a no-op: LowNodeUtilization with every target at "
    "100 or more (no node is ever overutilized) or every threshold at 0 (no node is ever underutilized), a "
    "deviation of 100 or more, HighNodeUtilization with every threshold at 0 or at 100."
)
REMEDIATION = "Choose thresholds strictly between 0 and 100 that real nodes can cross."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 100}}\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: HighNodeUtilization\n    args: {thresholds: {cpu: 0, memory: 0}}\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for entry in ctx.utilization_args:
        thresholds = numbers(entry.args.get("thresholds"))
        if not thresholds:
            continue
        values = thresholds.values()
        if entry.plugin == "HighNodeUtilization":
            if all(value == 0 for value in values):
                yield Hit(
                    "every HighNodeUtilization threshold is 0: no node is ever underutilized", entry.path("thresholds")
                )
            elif all(value == 100 for value in values):
                yield Hit(
                    "every HighNodeUtilization threshold is 100: no node is left to pack pods onto",
                    entry.path("thresholds"),
                )
            continue
        targets = numbers(entry.args.get("targetThresholds"))
        if entry.deviation:
            if all(value >= 100 for value in values):
                yield Hit(
                    "every deviation threshold is 100 or more: no node is ever below the mean by that much",
                    entry.path("thresholds"),
                )
            if targets and all(value >= 100 for value in targets.values()):
                yield Hit(
                    "every deviation target is 100 or more: no node is ever above the mean by that much",
                    entry.path("targetThresholds"),
                )
            continue
        if all(value == 0 for value in values):
            yield Hit(
                "every threshold is 0: no node is ever underutilized, so nothing is evicted", entry.path("thresholds")
            )
        if targets and all(value >= 100 for value in targets.values()):
            yield Hit(
                "every target is 100 or more: no node is ever overutilized, so nothing is evicted",
                entry.path("targetThresholds"),
            )

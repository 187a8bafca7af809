"""DS303: a LowNodeUtilization threshold greater than its target (non-deviation mode)."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._thresholds import numbers

ID = "DS303"
NAME = "threshold-above-target"
SEVERITY = "error"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
VALIDATION_CODES = frozenset({"order"})  # the upstream validation errors this rule reports
SUMMARY = "thresholds[r] greater than targetThresholds[r]"
RATIONALE = (
    "A node is underutilized below `thresholds` and overutilized above `targetThresholds`. With a threshold above "
    "its target, a node could be both; upstream rejects it at load time unless `useDeviationThresholds` is set."
)
REMEDIATION = "Make each threshold lower than (or equal to) the matching target."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {thresholds: {cpu: 60}, targetThresholds: {cpu: 50}}\n"
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for entry in ctx.utilization_args:
        if entry.plugin != "LowNodeUtilization" or entry.deviation:
            continue
        targets = numbers(entry.args.get("targetThresholds"))
        for resource, value in numbers(entry.args.get("thresholds")).items():
            target = targets.get(resource)
            if target is not None and value > target:
                yield Hit(
                    f"in profile {entry.profile}: thresholds' {resource} percentage is greater than "
                    f"targetThresholds' ({value:g} > {target:g})",
                    entry.path("thresholds", resource),
                )

"""DS305: LowNodeUtilization band between threshold and target narrower than 10 points."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._thresholds import numbers

ID = "DS305"
NAME = "narrow-threshold-band"
SEVERITY = "warning"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Threshold and target closer than 10 points (eviction ping-pong)"
RATIONALE = (
    "Pods evicted from an overutilized node land on an underutilized one, which then crosses the target and "
    "sheds them again. With less than about 10 points between `thresholds` and `targetThresholds` (or equal "
    "values) the same pods bounce between nodes every cycle. In deviation mode the band is the sum of both "
    "deviations."
)
REMEDIATION = "Keep at least 10 percentage points between each threshold and its target (option min-band)."
OPTIONS = {"min-band": 10}
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {thresholds: {cpu: 45}, targetThresholds: {cpu: 50}}\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {useDeviationThresholds: true, thresholds: {cpu: 3},"
        " targetThresholds: {cpu: 4}}\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    minimum = ctx.options(ID, OPTIONS)["min-band"]
    for entry in ctx.utilization_args:
        if entry.plugin != "LowNodeUtilization":
            continue
        targets = numbers(entry.args.get("targetThresholds"))
        for resource, low in numbers(entry.args.get("thresholds")).items():
            high = targets.get(resource)
            if high is None or not (0 <= low <= 100 and 0 <= high <= 100):
                continue
            band = low + high if entry.deviation else high - low
            if 0 <= band < minimum:
                kind = "deviation band" if entry.deviation else "band"
                yield Hit(
                    f"{resource}: {kind} between threshold {low:g} and target {high:g} is {band:g} points "
                    f"(< {minimum}): pods will bounce between nodes",
                    entry.path("targetThresholds", resource),
                )

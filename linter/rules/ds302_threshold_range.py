"""DS302: a node-utilization threshold outside [0, 100]."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._thresholds import numbers

ID = "DS302"
NAME = "threshold-range"
SEVERITY = "error"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
VALIDATION_CODES = frozenset({"range"})  # the upstream validation errors this rule reports
SUMMARY = "Threshold outside [0, 100]"
RATIONALE = (
    "Thresholds are percentages of a node's allocatable resources. Upstream rejects any value outside [0, 100] "
    "at load time, but names only one of them (the first its random map order reaches); this rule names all."
)
REMEDIATION = "Use percentages between 0 and 100."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: HighNodeUtilization\n    args: {thresholds: {cpu: 20}}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 150}}\n"
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for entry in ctx.utilization_args:
        maps = ("thresholds", "targetThresholds") if entry.plugin == "LowNodeUtilization" else ("thresholds",)
        for key in maps:
            prefix = f"{key} config is not valid: " if entry.plugin == "LowNodeUtilization" else ""
            for resource, value in numbers(entry.args.get(key)).items():
                if not 0 <= value <= 100:
                    yield Hit(
                        f"in profile {entry.profile}: {prefix}{resource} threshold not in [0, 100] range "
                        f"({entry.plugin} {key}.{resource} is {value:g})",
                        entry.path(key, resource),
                    )

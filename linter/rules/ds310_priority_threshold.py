"""DS310: DefaultEvictor priority threshold with both value and name, or a value above 2000000000."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.validation.vocab import SYSTEM_CRITICAL_PRIORITY as SYSTEM_CRITICAL

ID = "DS310"
NAME = "priority-threshold"
SEVERITY = "error"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
VALIDATION_CODES = frozenset({"priority"})  # the upstream validation errors this rule reports
SUMMARY = "Priority threshold misconfigured"
RATIONALE = (
    "`priorityThreshold` takes a value or a PriorityClass name, not both: upstream rejects both at load time. A "
    "value above 2000000000 (system-critical) fails when the defaults are applied, so the descheduler never "
    "starts."
)
REMEDIATION = "Set either priorityThreshold.value (at most 2000000000) or priorityThreshold.name."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: DefaultEvictor\n    args: {priorityThreshold: {value: 10000}}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: DefaultEvictor\n    args: {priorityThreshold: {value: 10000, name: high}}\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: DefaultEvictor\n    args: {priorityThreshold: {value: 2000000001}}\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    if not ctx.is_v1alpha2:
        return
    for profile in ctx.model.profiles:
        for config in profile.configs:
            threshold = config.raw_args.get("priorityThreshold") if config.name == "DefaultEvictor" else None
            if not isinstance(threshold, dict):
                continue
            value, class_name = threshold.get("value"), threshold.get("name")
            path = (*config.args_path, "priorityThreshold")
            if value is not None and isinstance(class_name, str) and class_name:
                yield Hit(
                    f"in profile {profile.name}: priority threshold misconfigured, only one of "
                    "priorityThreshold fields can be set",
                    path,
                )
            if isinstance(value, int) and not isinstance(value, bool) and value > SYSTEM_CRITICAL:
                yield Hit(f"priority threshold can't be greater than {SYSTEM_CRITICAL} (got {value})", (*path, "value"))

"""DS304: thresholds or targetThresholds missing, empty, or naming different resources."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS304"
NAME = "threshold-resources"
SEVERITY = "error"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
VALIDATION_CODES = frozenset({"thresholds"})  # the upstream validation errors this rule reports
SUMMARY = "thresholds/targetThresholds missing, empty, or naming different resources"
RATIONALE = (
    "The node-utilization plugins need `thresholds` (and LowNodeUtilization `targetThresholds`) with at least "
    "one resource, and LowNodeUtilization needs the same resources in both maps. Upstream rejects anything else "
    "at load time."
)
REMEDIATION = "List the same resources (cpu, memory, pods, ...) in thresholds and targetThresholds."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args: {thresholds: {cpu: 20}, targetThresholds: {memory: 50}}\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: HighNodeUtilization\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for entry in ctx.utilization_args:
        low = entry.plugin == "LowNodeUtilization"
        maps = ("thresholds", "targetThresholds") if low else ("thresholds",)
        present = {}
        for key in maps:
            value = entry.args.get(key)
            if value is not None and not isinstance(value, dict):
                continue  # DS004
            if not value:
                prefix = f"{key} config is not valid: " if low else ""
                where = entry.path(key) if key in entry.args else entry.base
                yield Hit(f"in profile {entry.profile}: {prefix}no resource threshold is configured", where)
            else:
                present[key] = set(value)
        if low and len(present) == 2 and present["thresholds"] != present["targetThresholds"]:
            only = sorted(present["thresholds"] ^ present["targetThresholds"])
            yield Hit(
                f"in profile {entry.profile}: thresholds and targetThresholds configured different resources "
                f"({', '.join(only)} in only one of them)",
                entry.path("targetThresholds"),
            )

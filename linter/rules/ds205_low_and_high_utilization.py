"""DS205: LowNodeUtilization and HighNodeUtilization both enabled in one policy."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS205"
NAME = "low-and-high-utilization"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "LowNodeUtilization and HighNodeUtilization both enabled"
RATIONALE = (
    "LowNodeUtilization spreads pods away from busy nodes; HighNodeUtilization packs them onto busy nodes so that "
    "empty ones can be scaled down. Enabled together they undo each other and evict pods in a loop (upstream "
    "issue #755)."
)
REMEDIATION = "Enable only one of the two node-utilization plugins in the whole policy."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: HighNodeUtilization\n    args: {thresholds: {cpu: 20}}\n  plugins:\n    balance:\n"
        "      enabled: [HighNodeUtilization]\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: HighNodeUtilization\n    args: {thresholds: {cpu: 20}}\n  - name: LowNodeUtilization\n"
        "    args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}\n  plugins:\n    balance:\n"
        "      enabled: [HighNodeUtilization, LowNodeUtilization]\n"
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    evicting = [(profile.name, ref) for profile in ctx.model.profiles for ref, _ in profile.evicting()]
    low = [profile for profile, ref in evicting if ref.name == "LowNodeUtilization"]
    high = [ref for _, ref in evicting if ref.name == "HighNodeUtilization"]
    if low and high:
        for ref in high:
            yield Hit(
                f'HighNodeUtilization and LowNodeUtilization (profile "{low[0]}") are both enabled: they undo each '
                "other's evictions",
                ref.path,
            )

"""DS301: any other upstream validation or constructor failure of plugin args or policy-level settings."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS301"
NAME = "args-validation"
SEVERITY = "error"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Upstream args validation failure"
RATIONALE = (
    "These are the checks upstream runs when it loads the policy (namespaces include and exclude together, label "
    "selectors, restart thresholds, states, constraints, a missing nodeAffinityType, both taint lists, "
    "DefaultEvictor pod protections, metrics providers, PodLifeTime criteria) or when it builds the plugins at "
    "start-up (selectors that do not parse). Any of them stops the descheduler; the message is upstream's."
)
REMEDIATION = "Fix the argument named in the message; docs/rules.md lists each plugin's valid values."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemovePodsHavingTooManyRestarts\n    args: {podRestartThreshold: 10}\n  plugins:\n"
        "    deschedule:\n      enabled: [RemovePodsHavingTooManyRestarts]\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemovePodsHavingTooManyRestarts\n    args: {podRestartThreshold: 0}\n  plugins:\n"
        "    deschedule:\n      enabled: [RemovePodsHavingTooManyRestarts]\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n    args:\n      namespaces: {include: [a], exclude: [b]}\n  plugins:\n"
        "    balance:\n      enabled: [RemoveDuplicates]\n",
    ],
}

VALIDATION_CODES = frozenset({"other"})  # every other code is reported by the rule that declares it


def check(ctx: Context) -> Iterator[Hit]:
    for error in ctx.arg_errors:
        if error.code in VALIDATION_CODES:
            yield Hit(error.message, error.path)

"""DS308: ``includedTaints: []``, which matches no taint at all."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS308"
NAME = "empty-included-taints"
SEVERITY = "warning"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "includedTaints: [] matches no taint"
RATIONALE = (
    'RemovePodsViolatingNodeTaints treats a present-but-empty `includedTaints` list as "consider only these '
    'taints" with no taint in it: the plugin never evicts anything. Omitting the key considers every taint.'
)
REMEDIATION = "Remove `includedTaints`, or list the taints (key or key=value) to consider."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemovePodsViolatingNodeTaints\n    args: {includedTaints: [dedicated]}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemovePodsViolatingNodeTaints\n    args: {includedTaints: []}\n"
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    if not ctx.is_v1alpha2:
        return
    for profile in ctx.model.profiles:
        for config in profile.configs:
            if config.name == "RemovePodsViolatingNodeTaints" and config.raw_args.get("includedTaints") == []:
                yield Hit(
                    "includedTaints is an empty list: it matches no taint, so this plugin never evicts anything",
                    (*config.args_path, "includedTaints"),
                )

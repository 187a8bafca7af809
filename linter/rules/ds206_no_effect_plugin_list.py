"""DS206: entries under presort, sort or any disabled list, which upstream never reads."""

from __future__ import annotations

from collections.abc import Iterator

from desched.api.spec import EXTENSION_POINTS
from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS206"
NAME = "no-effect-plugin-list"
SEVERITY = "warning"
SCOPE = "profile"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Entries under presort, sort or disabled have no effect"
RATIONALE = (
    "Upstream decodes `presort` and `sort` and never uses them, and no code reads any `disabled` list: "
    "DefaultEvictor cannot be disabled and nothing else is enabled by default. Entries there suggest an effect "
    "that does not exist."
)
REMEDIATION = "Remove the entries; to stop a plugin, remove it from its `enabled` list."
EXAMPLES = {
    "pass": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins: {}\n"],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n"
        "    filter:\n      disabled: [DefaultEvictor]\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n"
        "    sort:\n      enabled: [RemoveDuplicates]\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for index, profile in ctx.profiles():
        plugins = profile.get("plugins")
        if not isinstance(plugins, dict):
            continue
        for point in EXTENSION_POINTS:
            plugin_set = plugins.get(point)
            if not isinstance(plugin_set, dict):
                continue
            for list_name in ("enabled", "disabled"):
                names = plugin_set.get(list_name)
                if not isinstance(names, list) or not names:
                    continue
                if list_name == "enabled" and point not in ("presort", "sort"):
                    continue
                if list_name == "disabled" and "DefaultEvictor" in names:
                    why = "DefaultEvictor cannot be disabled; upstream never reads `disabled` lists"
                elif list_name == "disabled":
                    why = "upstream never reads `disabled` lists"
                else:
                    why = f"upstream never runs the {point} extension point"
                yield Hit(f"{point}.{list_name} has no effect: {why}", ("profiles", index, "plugins", point, list_name))

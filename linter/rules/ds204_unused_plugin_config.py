"""DS204: pluginConfig for a plugin enabled nowhere in its profile, or a duplicated entry."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.policy.model import ACTIVE_POINTS

ID = "DS204"
NAME = "unused-plugin-config"
SEVERITY = "warning"
SCOPE = "profile"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "pluginConfig for a plugin enabled nowhere in its profile, or duplicated"
RATIONALE = (
    "Upstream validates a `pluginConfig` entry for a plugin that is not enabled and then never uses it: the "
    "policy looks like it does something it does not. When two entries share a name, only the first is used and "
    "the second is silently ignored."
)
REMEDIATION = "Enable the plugin under the right extension point, or remove the entry; keep one entry per plugin."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: DefaultEvictor\n  - name: RemoveDuplicates\n  plugins:\n    balance:\n"
        "      enabled: [RemoveDuplicates]\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n  - name: RemoveDuplicates\n    args: {excludeOwnerKinds: [Job]}\n"
        "  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for profile in ctx.model.profiles:
        enabled = {ref.name for ref in profile.enabled(*ACTIVE_POINTS)}
        first: dict[str, int | str] = {}
        for config in profile.configs:
            name, entry, path = config.name, config.path[-1], (*config.path, "name")
            if name in first:
                yield Hit(
                    f"duplicate pluginConfig entry for {name}: upstream uses entry {first[name]} and silently "
                    "ignores this one",
                    path,
                )
                continue
            first[name] = entry
            if name != "DefaultEvictor" and name in ctx.plugins and name not in enabled:
                yield Hit(
                    f'pluginConfig for {name}, which is enabled nowhere in profile "{profile.name}": it has no effect',
                    path,
                )

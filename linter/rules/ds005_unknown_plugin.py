"""DS005: a plugin name the descheduler build that runs the policy does not register, in pluginConfig or any plugins
list; a plugin only another build registers (OpenShift's) is named as such."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from desched.api.spec import EXTENSION_POINTS
from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.plugins import DISTRIBUTIONS, elsewhere
from desched.policy.structure import closest

ID = "DS005"
NAME = "unknown-plugin"
SEVERITY = "error"
SCOPE = "profile"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.RENDERED})
SUMMARY = "Unknown plugin name"
RATIONALE = (
    "Plugin names are case-sensitive and must be registered. An unknown name in `pluginConfig` fails validation "
    "(`plugin <n> in pluginConfig not registered`); an unknown name in an enabled list fails when the "
    "descheduler builds its profiles (`configures <point> extension point of non-existing plugins`). Builds differ: "
    "OpenShift's registers KubevirtMigrationAware, which upstream's does not."
)
REMEDIATION = (
    "Use one of the registered plugin names listed in docs/rules.md, spelled exactly. When OpenShift's descheduler "
    "build runs the policy, lint it with `--distribution openshift` (or `distribution: openshift` in .desched.yaml); "
    "the operator's own ConfigMap and KubeDescheduler resources are recognised without it."
)
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 86400}\n  plugins:\n    deschedule:\n"
        "      enabled: [PodLifeTime]\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: PodLifetime\n    args: {maxPodLifeTimeSeconds: 86400}\n  plugins:\n    deschedule:\n"
        "      enabled: [PodLifetime]\n"
    ],
}

_NAMES = {name: sorted(build.plugins) for name, build in DISTRIBUTIONS.items()}


def _hint(name: str, ctx: Context) -> str:
    """Why ``name`` is unknown: another build registers it, or it looks like a registered name."""
    other = elsewhere(name)
    if other is not None:
        return (
            f"; {name} exists only in {other.title}: lint with --distribution {other.name} if that build runs "
            "this policy"
        )
    suggestion = closest(name, _NAMES[ctx.distribution])
    return f'; did you mean "{suggestion}"?' if suggestion else ""


def _items(value: Any) -> Iterator[tuple[int, Any]]:
    return enumerate(value) if isinstance(value, list) else iter(())


def check(ctx: Context) -> Iterator[Hit]:
    for index, profile in ctx.profiles():
        label = profile.get("name") if isinstance(profile.get("name"), str) else ""
        for entry, config in _items(profile.get("pluginConfig")):
            name = config.get("name") if isinstance(config, dict) else None
            if isinstance(name, str) and name not in ctx.plugins:
                yield Hit(
                    f"in profile {label}: plugin {name} in pluginConfig not registered{_hint(name, ctx)}",
                    ("profiles", index, "pluginConfig", entry, "name"),
                )
        plugins = profile.get("plugins")
        if not isinstance(plugins, dict):
            continue
        for point in EXTENSION_POINTS:
            plugin_set = plugins.get(point)
            for list_name in ("enabled", "disabled"):
                names = plugin_set.get(list_name) if isinstance(plugin_set, dict) else None
                for position, name in _items(names):
                    if not isinstance(name, str) or name in ctx.plugins:
                        continue
                    where = ("profiles", index, "plugins", point, list_name, position)
                    if list_name == "enabled":
                        message = f'profile "{label}" configures {point} extension point of non-existing plugins: '
                        yield Hit(f"{message}[{name}]{_hint(name, ctx)}", where)
                    else:
                        yield Hit(f"unknown plugin {name} in {point}.disabled{_hint(name, ctx)}", where)

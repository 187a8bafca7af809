"""DS307: an enum value that upstream accepts at load and only logs about at run time."""

from __future__ import annotations

from collections.abc import Iterator

from desched import versions
from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.policy.structure import closest
from desched.tree import list_or_empty
from desched.validation import vocab

ID = "DS307"
NAME = "runtime-only-enum"
SEVERITY = "error"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Enum value upstream accepts at load and ignores at run time"
RATIONALE = (
    "Upstream does not validate the values of RemovePodsViolatingNodeAffinity `nodeAffinityType`, of "
    "`metricsProviders[].source` or of LowNodeUtilization `metricsUtilization.source`. A typo loads fine; every "
    "cycle then logs an error and the plugin, or the metrics source, does nothing. Before v0.28.0 the plugin knows "
    "only `requiredDuringSchedulingIgnoredDuringExecution`: the preferred type is such a value there."
)
REMEDIATION = "Use one of the values listed in the message."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemovePodsViolatingNodeAffinity\n"
        "    args: {nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemovePodsViolatingNodeAffinity\n"
        "    args: {nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecutions]}\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmetricsProviders:\n- source: Prometeus\n"
        "profiles: []\n",
    ],
}

NODE_AFFINITY_TYPES = list(vocab.NODE_AFFINITY_TYPES)
PREFERRED_FROM = 28  # RemovePodsViolatingNodeAffinity acts on the preferred type from v0.28.0 (upstream 3170404)
METRICS_SOURCES = list(vocab.METRICS_SOURCES)


def _bad(value: object, allowed: list[str], what: str) -> str | None:
    if not isinstance(value, str) or value in allowed:
        return None
    suggestion = closest(value, allowed)
    hint = f'; did you mean "{suggestion}"?' if suggestion else ""
    return f'{what} "{value}" is not one of {", ".join(allowed)}: upstream ignores it at run time{hint}'


def _affinity_type(value: object, target: int) -> str | None:
    """What is wrong with a ``nodeAffinityType`` value for descheduler ``target`` (a minor), if anything."""
    if value == NODE_AFFINITY_TYPES[1] and target < PREFERRED_FROM:
        return (
            f'nodeAffinityType "{value}" arrived in v0.28.0: descheduler {versions.render(target)} logs it as an '
            "invalid type at run time and does nothing for it"
        )
    return _bad(value, NODE_AFFINITY_TYPES, "nodeAffinityType")


def check(ctx: Context) -> Iterator[Hit]:
    if not ctx.is_v1alpha2:
        return
    providers = ctx.policy.get("metricsProviders")
    for index, provider in enumerate(list_or_empty(providers)):
        if isinstance(provider, dict):
            message = _bad(provider.get("source"), METRICS_SOURCES, "metrics provider source")
            if message:
                yield Hit(message, ("metricsProviders", index, "source"))
    for profile in ctx.model.profiles:
        for config in profile.configs:
            name, args = config.name, config.raw_args
            if name == "RemovePodsViolatingNodeAffinity" and isinstance(args.get("nodeAffinityType"), list):
                for position, value in enumerate(args["nodeAffinityType"]):
                    message = _affinity_type(value, ctx.target)
                    if message:
                        yield Hit(message, (*config.args_path, "nodeAffinityType", position))
            metrics = args.get("metricsUtilization") if name == "LowNodeUtilization" else None
            if isinstance(metrics, dict) and metrics.get("source") not in (None, ""):
                message = _bad(metrics.get("source"), METRICS_SOURCES, "metricsUtilization source")
                if message:
                    yield Hit(message, (*config.args_path, "metricsUtilization", "source"))
